"""Driving a language server over stdio: the one JSON-RPC client of the tests and benchmarks.

``RawServer`` sends whatever a test wants (malformed params, broken framing, raw bytes) and
reads replies and notifications; ``tests/reliability/client.py`` files every reply by id on top
of it, and ``BenchServer`` here stamps every message with the ``time.perf_counter()`` at which
the reader received it and reads the process's peak RSS, CPU time and bytes written from
``/proc``. Lives in ``bench/`` because the benchmarks never import ``tests/`` (tests may import
``bench``).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER_CMD = [sys.executable, "-m", "kenning", "serve"]


class RawServer:
    """One language server process over stdio, and the one reader of its messages.

    Replies and notifications go to a queue that ``wait_response`` / ``wait_notification``
    consume (a reply nobody waits for is dropped); a request from the server is answered
    (``_answer``). Subclasses change where messages are filed (``_file``): the reliability
    suite's ``Client`` keeps every reply by id, ``BenchServer`` stamps each with its arrival time.
    Set a subclass's own fields before calling ``__init__``: the reader starts there.
    """

    def __init__(
        self,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        cmd: list[str] | None = None,
    ) -> None:
        self.protocol_errors: list[str] = []  # what the server sent that is not JSON-RPC framing
        self.proc = subprocess.Popen(
            cmd or [*SERVER_CMD, *args],
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
                    self._on_eof()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                self.protocol_errors.append("a header block without Content-Length")
                continue
            body = out.read(length)
            try:
                msg = json.loads(body)
            except ValueError:
                self.protocol_errors.append(f"a body that is not JSON: {body[:200]!r}")
                continue
            if "id" in msg and "method" in msg:  # a request from the server: answer it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self._answer(msg)})
            self._file(msg)

    def _answer(self, request: dict[str, Any]) -> Any:
        """The result sent back for a request from the server."""
        return None

    def _file(self, msg: dict[str, Any]) -> None:
        """Keep a received message for the waits below."""
        self.messages.put(msg)

    def _on_eof(self) -> None:
        """The server closed its stdout."""

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


STAMP = "_t"  # key added to every received message: when the reader got it


class BenchServer(RawServer):
    """A language server process with timestamps and /proc readings.

    ``cmd`` defaults to kenning's server; pass another server's command line to compare.
    """

    def __init__(self, *, cmd: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        # The workspace reaches the server through `initialize`, never as its working
        # directory: `python -m` puts that first on sys.path, and a copy of the standard
        # library there would shadow the real one (and get __pycache__ written into it).
        self._cwd = Path(tempfile.mkdtemp(prefix="kenning-bench-cwd-"))
        env = {"PYTHONUNBUFFERED": "1", "PYTHONSAFEPATH": "1", **(env or {})}
        self.started = time.perf_counter()
        super().__init__(cwd=self._cwd, env=env, cmd=cmd)

    def _answer(self, request: dict[str, Any]) -> Any:
        # Other servers want a reply they accept: one item per configuration section asked for.
        if request["method"] == "workspace/configuration":
            return [None] * len((request.get("params") or {}).get("items", []))
        return None

    def _file(self, msg: dict[str, Any]) -> None:
        msg[STAMP] = time.perf_counter()
        super()._file(msg)

    # -- protocol ------------------------------------------------------------------------------

    def initialize_workspace(
        self, root: Path, options: dict[str, Any] | None = None, timeout: float = 120.0
    ) -> dict[str, Any]:
        """``initialize`` + ``initialized`` as an editor that watches files would send them (so
        kenning does not poll the disk)."""
        resp = self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "rootPath": str(root),
                "capabilities": {
                    "window": {"workDoneProgress": False},
                    "workspace": {
                        "didChangeWatchedFiles": {"dynamicRegistration": True},
                        "symbol": {"dynamicRegistration": False},
                        "workspaceFolders": True,
                    },
                    "textDocument": {"synchronization": {"didSave": True}},
                },
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options or {},
            },
            timeout=timeout,
        )
        self.notify("initialized", {})
        return resp

    def timed_call(self, method: str, params: Any, timeout: float = 120.0) -> tuple[float, dict[str, Any]]:
        """(milliseconds from sending to the reply's arrival, the reply)."""
        sent = time.perf_counter()
        reply = self.call(method, params, timeout=timeout)
        return (reply[STAMP] - sent) * 1000, reply

    def search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 20,
        paths: list[str] | None = None,
        timeout: float = 120.0,
    ) -> tuple[float, dict[str, Any]]:
        params: dict[str, Any] = {"query": query, "mode": mode, "limit": limit}
        if paths:
            params["filters"] = {"paths": paths}
        return self.timed_call("workspace/semanticSearch", params, timeout)

    def _wait_for(self, wanted: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any] | None:
        """The first notification ``wanted`` accepts, received earlier or within ``timeout``
        seconds; None when the time is up or the server has exited (``alive`` tells which)."""
        for n in self.notifications:
            if wanted(n):
                return n
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.messages.get(timeout=0.1)
            except queue.Empty:
                if not self.alive():
                    return None
                continue
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)
                if wanted(msg):
                    return msg
        return None

    def wait_status(self, predicate: Any, timeout: float, *, after: float = 0.0) -> dict[str, Any]:
        """The first ``kenning/indexStatus`` received at or after ``after`` whose params satisfy
        ``predicate`` (a notification received earlier is still looked at)."""

        def wanted(n: dict[str, Any]) -> bool:
            return (
                n.get("method") == "kenning/indexStatus"
                and n.get(STAMP, 0.0) >= after
                and predicate(n["params"])
            )

        found = self._wait_for(wanted, timeout)
        if found is not None:
            return found
        if not self.alive():
            raise RuntimeError("the server exited: " + "".join(self.stderr_lines[-20:]))
        raise TimeoutError(f"no matching kenning/indexStatus within {timeout}s")

    def wait_log(self, prefix: str, timeout: float) -> dict[str, Any] | None:
        """The first ``window/logMessage`` whose message starts with ``prefix``, waiting up to
        ``timeout`` seconds; None if none came (another server, or a log level that hides it)."""

        def wanted(n: dict[str, Any]) -> bool:
            message = str(n.get("params", {}).get("message", ""))
            return n.get("method") == "window/logMessage" and message.startswith(prefix)

        return self._wait_for(wanted, timeout)

    def wait_state(self, state: str, timeout: float = 3600.0, *, after: float = 0.0) -> dict[str, Any]:
        return self.wait_status(lambda p: p["state"] == state, timeout, after=after)

    # -- the process ---------------------------------------------------------------------------

    def _proc_file(self, name: str) -> str:
        with open(f"/proc/{self.proc.pid}/{name}", encoding="utf-8") as fh:
            return fh.read()

    def memory_mib(self) -> dict[str, float]:
        """VmRSS (now) and VmHWM (peak) in MiB."""
        out: dict[str, float] = {}
        for line in self._proc_file("status").splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
        return out

    def cpu_seconds(self) -> float:
        fields = self._proc_file("stat").rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    def io(self) -> dict[str, int]:
        try:
            text = self._proc_file("io")
        except OSError:
            return {}
        return {k: int(v) for k, _, v in (line.partition(": ") for line in text.splitlines())}

    def stop(self) -> None:
        try:
            self.close()
        except Exception:
            if self.alive():
                self.proc.kill()
        shutil.rmtree(self._cwd, ignore_errors=True)


def python_module_cmd(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]
