"""Measures over LSP: indexing a fresh workspace, restarts, didSave, search and symbol latency,
memory, disk, and what an idle server costs. Every timing is taken by the client: from sending
a request to the arrival of its reply, or from starting the process to a notification."""

from __future__ import annotations

import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.lspclient import STAMP, BenchServer

START_TIMEOUT = 120.0
READ_AHEAD_TIMEOUT = 120.0


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, math.ceil(p / 100 * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": pct(values, 50),
        "p95": pct(values, 95),
        "max": max(values) if values else float("nan"),
    }


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _results(reply: dict[str, Any]) -> list[dict[str, Any]]:
    result = reply.get("result")
    if isinstance(result, dict):
        return list(result.get("results") or [])
    return list(result or [])


def idle_cost(server: BenchServer, seconds: float) -> dict[str, float]:
    """CPU seconds and bytes written by the server while nobody asks it anything."""
    cpu0, io0 = server.cpu_seconds(), server.io()
    time.sleep(seconds)
    cpu1, io1 = server.cpu_seconds(), server.io()
    return {
        "seconds": seconds,
        "cpu_s": cpu1 - cpu0,
        "write_bytes": io1.get("write_bytes", 0) - io0.get("write_bytes", 0),
        "wchar": io1.get("wchar", 0) - io0.get("wchar", 0),
    }


# -- 2: a fresh workspace ---------------------------------------------------------------------


def fresh_index(ws: Path, probe: str, *, timeout: float, idle_s: float) -> tuple[BenchServer, dict[str, Any]]:
    """Start the server on a never-indexed workspace: first lexical result, scan done, ready.

    Returns the (still running, ready) server for the next measures."""
    server = BenchServer()
    server.initialize_workspace(ws)
    initialized = time.perf_counter()
    first: float | None = None
    deadline = time.monotonic() + timeout
    while first is None and time.monotonic() < deadline:
        _, reply = server.search(probe, mode="lexical", limit=5)
        if _results(reply):
            first = reply[STAMP]
        else:
            time.sleep(0.1)
    scanned = server.wait_state("embedding", timeout)
    cpu_scanned = server.cpu_seconds()
    ready = server.wait_state("ready", timeout, after=scanned[STAMP])
    cpu_ready = server.cpu_seconds()
    params = ready["params"]
    out = {
        "files": params["files"],
        "chunks": params["chunks"],
        "embedded": params["embedded"],
        "initialize_s": initialized - server.started,
        "first_lexical_s": (first - server.started) if first else None,
        "scan_done_s": scanned[STAMP] - server.started,
        "ready_s": ready[STAMP] - server.started,
        "embed_phase_s": ready[STAMP] - scanned[STAMP],
    }
    out["cpu_at_scan_done_s"] = cpu_scanned
    out["cpu_embed_phase_s"] = cpu_ready - cpu_scanned
    out["embed_rate"] = params["embedded"] / out["embed_phase_s"]
    out["pipeline_rate"] = params["embedded"] / (ready[STAMP] - initialized)
    out["memory_mib"] = server.memory_mib()
    out["idle"] = idle_cost(server, idle_s)
    return server, out


# -- 3: restarts ------------------------------------------------------------------------------


def server_restarts(ws: Path, probe: str, repeats: int) -> dict[str, Any]:
    """Start the server on an indexed, unchanged workspace: first answer and ready."""
    ready, first, cpu = [], [], []
    for _ in range(repeats):
        server = BenchServer()
        try:
            server.initialize_workspace(ws)
            while True:
                _, reply = server.search(probe, mode="lexical", limit=5)
                if _results(reply):
                    first.append(reply[STAMP] - server.started)
                    break
                time.sleep(0.02)
            msg = server.wait_state("ready", START_TIMEOUT)
            ready.append(msg[STAMP] - server.started)
            cpu.append(server.cpu_seconds())  # CPU the server used to get there
        finally:
            server.stop()
    return {"ready_s": summary(ready), "first_lexical_s": summary(first), "cpu_at_ready_s": summary(cpu)}


def drop_page_cache(*roots: Path) -> int:
    """Evict every regular file under ``roots`` from the page cache (``posix_fadvise``
    DONTNEED, which any user may ask for files they can read); how many files. Directory entries
    and inodes stay cached: dropping those takes root's ``/proc/sys/vm/drop_caches``."""
    dropped = 0
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for name in names:
                try:
                    fd = os.open(os.path.join(dirpath, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    dropped += 1
                finally:
                    os.close(fd)
    return dropped


def cold_starts(ws: Path, queries: Sequence[str], repeats: int, *, pause_s: float = 5.0) -> dict[str, Any]:
    """Unchanged restarts with the workspace's and its store's pages evicted first, as after a
    reboot or once other work has pushed them out: time to ready, then the hybrid queries once —
    at ready, and (another start) ``pause_s`` after it, a person's pace."""
    out: dict[str, Any] = {"pause_s": pause_s}
    ready: list[float] = []
    passes: dict[str, list[float]] = {"at_ready": [], "paused": []}
    first: dict[str, list[float]] = {"at_ready": [], "paused": []}
    notes: list[str] = []
    for _ in range(repeats):
        for name in ("at_ready", "paused"):
            out["files_dropped"] = drop_page_cache(ws)
            server = BenchServer()
            try:
                server.initialize_workspace(ws)
                msg = server.wait_state("ready", START_TIMEOUT)
                ready.append(msg[STAMP] - server.started)
                if name == "paused":
                    time.sleep(pause_s)
                lat = [server.search(q, mode="hybrid")[0] for q in queries]
                passes[name] += lat
                first[name].append(lat[0])
                said = server.wait_log("store read-ahead", READ_AHEAD_TIMEOUT)
                if said:
                    notes.append(said["params"]["message"])
            finally:
                server.stop()
    out["ready_s"] = summary(ready)
    out["search_ms"] = {k: summary(v) for k, v in passes.items()}
    out["first_ms"] = {k: summary(v) for k, v in first.items()}
    out["read_ahead"] = notes[-1] if notes else None
    return out


def cli_reindex(ws: Path, repeats: int) -> dict[str, Any]:
    """``kenning index`` on an unchanged workspace, as a user types it (a new process each)."""
    times, scans, cpu = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(
            [sys.executable, "-m", "kenning", "index", "--root", str(ws), "-v"],
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        for line in proc.stderr.splitlines():
            if "scanned" in line and " in " in line:
                scans.append(float(line.split(" in ")[1].split("s")[0]))
    return {"wall_s": summary(times), "cpu_s": summary(cpu), "scan_s": summary(scans) if scans else None}


# -- 4: didSave -------------------------------------------------------------------------------


def pick_file(ws: Path, lines: int = 1000) -> Path:
    """The ``.py`` file of ``ws`` whose length is closest to ``lines`` lines."""
    best = min(
        (p for p in ws.rglob("*.py") if ".kenning" not in p.parts),
        key=lambda p: (abs(p.read_bytes().count(b"\n") - lines), str(p)),
    )
    return best


def did_save(
    server: BenchServer, ws: Path, path: Path, repeats: int, timeout: float = 120.0
) -> dict[str, Any]:
    """Append a new function to ``path``, send didSave, poll until lexical (then semantic)
    search finds it. The file is restored afterwards."""
    original = path.read_text(encoding="utf-8")
    rel = path.relative_to(ws).as_posix()
    uri = path.as_uri()
    lexical, semantic = [], []
    try:
        for i in range(repeats):
            token = f"kenningprobe{i}x{time.time_ns() % 10**9}"
            lines = original.rstrip("\n").split("\n")
            def_line = len(lines) + 2  # 0-based line of the def after two blank lines
            probe = (
                f"\n\ndef {token}(records):\n"
                f'    """Sort the ledger records by their settlement date, number {i}."""\n'
                f"    return sorted(records, key=lambda r: r.settled_on)\n"
            )
            path.write_text(original.rstrip("\n") + "\n" + probe, encoding="utf-8")
            sent = time.perf_counter()
            server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            found_lexical = found_semantic = None
            deadline = time.monotonic() + timeout
            while found_semantic is None and time.monotonic() < deadline:
                if found_lexical is None:
                    _, reply = server.search(token, mode="lexical", limit=5)
                    if any(token in r.get("preview", "") for r in _results(reply)):
                        found_lexical = reply[STAMP] - sent
                else:
                    _, reply = server.search(
                        f"sort ledger records by settlement date number {i}",
                        mode="semantic",
                        limit=5,
                        paths=[rel],
                    )
                    if any(
                        r["range"]["start"]["line"] <= def_line <= r["range"]["end"]["line"]
                        and r["match"]["denseRank"]
                        for r in _results(reply)
                    ):
                        found_semantic = reply[STAMP] - sent
                time.sleep(0.01)
            if found_lexical is not None:
                lexical.append(found_lexical * 1000)
            if found_semantic is not None:
                semantic.append(found_semantic * 1000)
    finally:
        path.write_text(original, encoding="utf-8")
        server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    return {
        "file": rel,
        "lines": original.count("\n"),
        "lexical_ms": summary(lexical),
        "semantic_ms": summary(semantic),
        "misses": repeats - len(lexical),
    }


# -- 5-7: a prebuilt index --------------------------------------------------------------------


def warm_latency(
    ws: Path,
    queries: Sequence[str],
    *,
    modes: Sequence[str],
    filter_glob: str | None,
    rounds: int,
    symbol_queries: Sequence[str] = (),
    idle_s: float = 0.0,
) -> dict[str, Any]:
    """Start the server on a prebuilt index; time to ready; then warm search latency per mode
    (and with a path filter), workspace/symbol latency, memory and idle cost. Warm: once the
    server has read its store ahead (``cold_starts`` measures what comes before)."""
    server = BenchServer()
    out: dict[str, Any] = {}
    try:
        server.initialize_workspace(ws)
        ready = server.wait_state("ready", 1800)
        out["ready_s"] = ready[STAMP] - server.started
        out["chunks"] = ready["params"]["chunks"]
        out["embedded"] = ready["params"]["embedded"]
        rss_ready = server.memory_mib()  # before any query: what the server holds to be ready
        read_ahead = server.wait_log("store read-ahead", READ_AHEAD_TIMEOUT)
        out["read_ahead"] = read_ahead["params"]["message"] if read_ahead else None
        for q in queries[:10]:  # model, page cache and code paths warm
            for mode in modes:
                server.search(q, mode=mode)
        if symbol_queries:  # the first one builds the in-memory symbol index
            out["symbol_first_ms"], _ = server.timed_call("workspace/symbol", {"query": symbol_queries[0]})
        latency: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        variants = [(mode, None) for mode in modes]
        if filter_glob:
            variants += [(mode, filter_glob) for mode in modes]
        for _ in range(rounds):
            for mode, glob in variants:
                name = f"{mode}+filter" if glob else mode
                # The server's CPU time per query: what the machine's other load cannot inflate.
                cpu0 = server.cpu_seconds()
                for q in queries:
                    ms, _ = server.search(q, mode=mode, paths=[glob] if glob else None)
                    latency.setdefault(name, []).append(ms)
                cpu.setdefault(name, []).append((server.cpu_seconds() - cpu0) * 1000 / max(len(queries), 1))
        out["search_ms"] = {k: summary(v) for k, v in latency.items()}
        out["search_cpu_ms"] = {k: statistics.median(v) for k, v in cpu.items()}
        if symbol_queries:
            sym: list[float] = []
            counts: list[int] = []
            cpu0 = server.cpu_seconds()
            for _ in range(rounds):
                for q in symbol_queries:
                    ms, reply = server.timed_call("workspace/symbol", {"query": q})
                    sym.append(ms)
                    counts.append(len(reply.get("result") or []))
            out["symbol_ms"] = summary(sym)
            out["symbol_cpu_ms"] = (server.cpu_seconds() - cpu0) * 1000 / max(len(sym), 1)
            out["symbol_results_mean"] = statistics.fmean(counts) if counts else 0
        out["memory_mib"] = server.memory_mib()
        out["rss_ready_mib"] = rss_ready
        if idle_s:
            out["idle"] = idle_cost(server, idle_s)
    finally:
        server.stop()
    store = ws / ".kenning"
    out["disk_bytes"] = dir_size(store)
    out["disk_per_chunk"] = out["disk_bytes"] / max(out.get("chunks", 0), 1)
    return out
