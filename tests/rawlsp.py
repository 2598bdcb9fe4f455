"""A bare JSON-RPC-over-stdio client for tests that must send what a well-behaved client never
would: malformed params for typed methods, broken framing, raw bytes."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SERVER_CMD = [sys.executable, "-m", "kenning", "serve"]


class RawServer:
    def __init__(
        self, cwd: Path | None = None, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
    ) -> None:
        self.proc = subprocess.Popen(
            [*SERVER_CMD, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                continue
            body = out.read(length)
            msg = json.loads(body)
            if "id" in msg and "method" in msg:  # a request from the server: accept it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            self.messages.put(msg)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any, *, send_params: bool = True) -> Any:
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if send_params:
            msg["params"] = params
        self.send(msg)
        return self._next_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_response(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if msg.get("id") == msg_id and "method" not in msg:
                return msg
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)
        raise TimeoutError(f"no response to request {msg_id} within {timeout}s")

    def call(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait_response(self.request(method, params), timeout)

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": False}},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options or {},
            },
        )
        self.notify("initialized", {})
        return resp

    def wait_notification(self, predicate, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for n in self.notifications:
            if predicate(n):
                return n
        while time.monotonic() < deadline:
            try:
                msg = self.messages.get(timeout=0.1)
            except queue.Empty:
                continue
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)
                if predicate(msg):
                    return msg
        raise TimeoutError("notification not seen")

    def wait_ready(self, timeout: float = 120.0) -> dict[str, Any]:
        return self.wait_notification(
            lambda n: n.get("method") == "kenning/indexStatus" and n["params"]["state"] == "ready",
            timeout,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> int:
        if self.alive():
            try:
                self.call("shutdown", None, timeout=20)
                self.notify("exit", None)
                return self.proc.wait(timeout=20)
            except (TimeoutError, BrokenPipeError, OSError):
                self.proc.kill()
        return self.proc.wait(timeout=20)
