"""After a save, the symbol index reads only the files that changed (kenning.symbols): the index
built before stays, its rows for those files are hidden, and their symbols now answer beside it.
The answers must be exactly what a whole rebuild gives. Underneath: the scan names the files it
changed in each new generation (``Engine.changed_since``), and reads only the stored rows of the
paths it was given (``Queries.files_at``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kenning import symbols as symbols_module
from kenning.engine import Engine
from kenning.indexer import scan, update
from kenning.symbols import SymbolSearch

QUERIES = (
    *("urp", "should_retry", "circle", "parse", "Http", "", "e", "area", "frob", "distance", "Cookie"),
    *("UploadRetryPolicy.should", "Policy.", "CookieJar.get"),  # qualified: the containers named
)


def _wait_builds(finder: SymbolSearch, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while finder.builds < count:
        assert time.monotonic() < deadline, f"{finder.builds} builds, waited for {count}"
        time.sleep(0.02)


def _answers(finder: SymbolSearch, limit: int = 10) -> dict[str, list[tuple[str, str, int, float]]]:
    return {
        q: [(h.symbol.name, h.symbol.path, h.symbol.start_line, h.score) for h in finder.find(q, limit)]
        for q in QUERIES
    }


def _rebuilt(engine: Engine) -> SymbolSearch:
    fresh = SymbolSearch(engine)
    fresh.warm()
    _wait_builds(fresh, 1)
    return fresh


def test_the_scan_names_the_files_each_generation_changed(workspace: Path) -> None:
    with Engine(workspace) as engine:
        update(engine, embed=False)
        start = engine.generation
        assert engine.changed_since(start) == frozenset()
        (workspace / "geometry.py").write_text("def circle_area(r):\n    return 3 * r * r\n")
        scan(engine, ["geometry.py"])
        assert engine.changed_since(start) == {"geometry.py"}
        middle = engine.generation
        scan(engine, ["geometry.py"])  # unchanged: no new generation
        assert engine.generation == middle
        (workspace / "web" / "headers.js").unlink()
        (workspace / "extra.py").write_text("def frobnicate():\n    pass\n")
        scan(engine)  # a full scan names what it changed too
        assert engine.changed_since(middle) == {"web/headers.js", "extra.py"}
        assert engine.changed_since(start) == {"geometry.py", "web/headers.js", "extra.py"}
        assert engine.changed_since(engine.generation + 1) is None  # from the future: unknown


def test_the_change_log_says_unknown_past_its_reach(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.engine import core

    monkeypatch.setattr(core, "CHANGE_LOG_ENTRIES", 2)
    with Engine(workspace) as engine:
        update(engine, embed=False)
        start = engine.generation
        for n in range(3):
            engine.bump_generation([f"f{n}.py"])
        assert engine.changed_since(start) is None  # the first entry was dropped
        assert engine.changed_since(start + 1) == {"f1.py", "f2.py"}
        engine.bump_generation()  # a change that did not say which files
        assert engine.changed_since(start + 3) is None


def test_files_at_reads_the_rows_of_files_and_of_directories(workspace: Path) -> None:
    with Engine(workspace) as engine:
        update(engine, embed=False)
        assert engine.db is not None
        assert set(engine.db.files_at(["geometry.py", "web", "nothing/here.py"])) == {
            "geometry.py",
            "web/headers.js",
        }
        assert set(engine.db.files_at(["we"])) == set()  # a prefix is no directory
        assert engine.db.has_files()


def test_a_save_reads_only_that_files_symbols_and_answers_as_a_rebuild(workspace: Path) -> None:
    with Engine(workspace) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        finder.warm()
        _wait_builds(finder, 1)
        # Renamed, removed and added symbols, and a name now defined in two files.
        (workspace / "geometry.py").write_text(
            "def circle_area_of(r):\n    return 3 * r * r\n\n\n"
            "def frobnicate(x):\n    return x\n\n\n"
            "class UploadRetryPolicy:\n    pass\n"
        )
        scan(engine, ["geometry.py"])
        finder.warm()
        _wait_builds(finder, 2)
        assert finder.full_builds == 1  # the second build read geometry.py alone
        got = _answers(finder)
        assert got == _answers(_rebuilt(engine))
        assert [h[0] for h in got["circle"]] == ["circle_area_of"]
        assert ("UploadRetryPolicy", "geometry.py", 9) in [h[:3] for h in got["urp"]]
        # A second save of another file: both files' rows now come from SQL.
        (workspace / "uploads.py").write_text("def upload_once(client, path):\n    return client.put(path)\n")
        scan(engine, ["uploads.py"])
        finder.warm()
        _wait_builds(finder, 3)
        assert finder.full_builds == 1
        assert _answers(finder) == _answers(_rebuilt(engine))
        assert [h[1] for h in _answers(finder)["urp"]] == ["geometry.py"]


def test_hidden_rows_crowding_the_top_are_looked_past(workspace: Path) -> None:
    many = "".join(f"def entry_{n:03d}():\n    pass\n\n\n" for n in range(60))
    (workspace / "entries.py").write_text(many)
    (workspace / "later.py").write_text("def entry_zzz():\n    pass\n")
    with Engine(workspace) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        finder.warm()
        _wait_builds(finder, 1)
        (workspace / "entries.py").write_text("x = 1\n")  # 60 matches for "entry" hidden
        scan(engine, ["entries.py"])
        assert [h.symbol.name for h in finder.find("entry", 5)] == ["entry_zzz"]
        assert finder.full_builds == 1


def test_too_many_changed_files_rebuild_the_whole_index(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(symbols_module, "CHANGED_FILES_MAX", 1)
    with Engine(workspace) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        finder.warm()
        _wait_builds(finder, 1)
        for name in ("geometry.py", "uploads.py"):
            (workspace / name).write_text(f"def only_in_{name[:-3]}():\n    pass\n")
        scan(engine, ["geometry.py", "uploads.py"])
        finder.warm()
        _wait_builds(finder, 2)
        assert finder.full_builds == 2
        assert _answers(finder) == _answers(_rebuilt(engine))
