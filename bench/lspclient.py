"""Driving ``python -m kenning serve`` (or another language server) over stdio for timings.

Built on the tests' raw JSON-RPC client (``tests/rawlsp.py``): every message is stamped with
the ``time.perf_counter()`` at which the reader thread received it, and the process's peak RSS,
CPU time and bytes written come from ``/proc``.
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
from pathlib import Path
from typing import Any

from tests.rawlsp import RawServer

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
        cwd = self._cwd
        env = {"PYTHONUNBUFFERED": "1", "PYTHONSAFEPATH": "1", **(env or {})}
        self.started = time.perf_counter()
        if cmd is None:
            super().__init__(cwd=cwd, env=env)
            return
        # Another server: the same plumbing as RawServer, another command line.
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.messages = queue.Queue()
        self.notifications = []
        self._next_id = 0
        self.stderr_lines = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        """RawServer's reader, plus a receive stamp on every message and replies that other
        servers accept (``workspace/configuration`` wants one item per section asked for)."""
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
            msg = json.loads(out.read(length))
            msg[STAMP] = time.perf_counter()
            if "id" in msg and "method" in msg:
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [None] * len((msg.get("params") or {}).get("items", []))
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            self.messages.put(msg)

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

    def wait_status(self, predicate: Any, timeout: float, *, after: float = 0.0) -> dict[str, Any]:
        """The first ``kenning/indexStatus`` received at or after ``after`` whose params satisfy
        ``predicate`` (a notification received earlier is still looked at)."""

        def wanted(n: dict[str, Any]) -> bool:
            return (
                n.get("method") == "kenning/indexStatus"
                and n.get(STAMP, 0.0) >= after
                and predicate(n["params"])
            )

        for n in self.notifications:
            if wanted(n):
                return n
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.messages.get(timeout=0.1)
            except queue.Empty:
                if not self.alive():
                    raise RuntimeError("the server exited: " + "".join(self.stderr_lines[-20:])) from None
                continue
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)
                if wanted(msg):
                    return msg
        raise TimeoutError(f"no matching kenning/indexStatus within {timeout}s")

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
