"""The folder worker's reporter seam (kenning.folder.Reporter): what a folder tells its client,
and in which order, for a first full job, an edit, and a job cancelled from the client's side.
The language server and ``kenning mcp`` send exactly these to their clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import kenning.folder as folder_module
from kenning.config import Config
from kenning.folder import CLOSING_MESSAGE, OPENING_MESSAGE, FolderIndex

Event = tuple[object, ...]


class Recorder:
    """A reporter that writes down every call; ``cancel_on`` cancels the job (as the client's
    Cancel button does) once a progress message contains it."""

    def __init__(self, cancel_on: str | None = None) -> None:
        self.events: list[Event] = []
        self.cancel_on = cancel_on
        self.cancelled = False
        self._changed = threading.Condition()

    def _add(self, event: Event) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait(self, predicate: Callable[[list[Event]], bool], timeout: float = 120.0) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: predicate(self.events), timeout), self.events

    def status(self, folder: FolderIndex) -> None:
        st = folder.status()
        self._add(("status", st.state, st.pending > 0))

    def progress_begin(self, folder: FolderIndex, title: str) -> str | None:
        self._add(("begin", title))
        return "token"

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        self._add(("report", message.split(",")[0], percentage))  # without the ETA, which varies
        if self.cancel_on is not None and self.cancel_on in message:
            self.cancelled = True

    def progress_end(self, token: str, message: str) -> None:
        self._add(("end", message))

    def progress_cancelled(self, token: str) -> bool:
        return self.cancelled


@pytest.fixture(autouse=True)
def _statuses_only_when_forced_or_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    # The throttled status sent on progress goes out when the state moved, never by the clock.
    monkeypatch.setattr(folder_module, "STATUS_INTERVAL_S", 1e9)


def _ended(events: list[Event]) -> bool:
    """The job's progress ended and its last status went out."""
    return len(events) >= 2 and events[-2][0] == "end"


def _run_first_job(workspace: Path, recorder: Recorder) -> FolderIndex:
    folder = FolderIndex(workspace.as_uri(), workspace, Config(), recorder)
    folder.start(index_now=True)
    recorder.wait(_ended)
    return folder


def test_a_first_full_job_reports_each_phase_then_the_end(workspace: Path) -> None:
    recorder = Recorder()
    folder = _run_first_job(workspace, recorder)
    try:
        chunks = folder.engine.status().chunks
        assert recorder.events == [
            ("status", "scanning", False),  # the store is open
            ("begin", f"kenning: indexing {workspace.name}"),
            ("status", "scanning", False),  # the scan began
            ("report", "5/5 files", 20),
            ("status", "embedding", True),  # the embedding pass began
            ("report", f"embedding {chunks}/{chunks} chunks", 100),
            ("end", "done"),
            ("status", "ready", False),
        ]
        # An edit: a quiet job (no progress UI), told by its phases' statuses and its end.
        del recorder.events[:]
        (workspace / "utils.py").write_text("def renamed_helper():\n    return 1\n")
        folder.mark_dirty(["utils.py"])
        recorder.wait(lambda events: events[-1:] == [("status", "ready", False)])
        time.sleep(0.2)  # nothing more comes
        assert recorder.events == [
            ("status", "scanning", False),
            ("status", "embedding", True),
            ("status", "ready", False),
        ]
    finally:
        folder.stop()


def test_a_job_cancelled_during_its_scan_leaves_lexical_search_and_says_how_to_resume(
    workspace: Path,
) -> None:
    recorder = Recorder(cancel_on=" files")
    folder = _run_first_job(workspace, recorder)
    try:
        assert recorder.events[-3:] == [
            ("report", "5/5 files", 20),
            ("end", "cancelled: lexical search works; run kenning.reindex to resume"),
            ("status", "embedding", True),  # chunks wait for vectors; no embedding phase began
        ]
        assert ("status", "embedding", True) not in recorder.events[:-1]
    finally:
        folder.stop()


def test_a_job_cancelled_during_embedding_stays_embedding(workspace: Path) -> None:
    recorder = Recorder(cancel_on="embedding ")
    folder = _run_first_job(workspace, recorder)
    try:
        assert recorder.events[-2] == ("end", "embedding cancelled: lexical search works; reindex to resume")
        assert recorder.events[-1][:2] == ("status", "embedding")
        assert folder.engine.state == "embedding"
    finally:
        folder.stop()


def test_a_store_that_cannot_be_opened_is_an_error_status(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    recorder = Recorder()
    # A relative store path that leaves the workspace is refused (kenning.store.location).
    folder = FolderIndex(root.as_uri(), root, Config(store=Path("../outside")), recorder)
    folder.start(index_now=True)
    try:
        recorder.wait(lambda events: bool(events))
        assert recorder.events == [("status", "error", False)]
        assert folder.engine.state == "error" and folder.open_error is not None
        assert folder.status().message == folder.open_error
    finally:
        folder.stop()


def test_a_folder_not_yet_open_says_its_counts_are_unknown_not_zero(workspace: Path) -> None:
    folder = FolderIndex(workspace.as_uri(), workspace, Config(), Recorder())
    status = folder.status()  # not started: nothing is open
    assert (status.state, status.chunks, status.message) == ("scanning", 0, OPENING_MESSAGE)
    folder.mark_closing()
    assert folder.status().message == CLOSING_MESSAGE
