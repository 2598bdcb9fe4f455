"""The chunk worker (``chunking/isolated.py``, ``chunking/worker.py``): tree-sitter runs in a
child process, so a file that sends a parser past any budget costs that file, not the server:
the indexer windows it and counts it."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from kenning.chunking import chunk_source, isolated
from kenning.chunking.isolated import ParserLimitError, chunk_isolated, chunk_later, stop_worker
from tests.chunking_helpers import src

# 8,000 lines of `/*` in a `.py` file (24 KB): tree-sitter-python's memory grows with the square
# of their number (2,000 took 1.4 GB, 4,000 took 5 GB), and 8,000 crashed it or took the machine.
CRASHES_THE_PARSER = "/*\n" * 8000

# 40,000 lines of a lone `\`: tree-sitter-python's time grows with their square (20,000 took 7 s,
# 40,000 took 30 s; a 2 MB file would take hours).
OUTLASTS_THE_TIMEOUT = "\\\n" * 40_000

GOOD = src(
    """
    def retry_upload(path):
        return path
    """
)


@pytest.fixture(autouse=True)
def fresh_worker() -> Iterator[None]:
    stop_worker()
    yield
    stop_worker()


def test_the_worker_chunks_as_this_process_does() -> None:
    samples = [
        (GOOD, "python"),
        ("package a\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n", "go"),
        ('<script lang="ts">\nfunction f(): void {}\n</script>\n<p>hi</p>\n', "svelte"),
        # Undecodable bytes arrive surrogate-escaped; they must cross the pipe unchanged.
        ("def f():\n    return '\udcff'\n", "python"),
    ]
    for text, language in samples:
        assert chunk_isolated("x", text, language) == chunk_source("x", text, language)


@pytest.fixture
def no_time_limit_before_the_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """The crash comes once the parser has taken the worker's 2 GiB, which on a busy machine can
    take longer than a 24 KB file's time limit (6 s): these tests are about the crash."""
    monkeypatch.setattr(isolated, "TIMEOUT_BASE", isolated.TIMEOUT)


@pytest.mark.usefixtures("no_time_limit_before_the_crash")
def test_a_file_that_crashes_the_parser_costs_only_that_file() -> None:
    with pytest.raises(ParserLimitError, match="the chunk worker stopped"):
        chunk_isolated("evil.py", CRASHES_THE_PARSER, "python")
    # The next file gets a new worker.
    assert [s.name for s in chunk_isolated("good.py", GOOD, "python").symbols] == ["retry_upload"]


def test_a_file_that_takes_too_long_stops_its_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    chunk_isolated("warm.py", GOOD, "python")  # the worker is up: its start is not timed
    monkeypatch.setattr(isolated, "TIMEOUT", 2.0)
    with pytest.raises(ParserLimitError, match="it took longer than 2 s"):
        chunk_isolated("slow.py", OUTLASTS_THE_TIMEOUT, "python")
    assert [s.name for s in chunk_isolated("good.py", GOOD, "python").symbols] == ["retry_upload"]


def _good(n: int) -> str:
    return f"def upload_{n}(path):\n    return path\n"


@pytest.mark.usefixtures("no_time_limit_before_the_crash")
def test_files_sent_ahead_are_answered_in_order_around_a_crash() -> None:
    # The indexer sends the next files before it asks for this one's chunks. When the worker
    # dies over one of them, that file alone fails; the ones sent after it go to a new worker.
    pending = [chunk_later(f"f{n}.py", _good(n), "python") for n in range(4)]
    pending.append(chunk_later("evil.py", CRASHES_THE_PARSER, "python"))
    pending += [chunk_later(f"f{n}.py", _good(n), "python") for n in range(4, 8)]
    names = []
    for file in pending:
        try:
            names.append([s.name for s in file.result().symbols])
        except ParserLimitError as error:
            names.append([str(error).split(" (")[0]])
    assert names == [[f"upload_{n}"] for n in range(4)] + [["the chunk worker stopped"]] + [
        [f"upload_{n}"] for n in range(4, 8)
    ]


def test_a_file_behind_a_slow_one_is_not_blamed_for_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    chunk_isolated("warm.py", GOOD, "python")
    monkeypatch.setattr(isolated, "TIMEOUT", 2.0)
    slow = chunk_later("slow.py", OUTLASTS_THE_TIMEOUT, "python")
    behind = chunk_later("good.py", GOOD, "python")
    # Asked for first, the file behind waits its turn: only the slow one is timed out.
    assert [s.name for s in behind.result().symbols] == ["retry_upload"]
    with pytest.raises(ParserLimitError, match="it took longer than 2 s"):
        slow.result()


def test_a_chunker_bug_costs_one_file_not_the_worker() -> None:
    chunk_isolated("warm.py", GOOD, "python")
    worker = isolated._worker
    with pytest.raises(RuntimeError, match="the chunker failed in the chunk worker"):
        chunk_isolated("bug.py", cast(str, None), "python")  # what a chunker bug looks like
    assert [s.name for s in chunk_isolated("good.py", GOOD, "python").symbols] == ["retry_upload"]
    assert isolated._worker is worker


def test_stopping_the_worker_ends_a_file_in_progress() -> None:
    # At exit the server stops the worker; a runaway parse must not hold the exit for TIMEOUT.
    chunk_isolated("warm.py", GOOD, "python")
    raised: list[ParserLimitError] = []

    def chunk_slowly() -> None:
        try:
            chunk_isolated("slow.py", OUTLASTS_THE_TIMEOUT, "python")
        except ParserLimitError as error:
            raised.append(error)

    thread = threading.Thread(target=chunk_slowly)
    thread.start()
    while not (isolated._worker is not None and isolated._worker.sent):  # the file is with the worker
        time.sleep(0.01)
    stop_worker()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert len(raised) == 1


def test_the_worker_imports_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's working directory may be the workspace; `python -m` would import from it.
    canary = tmp_path / "imported"
    for module in ("kenning/__init__.py", "tree_sitter.py"):
        planted = tmp_path / "repo" / module
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(f"open({str(canary)!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path / "repo")
    assert [s.name for s in chunk_isolated("good.py", GOOD, "python").symbols] == ["retry_upload"]
    assert not canary.exists()


def test_kenning_index_survives_a_repository_of_such_files(tmp_path: Path) -> None:
    """As a user runs it: `kenning index` on a repository holding a file that crashes the
    parser, then `kenning symbols` finds the definitions of the others."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "evil.py").write_text(CRASHES_THE_PARSER)
    (root / "uploads.py").write_text(GOOD)
    for n in range(12):  # files read and sent to the worker while it crashes over evil.py
        (root / f"f{n:02}.py").write_text(_good(n))

    def kenning(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kenning", *args], capture_output=True, text=True, timeout=600, check=False
        )

    out = kenning("index", str(root))
    assert out.returncode == 0, out.stderr
    assert "indexed 14 files" in out.stdout
    # The worker crashes over it, or is stopped first at its time limit on a busy machine.
    assert re.search(r"evil\.py: not parsed, (the chunk worker stopped|it took longer than)", out.stderr)
    assert "warning: 1 file not parsed" in out.stderr
    found = kenning("symbols", "retry_upload", "--root", str(root))
    assert "uploads.py:1" in found.stdout
    for n in range(12):
        assert f"f{n:02}.py:1" in kenning("symbols", f"upload_{n}", "--root", str(root)).stdout
    searched = kenning("search", "evil", "--root", str(root))
    assert searched.returncode == 0, searched.stderr


def test_a_files_time_limit_grows_with_its_size() -> None:
    assert isolated.time_limit(0) == isolated.TIMEOUT_BASE
    assert isolated.time_limit(2**20) == isolated.TIMEOUT_BASE + isolated.TIMEOUT_PER_MIB
    assert isolated.time_limit(2 * 2**20) == isolated.TIMEOUT  # the 2 MiB file cap: a minute
    # Real code is chunked at 3 s a MiB or faster; a limit leaves ten times that.
    assert isolated.TIMEOUT_PER_MIB >= 10 * 3


def test_a_quadratic_parse_costs_what_its_size_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    # tree-sitter-lua takes time quadratic in lines of `#ifdef A` (9 s at 8,000 here, ~40 s at
    # 16,000): the 140 KB file is stopped at its own limit, not at the minute any file may take.
    chunk_isolated("warm.py", GOOD, "python")
    monkeypatch.setattr(isolated, "TIMEOUT_BASE", 1.0)
    hostile = "#ifdef A\n" * 16_000
    limit = isolated.time_limit(len(hostile))
    assert limit < 6.0
    started = time.monotonic()
    with pytest.raises(ParserLimitError, match=f"it took longer than {limit:.0f} s"):
        chunk_isolated("init.lua", hostile, "lua")
    assert time.monotonic() - started < isolated.TIMEOUT / 2
    assert [s.name for s in chunk_isolated("good.py", GOOD, "python").symbols] == ["retry_upload"]
