"""Fixtures for the reliability suite: the tiny model, generated workspaces, server processes.

Every server runs as a subprocess (a segfault fails the test, not the runner) and is killed at
teardown whatever happened; its stderr is printed when a test fails.
"""

from __future__ import annotations

import errno
import hashlib
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.client import Client
from tests.reliability.tinymodel import build_tiny_model

StartServer = Callable[..., Client]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "model")


@pytest.fixture
def slow(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--slow"))


def module_text(index: int, token: str, functions: int = 3) -> str:
    """A small Python module whose only occurrence of ``token`` is on line 10 (1-based)."""
    lines = [
        f'"""Module {index} of the generated workspace."""',
        "",
        "",
        f"class Holder{index}:",
        '    """Keeps a value and returns it."""',
        "",
        "    def __init__(self, value):",
        "        self.value = value",
        "",
        f'    def marker(self): return "{token}"',
        "",
    ]
    for f in range(functions):
        lines += [
            "",
            f"def helper_{index}_{f}(items, factor={f + 1}):",
            "    total = 0",
            "    for item in items:",
            f"        total += item * factor + {index}",
            "    return total",
            "",
        ]
    return "\n".join(lines)


TOKEN_LINE = 10  # 1-based line of the token in module_text


def token_for(index: int, version: int) -> str:
    """A made-up word unique to (index, version): letters only, so no tokenizer splits it."""
    digest = hashlib.blake2b(f"{index}/{version}".encode(), digest_size=6).digest()
    return "qz" + "".join(chr(ord("a") + b % 26) for b in digest) + "xq"


def generate_workspace(root: Path, count: int, *, seed: int = 1, functions: int = 3) -> dict[str, str]:
    """``count`` modules in a few packages; returns {relative path: its unique token}."""
    rng = random.Random(seed)
    tokens: dict[str, str] = {}
    for i in range(count):
        rel = f"pkg{rng.randrange(8)}/mod_{i}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tokens[rel] = token_for(i, 0)
        path.write_text(module_text(i, tokens[rel], functions))
    return tokens


@pytest.fixture
def start_server(request: pytest.FixtureRequest) -> Iterator[StartServer]:
    started: list[Client] = []

    def start(
        root: Path | None = None,
        options: dict[str, Any] | None = None,
        *,
        env: dict[str, str] | None = None,
        initialize: bool = True,
        watch_files: bool = False,
    ) -> Client:
        client = Client(env=env)
        started.append(client)
        if initialize and root is not None:
            reply = client.initialize(root, options, watch_files=watch_files)
            assert "result" in reply, reply
        return client

    yield start
    failed = getattr(request.node, "rep_call", None)
    for client in started:
        client.kill()
        if failed is not None and failed.failed:
            tail = "".join(client.stderr_lines[-40:])
            print(f"--- server {client.proc.pid} stderr (last 40 lines) ---\n{tail}", file=sys.stderr)
            print("--- its log messages ---\n" + "\n".join(client.log_lines()[-40:]), file=sys.stderr)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    rep = yield
    if rep.when == "call":
        item.rep_call = rep  # type: ignore[attr-defined]
    return rep


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs to fill up (the test is skipped where mounting is not allowed)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mnt)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=10)


def fill_disk(directory: Path) -> Path:
    """Write until the file system is full; return the filler file."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as f:  # unbuffered: close() has nothing left to flush
        block = b"\0" * 65536
        try:
            while True:
                f.write(block)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler
