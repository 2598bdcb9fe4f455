"""Helpers for driving a real ``kenning mcp`` process with the MCP SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from kenning.folder import OPENING_MESSAGE
from kenning.store.lock import LockHeld, WriterLock

MCP_CMD = [sys.executable, "-m", "kenning", "mcp"]


def mcp_args(*roots: Path) -> list[str]:
    args = ["-m", "kenning", "mcp"]
    for r in roots:
        args += ["--root", str(r)]
    return args


class Session:
    """A connected SDK client plus the server's stderr, with small conveniences for the tests."""

    def __init__(self, client: ClientSession, errlog: Any) -> None:
        self.client = client
        self._errlog = errlog

    async def call(self, name: str, args: dict[str, Any], timeout: float = 120.0) -> tuple[bool, str]:
        res = await self.client.call_tool(name, args, read_timeout_seconds=timeout)
        assert res.content and res.content[0].type == "text"
        return bool(res.is_error), res.content[0].text

    async def ok(self, name: str, args: dict[str, Any], timeout: float = 120.0) -> str:
        is_error, text = await self.call(name, args, timeout)
        assert not is_error, text
        return text

    async def json(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        res = await self.client.call_tool(name, {**args, "format": "json"}, read_timeout_seconds=120)
        assert not res.is_error, res.content
        assert res.structured_content is not None
        assert json.loads(res.content[0].text) == res.structured_content
        return res.structured_content

    async def _status_until(
        self, done: Callable[[dict[str, Any]], bool], timeout: float, pause: float, what: str
    ) -> dict[str, Any]:
        """Poll ``index_status`` until every root passes ``done``; the status that did."""
        deadline = time.monotonic() + timeout
        while True:
            status = await self.json("index_status", {})
            if all(done(r) for r in status["roots"]):
                return status
            assert time.monotonic() < deadline, f"index not {what}: {status}"
            await anyio.sleep(pause)

    async def wait_embedded(self, timeout: float = 180.0) -> dict[str, Any]:
        return await self._status_until(
            lambda r: r["state"] == "ready" and r["pending"] == 0 and bool(r["chunks"]), timeout, 0.3, "ready"
        )

    async def wait_opened(self, timeout: float = 60.0) -> dict[str, Any]:
        """The first status read from the opened stores (before it, counts are placeholders)."""
        return await self._status_until(lambda r: r["message"] != OPENING_MESSAGE, timeout, 0.05, "opened")

    def stderr(self) -> str:
        self._errlog.flush()
        self._errlog.seek(0)
        return str(self._errlog.read())


@asynccontextmanager
async def mcp_session(*roots: Path, cwd: Path | None = None) -> AsyncIterator[Session]:
    params = StdioServerParameters(
        command=sys.executable, args=mcp_args(*roots), env=dict(os.environ), cwd=cwd
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield Session(client, errlog)


def write_many(root: Path, files: int, defs: int = 10) -> Path:
    """A tree big enough that its first scan (and embedding) takes a while on a small machine."""

    def word(n: int) -> str:  # digits would be split off by the lexical index: letters only
        return "".join(chr(ord("a") + int(d)) for d in str(n))

    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (root / f"m{i}.py").write_text(
            "".join(f"def mod{word(i)}_fn{word(j)}(x):\n    return x * {j} + {i}\n\n\n" for j in range(defs))
        )
    return root


def holder_pid(store_dir: Path) -> int | None:
    """The pid the writer lock file names (who holds it, or last held it)."""
    try:
        text = (store_dir / "lock").read_text()
    except OSError:
        return None
    parts = text.split()
    return int(parts[1]) if len(parts) > 1 and parts[0] == "pid" and parts[1].isdigit() else None


def lock_free(store_dir: Path) -> bool:
    lock = WriterLock(store_dir)
    try:
        lock.acquire()
    except LockHeld:
        return False
    lock.release()
    return True


def wait_lock_free(store_dir: Path, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_free(store_dir):
            return True
        time.sleep(0.1)
    return False
