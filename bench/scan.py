"""The scan of a fresh store (read, chunk, write; no embedding), three ways in one run.

What a first index does before lexical search covers the tree, and all a rescan does after a
new chunker version when every vector is cached. The three ways, alternated, each on a new
store: tree-sitter in the server's own process; in the chunk worker one file at a time (the
indexer waits for each file's chunks before it reads the next); and in the chunk worker with
files read ahead (``scanner.READ_AHEAD``: the worker parses the next files while the server
writes the last ones). Every way must store the same chunks and symbols.

    .venv/bin/python -m bench.scan [TREE ...] [--repeats 3]

With no tree, a copy of the running interpreter's standard library (without its tests). A tree
must hold no file that crashes a parser: the first way parses in this process.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.corpus import copy_stdlib
from bench.machine import describe

WAYS = ("in process", "worker, one file at a time", "worker, files read ahead")


def _stored(store: Path) -> str:
    """A digest of every stored chunk and symbol: the ways must agree on it."""
    digest = hashlib.sha256()
    with sqlite3.connect(next(store.rglob("*.sqlite3"))) as conn:
        for row in conn.execute(
            "SELECT f.path, c.start_line, c.end_line, c.kind, c.symbol, c.header, c.text, c.idents"
            " FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.start_line, c.end_line, c.id"
        ):
            digest.update(repr(row).encode())
        for row in conn.execute(
            "SELECT f.path, s.name, s.kind, s.container, s.start_line, s.name_line, s.name_col"
            " FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY 1, 5, 6, 7, 2"
        ):
            digest.update(repr(row).encode())
    return digest.hexdigest()


def scan_once(root: Path, way: str, work: Path) -> dict[str, Any]:
    from kenning.chunking import isolated
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.indexer import scanner

    read_ahead = scanner.READ_AHEAD
    isolated.stop_worker()
    isolated._unavailable = way == "in process"
    scanner.READ_AHEAD = read_ahead if way == "worker, files read ahead" else 0
    store = Path(tempfile.mkdtemp(dir=work))
    try:
        started = time.perf_counter()
        with Engine(root, Config(store=store)) as engine:
            report = scanner.scan(engine)
        seconds = time.perf_counter() - started
    finally:
        isolated._unavailable = False
        scanner.READ_AHEAD = read_ahead
    files, chunks = report.files_changed, report.chunks_added
    return {"seconds": seconds, "files": files, "chunks": chunks, "stored": _stored(store)}


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="kenning-scan-") as tmp:
        work = Path(tmp)
        trees: list[Path] = [t.resolve() for t in args.trees]
        if not trees:
            copy_stdlib(work / "stdlib")
            trees = [work / "stdlib"]
        machine = describe()
        print(f"machine: {machine.get('cpu')}, {machine.get('cores')} cores; python {sys.version.split()[0]}")
        print()
        print("| tree | files | chunks | " + " | ".join(f"{way} (s)" for way in WAYS) + " |")
        print("|---|---|---|" + "---|" * len(WAYS))
        for root in trees:
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            runs: list[dict[str, Any]] = []
            for _ in range(args.repeats):
                for way in WAYS:
                    run = scan_once(root, way, work)
                    times[way].append(run["seconds"])
                    runs.append(run)
            if len({run["stored"] for run in runs}) != 1:
                print(f"{root}: the ways stored different chunks or symbols", file=sys.stderr)
                return 1
            cells = [f"{statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f})" for t in times.values()]
            counts = f"{runs[0]['files']:,} | {runs[0]['chunks']:,}"
            print(f"| {root.name} | {counts} | " + " | ".join(cells) + " |")
    print()
    print(f"median of {args.repeats} (least-most), the ways alternated; every run stored the same chunks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
