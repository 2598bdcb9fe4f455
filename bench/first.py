"""Semantic first where the user works: on a never-indexed copy of the whole standard library,
an editor opens a handful of files right after ``initialized``; how long from the server's
start until each of them is found by the dense half alone (``mode: semantic``)?

Each opened file is asked for by the text of its *last* top-level definition: chunks are
embedded in file order, so finding that one means the whole file has its vectors. The measure
also says how much of the index had vectors at that moment (the rest follows).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any

from bench.lspclient import STAMP, BenchServer

QUERY_CHARS = 600


def pick_opened(ws: Path, files: list[Path], count: int) -> list[Path]:
    """``count`` ordinary modules (4-40 KB, with definitions) from the second half of the
    library in path order: late in any scan, so only being open puts them first."""
    candidates = sorted(
        rel
        for rel in files
        if rel.suffix == ".py" and 4_000 <= (ws / rel).stat().st_size <= 40_000 and _last_definition(ws / rel)
    )
    late = candidates[len(candidates) // 2 :]
    step = max(1, len(late) // count)
    return late[::step][:count]


def _last_definition(path: Path) -> str | None:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    if not defs:
        return None
    text = ast.get_source_segment(source, defs[-1]) or ""
    return text[:QUERY_CHARS] or None


def opened_searchable(ws: Path, opened: list[Path], *, timeout: float) -> dict[str, Any]:
    """Start a server on ``ws`` (never indexed), open ``opened``, and time each to being found."""
    queries = {rel: _last_definition(ws / rel) or "" for rel in opened}
    server = BenchServer()
    try:
        server.initialize_workspace(ws)
        for rel in opened:
            path = ws / rel
            server.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": path.as_uri(),
                        "languageId": "python",
                        "version": 1,
                        "text": path.read_text(encoding="utf-8"),
                    }
                },
            )
        found: dict[str, float] = {}
        deadline = time.monotonic() + timeout
        last_index: dict[str, Any] = {}
        while len(found) < len(opened) and time.monotonic() < deadline:
            for rel in opened:
                key = rel.as_posix()
                if key in found:
                    continue
                _, reply = server.search(queries[rel], mode="semantic", limit=10)
                result = reply.get("result") or {}
                last_index = result.get("index") or {}
                uri = (ws / rel).as_uri()
                if not last_index.get("lexicalOnly") and any(
                    h.get("uri") == uri for h in result.get("results") or []
                ):
                    found[key] = reply[STAMP] - server.started
            if len(found) < len(opened):
                time.sleep(0.5)  # each query is embedded too: polling harder slows the indexer
        cpu_s = server.cpu_seconds()  # less at the mercy of the machine's load than the wall time
        status = server.call("workspace/executeCommand", {"command": "kenning.status", "arguments": []})
        state = (status.get("result") or [{}])[0]
        return {
            "opened": [rel.as_posix() for rel in opened],
            "found_s": found,
            "all_found_s": max(found.values()) if len(found) == len(opened) else None,
            "first_found_s": min(found.values()) if found else None,
            "server_cpu_s": cpu_s,
            "embedded_then": state.get("embedded"),
            "chunks_then": state.get("chunks"),
            "files_then": state.get("files"),
            "state_then": state.get("state"),
        }
    finally:
        server.stop()
