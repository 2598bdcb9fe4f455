"""A folder's first job: the model loads beside the store's open and the scan, exactly once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kenning.config import Config
from kenning.embedding.model import ModelError
from kenning.folder import FolderIndex


class QuietReporter:
    def status(self, folder: FolderIndex) -> None:
        pass

    def progress_begin(self, folder: FolderIndex, title: str) -> str | None:
        return None

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        pass

    def progress_end(self, token: str, message: str) -> None:
        pass

    def progress_cancelled(self, token: str) -> bool:
        return False


@pytest.fixture(scope="module")
def encoder() -> Any:
    from kenning.embedding import Encoder

    return Encoder.load()


def wait_state(folder: FolderIndex, state: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while folder.status().state != state:
        assert time.monotonic() < deadline, folder.status()
        time.sleep(0.05)


def test_the_model_loads_once_beside_the_open(workspace: Path, encoder: Any) -> None:
    calls: list[str] = []
    release = threading.Event()

    def factory(_config: Config) -> Any:
        calls.append(threading.current_thread().name)
        release.wait(30)  # the store opens and the scan runs while the model "loads"
        return encoder

    folder = FolderIndex(workspace.as_uri(), workspace, Config(), QuietReporter(), encoder_factory=factory)
    folder.start(index_now=True)
    try:
        assert folder.opened.wait(30)
        deadline = time.monotonic() + 30
        while folder.engine.status().files < 5:  # scanned while the model was still loading
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert folder.status().state != "ready"
        release.set()
        wait_state(folder, "ready")
        assert calls == ["kenning-model-load"]  # bind_model waited for it, did not load again
        assert folder.engine.dense_available()
    finally:
        release.set()
        folder.stop()


def test_a_model_that_fails_in_the_preload_leaves_lexical_search(workspace: Path) -> None:
    calls = 0

    def broken(_config: Config) -> Any:
        nonlocal calls
        calls += 1
        raise ModelError("no such model")

    folder = FolderIndex(workspace.as_uri(), workspace, Config(), QuietReporter(), encoder_factory=broken)
    folder.start(index_now=True)
    try:
        wait_state(folder, "ready")
        assert calls == 1
        assert folder.engine.model_error is not None and "no such model" in folder.engine.model_error
        assert folder.engine.status().files == 5
    finally:
        folder.stop()
