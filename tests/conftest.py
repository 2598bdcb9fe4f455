"""Shared fixtures: a small real workspace on disk, and a model cache shared by the session."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

# One optimised-graph build per test session, not one per test (and never in the user's home).
_CACHE = Path(os.environ.get("KENNING_TEST_CACHE", "/tmp/kenning-test-cache"))
# The store key (kenning.store.trust) too: every test process and server shares one, never the user's.
os.environ.setdefault("KENNING_STATE_DIR", str(_CACHE / "state"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def private_cache_dir(directory: Path) -> Path:
    """A cache directory of its own (an empty shared embedding cache) that still reuses the
    session's optimised model graphs through a ``models`` link."""
    models = _CACHE / "models"
    models.mkdir(parents=True, exist_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "models"
    if not link.exists():
        link.symlink_to(models, target_is_directory=True)
    return directory


# Fixtures wider than one test (module or session servers) get a cache of this session's own;
# every test then gets a fresh one (below): no test ever sees another's shared embedding cache
# or the user's.
_SESSION_CACHE = Path(tempfile.mkdtemp(prefix="kenning-cache-"))
os.environ["KENNING_CACHE_DIR"] = str(private_cache_dir(_SESSION_CACHE))
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _private_kenning_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = private_cache_dir(tmp_path_factory.mktemp("kenning-cache"))
    monkeypatch.setenv("KENNING_CACHE_DIR", str(cache))
    monkeypatch.delenv("KENNING_CACHE_MAX", raising=False)
    monkeypatch.delenv("KENNING_SHARED_CACHE", raising=False)
    # The pytest-lsp servers' environment was copied when tests/lsp/conftest.py was imported.
    lsp = sys.modules.get("tests.lsp.conftest")
    if lsp is not None:
        monkeypatch.setitem(lsp.SERVER_ENV, "KENNING_CACHE_DIR", str(cache))
    return cache


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="run the long loops (crash rounds, fuzz cases) at full size",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="needs --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


FILES: dict[str, str] = {
    "uploads.py": '''
        """Upload files to the storage service."""

        import random
        import time


        class UploadRetryPolicy:
            """How often and how long to wait before sending a failed upload again."""

            def __init__(self, attempts: int = 5, base_delay: float = 0.5) -> None:
                self.attempts = attempts
                self.base_delay = base_delay

            def should_retry(self, attempt: int, status: int) -> bool:
                return attempt < self.attempts and status >= 500

            def backoff(self, attempt: int) -> float:
                return self.base_delay * (2 ** attempt) + random.random()


        def upload_with_retries(client, path, policy: UploadRetryPolicy):
            attempt = 0
            while True:
                status = client.put(path)
                if status < 400 or not policy.should_retry(attempt, status):
                    return status
                time.sleep(policy.backoff(attempt))
                attempt += 1
    ''',
    "geometry.py": """
        import math


        def circle_area(radius: float) -> float:
            return math.pi * radius * radius


        def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
            return math.hypot(a[0] - b[0], a[1] - b[1])
    """,
    "web/headers.js": """
        // Turn a raw header block into a map of lower-cased names to values.
        export function parseHttpHeader(raw) {
          const headers = new Map();
          for (const line of raw.split("\\r\\n")) {
            const idx = line.indexOf(":");
            if (idx > 0) headers.set(line.slice(0, idx).trim().toLowerCase(), line.slice(idx + 1).trim());
          }
          return headers;
        }

        export class CookieJar {
          constructor() { this.cookies = []; }
          add(cookie) { this.cookies.push(cookie); }
        }
    """,
    "server/db.go": """
        package server

        import "database/sql"

        // OpenDatabase connects to the SQL database and checks the connection.
        func OpenDatabase(dsn string) (*sql.DB, error) {
            db, err := sql.Open("postgres", dsn)
            if err != nil {
                return nil, err
            }
            return db, db.Ping()
        }
    """,
    "docs/guide.md": """
        # Guide

        Install the tool, then configure it.

        ## Installation

        Run the installer and restart your shell.

        ```sh
        ./install.sh --prefix ~/.local
        ```

        ## Configuration

        | key | meaning |
        |-----|---------|
        | retries | how many times an upload is attempted |
    """,
}


def write_workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    for rel, text in (files or FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws")


def git_init(root: Path) -> None:
    git = shutil.which("git")
    assert git, "git is needed for these tests"
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
        ["add", "-A"],
        ["commit", "-qm", "init"],
    ):
        subprocess.run([git, *args], cwd=root, check=True, capture_output=True)
