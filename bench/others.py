"""Measure 6's comparison: ``workspace/symbol`` in jedi-language-server and basedpyright.

Both come from PyPI into a virtual environment of their own under the bench's work directory
(never into kenning's dependencies). Each server is started on the same standard-library
workspace, asked once (its first answer may include indexing the workspace), then timed warm
over the same queries as kenning. A server that cannot be installed or started is skipped with
the reason.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.lspclient import BenchServer
from bench.server import summary

SERVERS = {
    "jedi-language-server": ("jedi-language-server", ["jedi-language-server"]),
    "basedpyright": ("basedpyright", ["basedpyright-langserver", "--stdio"]),
}


def install(venv: Path) -> dict[str, str]:
    """Create ``venv`` with both servers; {name: version or 'unavailable: why'}."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    out: dict[str, str] = {}
    for name, (dist, _) in SERVERS.items():
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", dist],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            out[name] = "unavailable: " + (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
            continue
        version = subprocess.run(
            [str(python), "-c", f"from importlib.metadata import version; print(version({dist!r}))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        out[name] = version or "unknown"
    return out


def measure(
    name: str, venv: Path, ws: Path, queries: Sequence[str], *, first_timeout: float, timeout: float
) -> dict[str, Any]:
    exe = venv / "bin" / SERVERS[name][1][0]
    if not exe.exists() or shutil.which(str(exe)) is None:
        return {"skipped": f"{exe.name} not installed"}
    server = BenchServer(cmd=[str(exe), *SERVERS[name][1][1:]])
    out: dict[str, Any] = {}
    try:
        server.initialize_workspace(ws, timeout=120)
        out["initialize_s"] = time.perf_counter() - server.started
        try:
            ms, reply = server.timed_call("workspace/symbol", {"query": queries[0]}, timeout=first_timeout)
        except TimeoutError:
            return {**out, "skipped": f"no answer to the first workspace/symbol in {first_timeout:.0f}s"}
        out["first_query_ms"] = ms
        times, counts, errors = [], [], 0
        for q in queries:
            try:
                ms, reply = server.timed_call("workspace/symbol", {"query": q}, timeout=timeout)
            except TimeoutError:
                errors += 1
                continue
            if "error" in reply:
                errors += 1
                continue
            times.append(ms)
            counts.append(len(reply.get("result") or []))
        out["symbol_ms"] = summary(times)
        out["results_mean"] = sum(counts) / max(len(counts), 1)
        out["errors"] = errors
    finally:
        server.stop()
    return out
