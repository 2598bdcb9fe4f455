"""A raw LSP client that keeps every reply, for tests that send many requests at once.

``bench.lspclient.RawServer`` (the one JSON-RPC client) drops replies it is not waiting for;
here each reply is filed by id and counted, so a test can check that every request got exactly
one answer, in any order. It also reads the server's memory and thread count from ``/proc``.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.lspclient import RawServer

# Generous: the machine is shared with other test runs.
TIMEOUT = 60.0


class Client(RawServer):
    def __init__(
        self, cwd: Path | None = None, env: dict[str, str] | None = None, cmd: list[str] | None = None
    ) -> None:
        # Set before RawServer starts its reader.
        self.replies: dict[Any, dict[str, Any]] = {}
        self.reply_counts: Counter[Any] = Counter()
        self.received: list[dict[str, Any]] = []  # notifications, in order
        self._cv = threading.Condition()
        super().__init__(cwd, {"PYTHONUNBUFFERED": "1", **(env or {})}, cmd=cmd)

    # -- reading -------------------------------------------------------------------------------

    def _on_eof(self) -> None:
        with self._cv:
            self._cv.notify_all()

    def _file(self, msg: dict[str, Any]) -> None:
        if "method" in msg and "id" in msg:  # a request from the server, answered already
            return
        with self._cv:
            if "method" in msg:
                self.received.append(msg)
            else:
                key = _key(msg.get("id"))
                self.reply_counts[key] += 1
                self.replies[key] = msg
            self._cv.notify_all()

    def wait_response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        key = _key(msg_id)
        deadline = time.monotonic() + timeout
        with self._cv:
            while key not in self.replies:
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    raise TimeoutError(
                        f"no reply to request {msg_id} within {timeout}s (alive: {self.alive()})"
                    )
                self._cv.wait(min(left, 0.5))
            return self.replies[key]

    def wait_notification(self, predicate, timeout: float = TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cv:
            while True:
                for msg in self.received[seen:]:
                    if predicate(msg):
                        return msg
                seen = len(self.received)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"notification not seen within {timeout}s")
                self._cv.wait(min(left, 0.5))

    def initialize(
        self, root: Path, options: dict[str, Any] | None = None, *, watch_files: bool = False
    ) -> dict[str, Any]:
        """``initialize`` + ``initialized``; ``watch_files`` says the client watches files (so
        the server registers for watched-file events instead of polling)."""
        caps: dict[str, Any] = {"window": {"workDoneProgress": False}}
        if watch_files:
            caps["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
        resp = self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": caps,
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options or {},
            },
        )
        self.notify("initialized", {})
        return resp

    def statuses(self) -> list[dict[str, Any]]:
        with self._cv:
            return [m["params"] for m in self.received if m.get("method") == "kenning/indexStatus"]

    def wait_state(self, state: str, timeout: float = TIMEOUT, after: int = 0) -> dict[str, Any]:
        count = 0

        def match(msg: dict[str, Any]) -> bool:
            nonlocal count
            if msg.get("method") != "kenning/indexStatus":
                return False
            count += 1
            return count > after and msg["params"]["state"] == state

        return self.wait_notification(match, timeout)["params"]

    def log_lines(self) -> list[str]:
        with self._cv:
            return [
                m["params"]["message"]
                for m in self.received
                if m.get("method") in ("window/logMessage", "window/showMessage")
            ]

    def show_messages(self) -> list[str]:
        with self._cv:
            return [m["params"]["message"] for m in self.received if m.get("method") == "window/showMessage"]

    # -- helpers ---------------------------------------------------------------------------------

    def search(self, query: str, timeout: float = TIMEOUT, **extra: Any) -> dict[str, Any]:
        reply = self.call("workspace/semanticSearch", {"query": query, **extra}, timeout)
        assert "result" in reply, reply
        return reply["result"]  # type: ignore[no-any-return]

    def command(self, name: str, *args: Any, timeout: float = TIMEOUT) -> Any:
        params: dict[str, Any] = {"command": name}
        if args:
            params["arguments"] = list(args)
        reply = self.call("workspace/executeCommand", params, timeout)
        assert "result" in reply, reply
        return reply["result"]

    def status_line(self, key: str) -> str:
        """The line ``key:`` of /proc/<pid>/status (VmRSS, Threads, ...)."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(key + ":"))

    def rss_kib(self) -> int:
        return int(self.status_line("VmRSS").split()[0])

    def threads(self) -> int:
        return int(self.status_line("Threads"))

    def kill(self) -> None:
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=20)


def _key(msg_id: Any) -> Any:
    return json.dumps(msg_id)  # ids may be null, numbers or strings; keep them distinct
