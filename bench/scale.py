"""The monorepo step: one index of about a million chunks, built as the 100k one is (a real scan
of a large tree by kenning, vectors reused from the base corpus and perturbed: bench/seeded.py),
then what a user of a large monorepo asks first, all over LSP or as a user types it:

- hybrid ``workspace/semanticSearch`` latency, with and without a ~1 % path filter;
- ``workspace/symbol`` latency over every symbol of the tree (and the first query, which builds
  the in-memory symbol index);
- server RSS after ready and the store's bytes per chunk;
- an unchanged server restart → ready, and an unchanged ``kenning index``;
- the same restart cold: the tree's and the store's pages evicted from the page cache first,
  then ready and the hybrid queries once, at ready and 5 s after it;
- the HNSW graph's build time, and a rebuild while queries arrive: the saved graph is deleted,
  the server started, and hybrid queries sent back to back until it is ready again — each is
  timed, so a rebuild that blocked queries would show as their latency.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import seeded
from bench.lspclient import STAMP, BenchServer
from bench.server import _results, cli_reindex, cold_starts, server_restarts, summary, warm_latency

REBUILD_TIMEOUT = 3600.0


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_tree(
    base_root: Path,
    base_db: Path,
    dest: Path,
    target: int,
    *,
    reuse: bool,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The base corpus plus ``copy<N>/`` replicas up to ``target`` chunks, indexed by kenning.
    ``counts``: the files to replicate and their chunks (default: every file of ``base_db``).

    With ``reuse`` a tree this function finished before (for the same target) is kept, and what
    its build took is read back: at a million chunks the build is most of an hour, and the
    measurements after it can then be repeated on new code. The record sits beside the tree, not
    in it, and is written only once the build is complete."""
    record = dest.with_name(dest.name + ".built.json")
    if reuse and record.exists() and (dest / ".kenning").is_dir():
        built: dict[str, Any] = json.loads(record.read_text())
        if built.get("target") == target:
            log(f"scale: reusing the tree built at {built.get('built_at')} ({record})")
            return {**built, "reused": True}
    record.unlink(missing_ok=True)
    shutil.rmtree(dest, ignore_errors=True)
    started = time.perf_counter()
    copies = seeded.write_replicas(
        base_root, dest, seeded.chunk_counts(base_db) if counts is None else counts, target
    )
    written = time.perf_counter() - started
    built = {
        "copies": copies,
        "write_s": written,
        **seeded.build(dest, base_db),
        "target": target,
        "built_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    record.write_text(json.dumps(built))
    return built


def rebuild_under_queries(ws: Path, queries: Sequence[str]) -> dict[str, Any]:
    """Delete the saved graph, start the server, and send hybrid queries until it is ready."""
    store = ws / ".kenning"
    removed = [p.name for p in store.glob("vectors.*.usearch")]
    for name in removed:
        (store / name).unlink()
    server = BenchServer()
    during: list[float] = []
    dense = 0
    try:
        server.initialize_workspace(ws)

        def ready() -> dict[str, Any] | None:
            for n in server.notifications:
                if n.get("method") == "kenning/indexStatus" and n["params"]["state"] == "ready":
                    return n
            return None

        deadline = time.monotonic() + REBUILD_TIMEOUT
        i = 0
        while ready() is None and time.monotonic() < deadline:
            ms, reply = server.search(queries[i % len(queries)], mode="hybrid", timeout=REBUILD_TIMEOUT)
            i += 1
            if ready() is not None:
                break  # this one may have run against the new graph
            during.append(ms)
            dense += any((r.get("match") or {}).get("denseRank") for r in _results(reply))
        msg = ready() or server.wait_state("ready", REBUILD_TIMEOUT)
        ready_s = msg[STAMP] - server.started
        after = [server.search(q, mode="hybrid")[0] for q in queries]
    finally:
        server.stop()
    return {
        "removed": removed,
        "ready_s": ready_s,
        "during_ms": summary(during),
        "during_with_dense": dense,
        "after_ms": summary(after),
    }


def measure(
    base_root: Path,
    base_db: Path,
    work: Path,
    *,
    target: int,
    queries: Sequence[str],
    symbol_queries: Sequence[str],
    rounds: int,
    restarts: int,
    cli_repeats: int,
    keep: bool = False,
    out: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything above into ``out`` (filled as it goes, so a failure keeps what was measured)."""
    ws = work / "wscale"
    out = {} if out is None else out
    out["target"] = target
    log(f"scale: writing and indexing ~{target:,} chunks at {ws}")
    out["built"] = build_tree(base_root, base_db, ws, target, reuse=keep)
    b = out["built"]
    log(
        f"scale: {b['files']:,} files, {b['chunks']:,} chunks, {b['symbols']:,} symbols;"
        f" scan {b['scan_s']:.0f} s, graph {b['graph_s']:.0f} s, total {b['total_s']:.0f} s"
    )
    glob, selected, total = seeded.filter_glob(ws / ".kenning" / "kenning.sqlite3")
    out["filter"] = {"glob": glob, "chunks": selected, "total": total}
    log(f"scale: warm latency, filter {glob} ({selected:,} of {total:,} chunks)")
    out["warm"] = warm_latency(
        ws, queries, modes=("hybrid",), filter_glob=glob, rounds=rounds, symbol_queries=symbol_queries
    )
    log("scale: unchanged restarts and `kenning index`")
    out["restart"] = server_restarts(ws, "return value", restarts)
    out["cli"] = cli_reindex(ws, cli_repeats)
    log("scale: cold restarts (the tree's and the store's pages evicted first)")
    out["cold"] = cold_starts(ws, queries, restarts)
    log("scale: a graph rebuild under queries")
    out["rebuild"] = rebuild_under_queries(ws, queries)
    if not keep:
        shutil.rmtree(ws, ignore_errors=True)
        ws.with_name(ws.name + ".built.json").unlink(missing_ok=True)
    return out
