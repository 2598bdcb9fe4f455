"""The working set is embedded first: open files, then recently modified ones, then the rest,
with the real model, and the id walk's mark (EMBEDDED_THROUGH) never claims what it skipped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.folder import FolderIndex
from kenning.indexer import IndexProgress, embed_pending, embedder, scan
from kenning.store.schema import EMBEDDED_THROUGH
from kenning.workset import WorkingSet, embed_order, recently_modified
from tests.conftest import write_workspace

FILES = {f"pkg/mod{i:02d}.py": f"def helper_{i}(value):\n    return value * {i}\n" for i in range(40)}


def _embedded_paths(engine: Engine) -> dict[str, bool]:
    """Each indexed file: whether every one of its chunks has a vector."""
    assert engine.db is not None
    rows = engine.db.reader().execute(
        "SELECT f.path, min(EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key))"
        " FROM files f JOIN chunks c ON c.file_id = f.id GROUP BY f.path"
    )
    return {str(p): bool(done) for p, done in rows}


def _in_graph(engine: Engine, path: str) -> bool:
    assert engine.db is not None and engine.vectors is not None
    ids = [
        int(r[0])
        for r in engine.db.reader().execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?", (path,)
        )
    ]
    keys = set(engine.vectors.keys().tolist())
    return bool(ids) and all(i in keys for i in ids)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Batches of 4 chunks: the 40 one-chunk files take ten batches, so order is observable.
    monkeypatch.setattr(embedder, "EMBED_BATCH", 4)


def test_only_first_embeds_the_working_set_and_leaves_the_mark(tmp_path: Path, small_batches: None) -> None:
    ws = write_workspace(tmp_path / "ws", FILES)
    with Engine(ws, Config()).open() as engine:
        scan(engine)
        wanted = ["pkg/mod39.py", "pkg/mod31.py", "pkg/mod35.py", "pkg/mod30.py", "pkg/mod33.py"]
        report = embed_pending(engine, first=lambda: wanted, only_first=True)
        assert not report.cancelled and report.embedded == 5
        done = _embedded_paths(engine)
        assert {p for p, d in done.items() if d} == set(wanted)
        assert all(_in_graph(engine, p) for p in wanted)  # searchable now, not at the end
        assert engine.db is not None
        assert engine.db.get_meta(EMBEDDED_THROUGH) is None  # the walk has not started
        assert engine.status().pending == len(FILES) - 5

        # The rest follows; the walk skips what the working set already has, and ends marked.
        rest = embed_pending(engine)
        assert rest.embedded == len(FILES) - 5
        assert all(_embedded_paths(engine).values())
        top = engine.db.reader().execute("SELECT max(id) FROM chunks").fetchone()[0]
        assert engine.db.get_meta(EMBEDDED_THROUGH) == str(top)
        assert engine.vectors is not None and len(engine.vectors) == engine.status().chunks


def test_working_set_goes_first_and_a_file_opened_midway_jumps_the_queue(
    tmp_path: Path, small_batches: None
) -> None:
    ws = write_workspace(tmp_path / "ws", FILES)
    with Engine(ws, Config()).open() as engine:
        scan(engine)
        wanted = ["pkg/mod38.py", "pkg/mod20.py"]
        snapshots: list[dict[str, bool]] = []

        def progress(_p: IndexProgress) -> None:
            snapshots.append(_embedded_paths(engine))
            if len(snapshots) == 2:
                wanted.insert(0, "pkg/mod39.py")  # opened in the editor during the pass

        embed_pending(engine, progress=progress, first=lambda: list(wanted))
        # Batch 1: the two working-set files (and two more of the walk would not fit: a
        # working-set batch holds only its own files' chunks).
        first_done = {p for p, d in snapshots[0].items() if d}
        assert first_done == {"pkg/mod38.py", "pkg/mod20.py"}
        # The batch after the file was opened embeds it, long before the walk would reach it.
        assert snapshots[2]["pkg/mod39.py"]
        assert sum(snapshots[2].values()) < len(FILES) // 2
        assert all(snapshots[-1].values())


def test_killed_after_the_working_set_resumes_consistently(tmp_path: Path, small_batches: None) -> None:
    ws = write_workspace(tmp_path / "ws", FILES)
    with Engine(ws, Config()).open() as engine:
        scan(engine)
        batches: list[IndexProgress] = []

        def should_stop() -> bool:
            return len(batches) >= 2  # two batches, then stop (a kill, in effect)

        report = embed_pending(
            engine, progress=batches.append, should_stop=should_stop, first=lambda: ["pkg/mod39.py"]
        )
        assert report.cancelled
        assert _embedded_paths(engine)["pkg/mod39.py"]
    # A new process: the graph saved at the stop is reconciled with SQLite; nothing is lost and
    # nothing is embedded twice.
    with Engine(ws, Config()).open() as engine:
        before = engine.status().pending
        report = embed_pending(engine)
        assert report.embedded == before
        assert all(_embedded_paths(engine).values())
        assert engine.vectors is not None and len(engine.vectors) == engine.status().chunks


def test_recently_modified_files_come_first(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws", FILES)
    base = 1_600_000_000
    for i, rel in enumerate(sorted(FILES)):
        os.utime(ws / rel, (base + i, base + i))
    os.utime(ws / "pkg/mod05.py", (base + 10_000, base + 10_000))  # edited last
    with Engine(ws, Config()).open() as engine:
        scan(engine)
        recent = recently_modified(engine, limit=3)
        assert recent == ["pkg/mod05.py", "pkg/mod39.py", "pkg/mod38.py"]
        assert embed_order(["pkg/mod38.py", "a.py"], recent) == [
            "pkg/mod38.py",
            "a.py",
            "pkg/mod05.py",
            "pkg/mod39.py",
        ]


def test_working_set_keeps_the_most_recent_opened_first() -> None:
    opened = WorkingSet()
    for name in ("a.py", "b.py", "c.py", "a.py"):
        opened.opened(name)
    assert opened.paths() == ["a.py", "c.py", "b.py"]
    for i in range(100):
        opened.opened(f"f{i}.py")
    paths = opened.paths()
    assert len(paths) == 64 and paths[0] == "f99.py"
    assert np.all([p.startswith("f") for p in paths])


class _Recorder:
    """A folder's reporter that opens a file in the editor once the full scan is under way,
    and notes whether that file had its vectors when the scan ended."""

    def __init__(self, opened: str) -> None:
        self.opened = opened
        self.folder: FolderIndex | None = None
        self.scan_reports = 0
        self.embedded_when_scan_ended: bool | None = None
        self.messages: list[str] = []

    def status(self, folder: FolderIndex) -> None:
        if folder.engine.state == "embedding" and self.embedded_when_scan_ended is None:
            self.embedded_when_scan_ended = _embedded_paths(folder.engine).get(self.opened)

    def progress_begin(self, folder: FolderIndex, title: str) -> str | None:
        return "token"

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        self.messages.append(message)
        if message.endswith(" files"):
            self.scan_reports += 1
            if self.scan_reports == 1 and self.folder is not None:
                self.folder.file_opened(self.opened)  # the user opens it during the scan

    def progress_end(self, token: str, message: str) -> None:
        self.messages.append(message)

    def progress_cancelled(self, token: str) -> bool:
        return False


def test_a_file_opened_during_the_full_scan_is_embedded_before_the_scan_ends(tmp_path: Path) -> None:
    files = {f"pkg/m{i:03d}.py": f"def helper_{i}(value):\n    return value * {i}\n" for i in range(600)}
    opened = "zz/late.py"
    files[opened] = "def settle(lines, rate):\n    return sum(lines) * (1 + rate)\n"
    ws = write_workspace(tmp_path / "ws", files)
    recorder = _Recorder(opened)
    folder = FolderIndex(ws.as_uri(), ws, Config(), recorder)
    recorder.folder = folder
    folder.start(index_now=True)
    try:
        deadline = time.monotonic() + 300
        while folder.engine.state != "ready" or folder.jobs_run == 0:
            assert time.monotonic() < deadline, recorder.messages[-5:]
            time.sleep(0.1)
    finally:
        folder.stop()
    assert recorder.scan_reports >= 2  # the scan took several batches: the file came midway
    assert recorder.embedded_when_scan_ended is True
    assert "embedding the open files first" in recorder.messages
