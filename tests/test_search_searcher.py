"""The searcher each engine owns: its caches and lexical threads live and die with the engine, and
importing kenning starts no thread; the store's search reads (``store.search_rows``) answer what
the search used to ask SQLite itself (the real model, a real store)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import kenning
from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import update
from kenning.search import Searcher, SearchQuery, search


def _lexical_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("kenning-lexical")]


def test_importing_search_starts_no_thread() -> None:
    code = (
        "import threading, kenning.search, kenning.lsp.semantic, kenning.mcp.tools, kenning.cli\n"
        "print(sorted(t.name for t in threading.enumerate()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['MainThread']", out.stdout + out.stderr


def test_searcher_owns_its_caches_and_closes_with_the_engine(workspace: Path, tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    (other_root / "pkg").mkdir(parents=True)
    (other_root / "pkg" / "only.py").write_text("def circle_area_elsewhere():\n    return 1\n")
    before = set(_lexical_threads())
    with Engine(workspace, Config()).open() as engine, Engine(other_root, Config()).open() as other:
        update(engine)
        update(other, embed=False)
        searcher = engine.searcher()
        assert isinstance(searcher, Searcher) and engine.searcher() is searcher
        assert other.searcher() is not searcher
        query = SearchQuery("circle area", limit=5, mode="hybrid", paths=("*.py",))
        hits = search(engine, query).hits
        assert hits and hits[0].path == "geometry.py"
        # The filter's file ids are this engine's, kept by its searcher alone.
        assert searcher.filters.sets and not other.searcher().filters.sets
        other_hits = search(other, SearchQuery("circle area", limit=5, mode="lexical", paths=("*.py",))).hits
        assert [h.path for h in other_hits] == ["pkg/only.py"]
        # The hybrid query ran its lexical half on the searcher's own threads.
        threads = set(_lexical_threads()) - before
        assert threads
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), f"{thread.name} outlived its engine"
    # A closed engine let its searcher go: the next one starts empty.
    assert engine.searcher() is not searcher and not engine.searcher().filters.sets


def test_store_search_reads(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\0\1\2" * 100)
    with Engine(workspace, Config()).open() as engine:
        update(engine, embed=False)
        db = engine.db
        assert db is not None
        files = {f.path: f for f in db.indexed_files()}
        assert "blob.bin" not in files  # skipped files are not filter candidates
        assert files["geometry.py"].language == "python"
        geometry = files["geometry.py"].id
        in_geometry = db.chunk_ids_in_files([geometry])
        assert in_geometry and set(in_geometry) == {c.id for c in db.chunks_of_file(geometry)}
        assert db.chunk_ids_in_files([]) == []
        everywhere = db.bm25_chunk_ids(["circle", "area"], None, 10)
        assert everywhere and db.chunks_by_id(everywhere[:1])[everywhere[0]].path == "geometry.py"
        assert set(db.bm25_chunk_ids(["circle", "area"], [geometry], 10)) <= set(in_geometry)
        assert db.bm25_chunk_ids(["circle"], [files["uploads.py"].id], 10) == []
        assert len(db.bm25_chunk_ids(["upload", "retry", "attempt"], None, 1)) == 1
        # A term is one quoted FTS5 string, whatever it holds: never FTS5 syntax, never an error.
        assert db.bm25_chunk_ids(['circle" OR "upload', "NEAR(", "*"], None, 10) == []
        assert db.max_chunk_id() >= max(everywhere)


def test_a_filter_carried_past_a_save_is_the_set_computed_anew(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a save the cached filter sets re-judge only the changed files (judging every path
    cost ~0.3 s at 100,000 files); what they hold must be what computing them anew gives."""
    from kenning.search import filters

    judged: list[str] = []
    selects = filters._selects

    def counting(key: tuple[object, ...]):  # type: ignore[no-untyped-def]
        inner = selects(key)

        def judge(r):  # type: ignore[no-untyped-def]
            judged.append(r.path)
            return inner(r)

        return judge

    monkeypatch.setattr(filters, "_selects", counting)
    keys = [
        SearchQuery("x", paths=("web/**",)),
        SearchQuery("x", languages=("python",)),
        SearchQuery("x", extensions=("py",), paths=("*.py",)),
    ]
    with Engine(workspace, Config()).open() as engine:
        update(engine, embed=False)
        assert engine.db is not None
        conn = engine.db.reader()
        for q in keys:
            filters.filtered_file_ids(engine, conn, q)
        (workspace / "web" / "more.js").write_text("export const more = 1;\n")  # added, selected
        (workspace / "web" / "headers.js").unlink()  # removed
        (workspace / "geometry.py").write_text("def circle():\n    return 1\n")  # changed
        (workspace / "later.py").write_bytes(b"\0binary")  # skipped: in no set
        update(engine, ["web/more.js", "web/headers.js", "geometry.py", "later.py"], embed=False)
        judged.clear()
        carried = [filters.filtered_file_ids(engine, conn, q) for q in keys]
        assert judged and set(judged) <= {"web/more.js", "geometry.py", "later.py"}  # not every path
        engine.searcher().filters.sets.clear()
        anew = [filters.filtered_file_ids(engine, conn, q) for q in keys]
        live = {row.id for row in engine.db.all_files().values()}
        assert [ids & live for ids in carried] == anew  # a removed file's id may stay, matching nothing
        paths = {row.id: path for path, row in engine.db.all_files().items()}
        assert sorted(paths[i] for i in anew[0]) == ["web/more.js"]


def test_a_shorter_list_is_the_start_of_a_longer_one(tmp_path: Path) -> None:
    """The editor asks for 20 results, an agent for 10, the CLI for its ``-k``: one query must
    rank alike at every limit up to 20, or an agent and its user see different first answers.
    The workspace is real code (kenning's own search and chunking packages, a few hundred
    chunks), so each half has more than the candidates it hands fusion."""
    package = Path(kenning.__file__).parent
    for sub in ("search", "chunking"):
        for source in (package / sub).glob("*.py"):
            target = tmp_path / sub / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source.read_text())
    queries = (
        "the constants the ranking is tuned with",
        "split a file into chunks at its definitions",
        "words a sentence writes in backticks",
        "fuse",
        "reciprocal rank of the lexical half",
        "which names does the query spell",
    )
    with Engine(tmp_path, Config()).open() as engine:
        update(engine)
        assert engine.db is not None and engine.db.max_chunk_id() > 200
        for text in queries:
            for mode in ("hybrid", "semantic", "lexical"):
                longest = [h.chunk_id for h in search(engine, SearchQuery(text, limit=20, mode=mode)).hits]
                assert len(longest) == 20 or mode == "lexical", (text, mode)
                for limit in (1, 3, 5, 10, 15):
                    hits = search(engine, SearchQuery(text, limit=limit, mode=mode)).hits
                    assert [h.chunk_id for h in hits] == longest[:limit], (text, mode, limit)
