"""The shared embedding cache, measured as a user meets it: two clones of one tree on one machine.

* ``first_s``: ``kenning index`` of clone A (a new process, as typed) with an empty shared cache;
* ``second_s``: the same for clone B, a copy of A at another path, which finds A's vectors in
  the shared cache (target: at most 10 % of ``first_s``);
* ``unchanged_ms``: ``kenning index`` of B again, nothing changed, with the cache on and off
  (alternated), so the cache's cost on the most common run is visible;
* ``query_ms``: warm in-process semantic and hybrid searches on A (vectors computed) and on B
  (vectors from the cache), alternated: the cache must not change search.

Every process gets a private ``KENNING_CACHE_DIR`` whose ``models`` links to the user's model
cache (no graph rebuild, and the user's shared cache untouched).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _clone(source: Path, dest: Path, files: int | None) -> int:
    """Copy ``source`` (without its store) to ``dest``: every file, or the first ``files``."""
    shutil.rmtree(dest, ignore_errors=True)
    picked = sorted(
        p for p in source.rglob("*") if p.is_file() and ".kenning" not in p.relative_to(source).parts
    )
    if files is not None:
        picked = picked[:files]
    for p in picked:
        target = dest / p.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
    return len(picked)


def _cache_env(work: Path) -> dict[str, str]:
    from kenning.embedding.cache import cache_dir

    models = cache_dir() / "models"
    models.mkdir(parents=True, exist_ok=True)
    private = work / "shared-cache"
    shutil.rmtree(private, ignore_errors=True)
    private.mkdir(parents=True)
    (private / "models").symlink_to(models, target_is_directory=True)
    return {
        **os.environ,
        "KENNING_CACHE_DIR": str(private),
        "KENNING_SHARED_CACHE": "1",
        "HF_HUB_OFFLINE": "1",
    }


def _index(root: Path, env: dict[str, str], *extra: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kenning", "index", str(root), "--json", *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=7200,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"kenning index {root} failed: {proc.stderr[-2000:]}")
    return wall, json.loads(proc.stdout)


def _queries_ms(
    root: Path, queries: list[str], modes: tuple[str, ...], rounds: int
) -> dict[str, list[float]]:
    from kenning.engine import Engine
    from kenning.search import SearchQuery, search

    out: dict[str, list[float]] = {m: [] for m in modes}
    with Engine(root, read_only=True) as engine:
        for mode in modes:
            search(engine, SearchQuery(text=queries[0], mode=mode, limit=10))  # warm
            for _ in range(rounds):
                for q in queries:
                    started = time.perf_counter()
                    search(engine, SearchQuery(text=q, mode=mode, limit=10))
                    out[mode].append((time.perf_counter() - started) * 1000)
    return out


def measure(
    source: Path, work: Path, *, files: int | None, queries: list[str], repeats: int = 3, rounds: int = 2
) -> dict[str, Any]:
    env = _cache_env(work)
    a, b = work / "clone-a", work / "clone-b"
    copied = _clone(source, a, files)
    _clone(source, b, files)
    first_s, first = _index(a, env)
    second_s, second = _index(b, env)
    on: list[float] = []
    off: list[float] = []
    for _ in range(repeats):
        on.append(_index(b, env)[0] * 1000)
        off.append(_index(b, env, "--no-shared-cache")[0] * 1000)
    queries = queries or ["read a file", "parse arguments"]
    modes = ("semantic", "hybrid")
    qa: dict[str, list[float]] = {m: [] for m in modes}
    qb: dict[str, list[float]] = {m: [] for m in modes}
    saved = os.environ.get("KENNING_CACHE_DIR")
    os.environ["KENNING_CACHE_DIR"] = env["KENNING_CACHE_DIR"]
    try:
        for _ in range(repeats):  # alternated, so the machine's load tilts neither side
            for store, got in ((a, qa), (b, qb)):
                for mode, values in _queries_ms(store, queries, modes, rounds).items():
                    got[mode].extend(values)
    finally:
        if saved is None:
            os.environ.pop("KENNING_CACHE_DIR", None)
        else:
            os.environ["KENNING_CACHE_DIR"] = saved
    size = sum(p.stat().st_size for p in Path(env["KENNING_CACHE_DIR"]).glob("embeddings-v1.sqlite3*"))
    shutil.rmtree(a, ignore_errors=True)
    shutil.rmtree(b, ignore_errors=True)
    return {
        "files": copied,
        "chunks": first["chunks"],
        "first_s": first_s,
        "first": {"computed": first["computed"], "reused": first["reused"]},
        "second_s": second_s,
        "second": {"computed": second["computed"], "reused_from": second["reused_from"]},
        "ratio": second_s / first_s if first_s else None,
        "unchanged_ms": {
            "shared_on": statistics.median(on),
            "shared_off": statistics.median(off),
            "n": repeats,
        },
        "query_ms": {
            mode: {
                "computed_p50": statistics.median(qa[mode]),
                "from_cache_p50": statistics.median(qb[mode]),
                "n": len(qa[mode]),
            }
            for mode in modes
        },
        "cache_bytes": size,
    }
