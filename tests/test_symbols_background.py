"""The workspace-symbol index builds off the query path: after a folder's scan, and when a query
finds the store changed. A query that cannot wait for the build is answered from SQL, current."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.folder import FolderIndex
from kenning.indexer import scan, update
from kenning.symbols import SymbolSearch
from tests.test_folder_start import QuietReporter, wait_state

QUERIES = ("urp", "should_retry", "circle", "parse", "Http", "", "e")


@pytest.fixture(scope="module")
def encoder() -> Any:
    from kenning.embedding import Encoder

    return Encoder.load()


def wait_builds(finder: SymbolSearch, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while finder.builds < count:
        assert time.monotonic() < deadline, f"{finder.builds} builds, waited for {count}"
        time.sleep(0.02)


def names(hits: list[Any]) -> list[tuple[str, str, int]]:
    return [(h.symbol.name, h.symbol.path, h.symbol.start_line) for h in hits]


def test_a_query_is_answered_while_the_index_builds(workspace: Path, encoder: Any) -> None:
    with Engine(workspace, Config(), encoder_factory=lambda _c: encoder) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        # No index yet and no time to wait: answered from SQL, and the build started.
        first = names(finder.find("urp", 10, wait=0))
        assert finder.interim_answers == 1
        assert first[0][0] == "UploadRetryPolicy"
        interim = {q: names(finder._interim(q, 10)) for q in QUERIES}
        assert interim["urp"] == first
        wait_builds(finder, 1)
        # The built index ranks the same symbols the same way (the SQL candidates hold them all).
        for q in QUERIES:
            assert names(finder.find(q, 10, wait=0)) == interim[q], q
        assert finder.interim_answers == 1 and finder.builds == 1


def test_a_changed_store_is_answered_current_while_it_rebuilds(workspace: Path, encoder: Any) -> None:
    with Engine(workspace, Config(), encoder_factory=lambda _c: encoder) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        finder.warm()
        wait_builds(finder, 1)
        assert not finder.find("frobnicate", 5, wait=0)
        (workspace / "widgets.py").write_text("def frobnicate_widget(w):\n    return w\n")
        scan(engine, ["widgets.py"])
        # The index is stale: the answer must not be, whether or not the rebuild has ended.
        hits = finder.find("frobnicate", 5, wait=0)
        assert [h.symbol.name for h in hits] == ["frobnicate_widget"]
        wait_builds(finder, 2)
        assert [h.symbol.path for h in finder.find("frobnicate", 5, wait=0)] == ["widgets.py"]
        # Waiting without a bound (the CLI's way) always answers from a current index.
        (workspace / "widgets.py").unlink()
        scan(engine, ["widgets.py"])
        answered_from_sql = finder.interim_answers
        assert finder.find("frobnicate", 5) == []
        assert finder.interim_answers == answered_from_sql and finder.builds == 3


def test_the_folder_builds_the_symbol_index_after_its_scan(workspace: Path, encoder: Any) -> None:
    folder = FolderIndex(
        workspace.as_uri(), workspace, Config(), QuietReporter(), encoder_factory=lambda _c: encoder
    )
    folder.start(index_now=True)
    try:
        wait_state(folder, "ready")
        wait_builds(folder.symbols, 1)  # no query asked for it
        assert folder.symbols.find("urp", 5, wait=0)[0].symbol.name == "UploadRetryPolicy"
        assert folder.symbols.interim_answers == 0
    finally:
        folder.stop()
