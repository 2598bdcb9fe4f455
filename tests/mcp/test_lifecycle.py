"""Cancellation, concurrency, and a client that goes away: the server never hangs or leaks its lock."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio

from tests.mcp.conftest import holder_pid, lock_free, mcp_session, wait_lock_free, write_many


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            # Exited but not yet reaped by its parent (the client in this test) counts as gone.
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.1)
    return False


async def test_a_cancelled_call_stops_and_the_session_goes_on(tmp_path: Path) -> None:
    ws = write_many(tmp_path / "ws", 1500, defs=4)
    async with mcp_session(ws) as s:
        # The first call waits for the first scan (seconds here); the client gives up on it.
        with anyio.move_on_after(0.3) as scope:
            await s.client.call_tool("search_code", {"query": "modhb_fnd"})
        assert scope.cancelled_caught
        # The server keeps answering, promptly, and the cancelled call left nothing broken.
        text = await s.ok("index_status", {})
        assert text.startswith(str(ws))
        found = await s.ok("search_code", {"query": "modhb_fnd", "mode": "lexical"})
        assert "m71.py" in found
        assert "Traceback" not in s.stderr()


async def test_concurrent_calls_all_answer_as_they_would_one_at_a_time(workspace: Path) -> None:
    calls = [
        ("search_code", {"query": "retry failed uploads"}),
        ("search_code", {"query": "open a database connection", "languages": ["go"]}),
        ("find_symbol", {"query": "urp"}),
        ("find_symbol", {"query": "parse header"}),
        ("find_similar", {"path": "geometry.py", "start_line": 4, "end_line": 5}),
        ("read_span", {"path": "geometry.py", "start_line": 1, "end_line": 5}),
    ]
    async with mcp_session(workspace) as s:
        await s.wait_embedded()
        one_by_one = [await s.json(n, a) if n != "read_span" else await s.ok(n, a) for n, a in calls]
        together = await asyncio.gather(
            *[s.json(n, a) if n != "read_span" else s.ok(n, a) for n, a in calls * 3]
        )
        for i, got in enumerate(together):
            assert got == one_by_one[i % len(calls)], calls[i % len(calls)]


CLIENT = textwrap.dedent(
    """
    import asyncio, os, sys
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "kenning", "mcp", "--root", sys.argv[1]], env=dict(os.environ)
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            print("calling", flush=True)
            await s.call_tool("search_code", {"query": "modhb_fnd"})
            await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def test_a_client_that_dies_mid_call_ends_the_server_and_frees_the_lock(tmp_path: Path) -> None:
    ws = write_many(tmp_path / "ws", 1500, defs=4)
    store = ws / ".kenning"
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(ws)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "calling"
        deadline = time.monotonic() + 30
        while (pid := holder_pid(store)) is None or lock_free(store):
            assert time.monotonic() < deadline, "the server never took the writer lock"
            time.sleep(0.05)
        time.sleep(0.2)  # mid-call: the first scan of 1,500 files is still running
        client.kill()  # no goodbye: the server just sees its stdin close
        client.wait(10)
        assert _gone(pid, 60), "kenning mcp outlived its client"
        assert lock_free(store)
    finally:
        if client.poll() is None:
            client.kill()


async def test_sigterm_saves_and_frees_the_lock_for_whoever_comes_next(workspace: Path) -> None:
    store = workspace / ".kenning"
    async with mcp_session(workspace) as s:
        await s.wait_embedded()
        pid = holder_pid(store)
        assert pid is not None and not lock_free(store)
        os.kill(pid, signal.SIGTERM)
        assert await anyio.to_thread.run_sync(_gone, pid, 60.0)
    assert wait_lock_free(store, 5)
    # The next server finds the saved index and its graph: nothing to embed again.
    async with mcp_session(workspace) as s:
        # Its first status read from the opened store: the counts it saved, not a re-embedding.
        status = await s.wait_opened()
        (root,) = status["roots"]
        assert root["role"] == "writer" and root["embedded"] == root["chunks"] > 0
