"""Offline by default: kenning, its model runtime included, reaches for no network.

onnxruntime's official builds send usage events to Microsoft from the moment they are imported
(DNS lookups of its collector every few seconds, a device id and an event queue under
``$XDG_CACHE_HOME/Microsoft``) unless ``ORT_DISABLE_TELEMETRY`` is set before they initialise;
``kenning/__init__.py`` sets it. These tests run the real processes with the variable unset in
their environment, as a user's shell or editor would start them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.lspclient import SERVER_CMD, BenchServer

from kenning.embedding.cache import cache_dir
from tests.conftest import write_workspace


def _working_strace() -> str | None:
    """strace, if it is installed and may trace here (containers can forbid ptrace)."""
    path = shutil.which("strace")
    if path is None:
        return None
    probe = subprocess.run([path, "-f", "-o", os.devnull, "true"], capture_output=True, check=False)
    return path if probe.returncode == 0 else None


STRACE = _working_strace()
# An IPv4/IPv6 socket of any kind: a DNS lookup, an HTTPS upload, a probe of the network.
INET_SOCKET = re.compile(r"socket\(AF_INET6?\b")


def _user_env(home: Path) -> dict[str, str]:
    """A user's environment: a home and cache of its own (where telemetry would leave its files),
    kenning's model cache shared with the other tests (no graph rebuild), no opt-out set."""
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        KENNING_CACHE_DIR=str(cache_dir()),
        KENNING_SHARED_CACHE="0",
    )
    return env


def _inet_sockets(trace: Path) -> list[str]:
    return [line for line in trace.read_text().splitlines() if INET_SOCKET.search(line)]


def test_kenning_index_leaves_no_telemetry_behind(tmp_path: Path) -> None:
    """`kenning index` embeds with the local model and writes nothing of onnxruntime's telemetry
    (its device id and event queue) into the user's home; under strace, opens no network socket."""
    root = write_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    trace = tmp_path / "index.strace"
    prefix = [STRACE, "-f", "-e", "trace=socket", "-o", str(trace)] if STRACE else []
    out = subprocess.run(
        [*prefix, sys.executable, "-m", "kenning", "index", str(root)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=_user_env(home),
    )
    assert out.returncode == 0, out.stderr
    assert "embedded" in out.stdout + out.stderr  # the model ran, so onnxruntime was initialised
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert not [p for p in left if "Microsoft" in p or "onnxruntime" in p], left
    if STRACE:
        assert _inet_sockets(trace) == []


@pytest.mark.skipif(STRACE is None, reason="no usable strace (.ci/run installs it)")
def test_language_server_opens_no_network_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server as an editor starts it: index, answer a semantic query, then sit idle past
    onnxruntime's first telemetry retry (~6 s); not one IPv4/IPv6 socket in all that time."""
    # The client passes this process's environment on, where importing kenning set the opt-out.
    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    root = write_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    trace = tmp_path / "serve.strace"
    cmd = [STRACE, "-f", "-e", "trace=socket", "-o", str(trace), *SERVER_CMD]
    server = BenchServer(cmd=cmd, env=_user_env(home))
    try:
        server.initialize_workspace(root)
        server.wait_state("ready", 300)
        _, reply = server.search("retry failed uploads", mode="semantic", limit=3)
        assert reply["result"]["results"], reply
        time.sleep(8)
    finally:
        server.stop()
    assert _inet_sockets(trace) == []
    assert not (home / ".cache" / "Microsoft").exists()
