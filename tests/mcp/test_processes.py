"""One index, three processes: the language server, ``kenning mcp`` and the CLI on one workspace.

Whoever starts first writes the store; the others read it and follow its commits. The agent
never sees a lock error, the answers agree, a reader takes over when the writer leaves, and the
store passes SQLite's integrity check at the end.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from bench.lspclient import RawServer

from kenning.store.schema import DB_FILENAME
from tests.mcp.conftest import Session, lock_free, mcp_session

QUERY = "how long to wait before sending a failed upload again"


def cli_search(ws: Path, query: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "kenning", "search", query, "--json", "--root", str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout), done.stderr


def lsp_top(lsp: RawServer, query: str) -> tuple[str, int]:
    resp = lsp.call("workspace/semanticSearch", {"query": query, "limit": 5}, timeout=60)
    top = resp["result"]["results"][0]
    return top["uri"].rsplit("/", 1)[-1], top["range"]["start"]["line"] + 1


async def until(s: Session, name: str, args: dict[str, Any], wanted: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = await s.ok(name, args)
        if wanted in text:
            return text
        assert time.monotonic() < deadline, f"{wanted!r} never appeared in {name}: {text}"
        await anyio.sleep(0.5)


async def test_lsp_mcp_and_cli_share_one_index(workspace: Path) -> None:
    store = workspace / ".kenning"
    lsp = RawServer(cwd=workspace)
    try:
        lsp.initialize(workspace)
        lsp.wait_ready()
        async with mcp_session(workspace) as s:
            status = await s.wait_opened()
            (root,) = status["roots"]
            assert root["role"] == "reader", root  # the language server writes; we follow

            # The same answer from all three.
            mcp_top = (await s.json("search_code", {"query": QUERY}))["results"][0]
            cli, cli_err = cli_search(workspace, QUERY)
            cli_top = cli["results"][0]
            assert (mcp_top["path"], mcp_top["start_line"]) == ("uploads.py", 7)
            assert (cli_top["path"], cli_top["start_line"]) == ("uploads.py", 7)
            assert lsp_top(lsp, QUERY) == ("uploads.py", 7)
            assert "Traceback" not in cli_err

            # The writer indexes a new file; the reader sees its commit.
            (workspace / "billing.py").write_text(
                "def compute_invoice_total(lines):\n    return sum(lines)\n"
            )
            lsp.notify(
                "workspace/didChangeWatchedFiles",
                {"changes": [{"uri": (workspace / "billing.py").as_uri(), "type": 1}]},
            )
            await until(s, "find_symbol", {"query": "compute_invoice_total"}, "billing.py:1-2")

            # The language server leaves: the MCP server takes over writing and keeps it fresh.
            assert lsp.close() == 0
            await until(s, "index_status", {}, "(writer)", timeout=60)
            assert not lock_free(store)
            (workspace / "shipping.py").write_text("def schedule_shipment(order):\n    return order\n")
            await until(s, "find_symbol", {"query": "schedule_shipment"}, "shipping.py:1-2")

            # The CLI reads while the MCP server writes, and agrees.
            cli, _ = cli_search(workspace, QUERY)
            assert (cli["results"][0]["path"], cli["results"][0]["start_line"]) == ("uploads.py", 7)

            # A language server started now reads (the MCP server holds the lock) and agrees.
            second = RawServer(cwd=workspace)
            try:
                second.initialize(workspace)
                second.wait_ready()
                assert lsp_top(second, QUERY) == ("uploads.py", 7)
            finally:
                second.close()
            assert "Traceback" not in s.stderr()
        assert lock_free(store)  # released on exit, for the next language server
    finally:
        if lsp.alive():
            lsp.proc.kill()
    with sqlite3.connect(store / DB_FILENAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # A language server started later becomes the writer.
    third = RawServer(cwd=workspace)
    try:
        third.initialize(workspace)
        third.wait_ready()
        assert not lock_free(store)
    finally:
        third.close()
