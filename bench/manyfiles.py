"""The many-files step: a tree of 100,000 files, for issue 15's per-file targets — an unchanged
``kenning index`` within 3 s, and a save findable within 500 ms — which the million-chunk tree
(~25,000 larger files) cannot show.

The tree is built as the scale step's is (``bench.scale.build_tree``: replicas scanned by kenning
itself, vectors reused from the base index and perturbed), from a base of the corpus's smallest
``.py`` files (at most ``SMALL_CHUNKS`` chunks each) replicated into ``copy<N>/`` directories
until ``files`` files, plus the file the didSave step edits (the one closest to 1,000 lines). A
monorepo's files are larger; what is measured here is what each file costs when nothing in it
changed. Then, on the same tree, twice — as a plain directory (kenning walks it, applying the
ignore rules) and as a git repository (kenning asks ``git ls-files``; every file staged, the
store excluded in ``.git/info/exclude`` so the tree itself is unchanged):

- ``kenning index`` on the unchanged tree, as a user types it;
- an unchanged server start → first lexical answer and ready;
- didSave → findable (lexical, then semantic) for a function appended to that file.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import seeded
from bench.lspclient import BenchServer
from bench.scale import build_tree
from bench.server import START_TIMEOUT, cli_reindex, did_save, pick_file, server_restarts

#: The base's files: the corpus's ``.py`` files of at most this many chunks.
SMALL_CHUNKS = 3


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def write_base(corpus: Path, base_db: Path, dest: Path) -> tuple[dict[str, int], str]:
    """The base in ``dest``: the corpus's small ``.py`` files and the file a save edits.
    Returns the small files' chunk counts (the files to replicate) and the edited file."""
    counts = seeded.chunk_counts(base_db)
    py = {p: n for p, n in counts.items() if p.endswith(".py")}
    small = {p: n for p, n in py.items() if n <= SMALL_CHUNKS}
    if not small:  # a corpus of large files only (a subset): its ten smallest
        small = {p: py[p] for p in sorted(py, key=lambda p: (py[p], p))[:10]}
    edited = pick_file(corpus, 1000).relative_to(corpus).as_posix()
    shutil.rmtree(dest, ignore_errors=True)
    seeded.write_sample(corpus, dest, sorted({*small, edited}))
    return small, edited


def replica_target(small: dict[str, int], files: int) -> int:
    """The chunk target that makes ``write_replicas`` copy the small files until about ``files``
    files (each copy takes every one of them)."""
    copies = max(1, math.ceil((files - len(small) - 1) / len(small)))
    return (copies + 1) * sum(small.values())


def make_git_repo(ws: Path) -> float:
    """Turn ``ws`` into a git repository with every file staged, the store excluded; seconds."""
    started = time.perf_counter()
    git = ["git", "-C", str(ws), "-c", "core.autocrlf=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    (ws / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text(".kenning/\n", encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True)
    return time.perf_counter() - started


def measure_once(ws: Path, edited: str, *, restarts: int, cli_repeats: int, saves: int) -> dict[str, Any]:
    """The unchanged ``kenning index``, the restarts and the saves on ``ws`` as it is now."""
    out: dict[str, Any] = {"cli": cli_reindex(ws, cli_repeats)}
    out["restart"] = server_restarts(ws, "return value", restarts)
    server = BenchServer()
    try:
        server.initialize_workspace(ws)
        server.wait_state("ready", START_TIMEOUT)
        out["save"] = did_save(server, ws, ws / edited, saves)
    finally:
        server.stop()
    return out


def measure(
    corpus: Path,
    base_db: Path,
    work: Path,
    *,
    files: int,
    restarts: int,
    cli_repeats: int,
    saves: int,
    keep: bool = False,
    out: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything above into ``out`` (filled as it goes, so a failure keeps what was measured)."""
    out = {} if out is None else out
    base, ws = work / "wfiles-base", work / "wfiles"
    small, edited = write_base(corpus, base_db, base)
    out.update(target_files=files, small_files=len(small), small_chunks=SMALL_CHUNKS, edited=edited)
    log(f"files: writing and indexing ~{files:,} files at {ws} ({len(small)} small files replicated)")
    shutil.rmtree(ws / ".git", ignore_errors=True)  # a run stopped in the git half
    out["built"] = build_tree(base, base_db, ws, replica_target(small, files), reuse=keep, counts=small)
    b = out["built"]
    log(f"files: {b['files']:,} files, {b['chunks']:,} chunks; scan {b['scan_s']:.0f} s")
    log("files: the plain tree (a walk)")
    out["walk"] = measure_once(ws, edited, restarts=restarts, cli_repeats=cli_repeats, saves=saves)
    log("files: the same tree as a git repository")
    try:
        out["git_add_s"] = make_git_repo(ws)
        out["git"] = measure_once(ws, edited, restarts=restarts, cli_repeats=cli_repeats, saves=saves)
    finally:
        shutil.rmtree(ws / ".git", ignore_errors=True)
    if not keep:
        shutil.rmtree(ws, ignore_errors=True)
        ws.with_name(ws.name + ".built.json").unlink(missing_ok=True)
    shutil.rmtree(base, ignore_errors=True)
    return out
