"""The engine end to end on a real workspace with the real model: index, search, stay current."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import embed_pending, scan, update
from kenning.search import SearchError, SearchQuery, search, similar
from kenning.store.lock import LockHeld
from kenning.symbols import SymbolSearch


@pytest.fixture(scope="module")
def encoder():
    from kenning.embedding import Encoder

    return Encoder.load()


def open_engine(root: Path, encoder, **config) -> Engine:
    return Engine(root, Config(**config), encoder_factory=lambda _c: encoder).open()


def paths(response) -> list[str]:
    return [h.path for h in response.hits]


def test_index_and_search_by_description(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        scan_report, embed_report = update(engine)
        assert scan_report.files_changed == 5
        assert embed_report.embedded > 0
        st = engine.status()
        assert st.files == 5 and st.pending == 0 and st.embedded == st.chunks

        hits = search(engine, SearchQuery("retry a failed upload after waiting")).hits
        assert hits[0].path == "uploads.py"
        top = hits[0]
        assert top.dense_rank is not None
        assert 1 <= top.start_line <= top.end_line

        hits = search(engine, SearchQuery("parseHttpHeader")).hits
        assert hits[0].path == "web/headers.js" and hits[0].symbol == "parseHttpHeader"
        assert hits[0].lexical_rank == 1

        hits = search(engine, SearchQuery("area of a circle", mode="semantic")).hits
        assert hits[0].symbol == "circle_area"
        assert all(h.lexical_rank is None for h in hits)

        hits = search(engine, SearchQuery("installer shell", mode="lexical")).hits
        assert hits[0].path == "docs/guide.md" and hits[0].dense_rank is None


def test_lines_are_exact(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        hit = search(engine, SearchQuery("circle_area", mode="lexical")).hits[0]
        lines = (workspace / hit.path).read_text().split("\n")
        assert lines[hit.start_line - 1].startswith("def circle_area")
        assert "return math.pi" in lines[hit.end_line - 1]


def test_filters_apply_before_ranking(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        q = "retry failed uploads"
        assert set(paths(search(engine, SearchQuery(q, languages=("javascript",))))) == {"web/headers.js"}
        assert set(paths(search(engine, SearchQuery(q, paths=("docs/**",))))) == {"docs/guide.md"}
        assert set(paths(search(engine, SearchQuery(q, extensions=("go",))))) == {"server/db.go"}
        both = search(engine, SearchQuery(q, paths=("web/**", "server/**")))
        assert set(paths(both)) == {"web/headers.js", "server/db.go"}
        none = search(engine, SearchQuery(q, languages=("python",), extensions=("go",)))
        assert none.hits == [] and "no indexed file matches" in none.notes[0]
        with pytest.raises(SearchError, match="unknown language 'klingon'"):
            search(engine, SearchQuery(q, languages=("klingon",)))


def test_incremental_add_change_delete(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        unchanged = scan(engine)
        assert unchanged.files_changed == 0 and unchanged.files_unchanged == 5

        (workspace / "geometry.py").write_text("def triangle_perimeter(a, b, c):\n    return a + b + c\n")
        (workspace / "new.py").write_text("def zebra_stripes_counter():\n    return 42\n")
        (workspace / "server" / "db.go").unlink()
        report = scan(engine)
        assert (report.files_changed, report.files_deleted) == (2, 1)
        embedded = embed_pending(engine)
        assert embedded.embedded == 2  # only the two new chunks' text is new

        assert paths(search(engine, SearchQuery("zebra_stripes_counter")))[0] == "new.py"
        assert "geometry.py" in paths(search(engine, SearchQuery("triangle perimeter")))
        everything = search(engine, SearchQuery("database connection", limit=50))
        assert "server/db.go" not in paths(everything)
        assert not search(engine, SearchQuery("circle_area", mode="lexical")).hits
        names = [h.symbol.name for h in SymbolSearch(engine).find("OpenDatabase", 10)]
        assert "OpenDatabase" not in names


def test_edit_reembeds_only_changed_chunks(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        path = workspace / "uploads.py"
        text = path.read_text()
        path.write_text(text.replace("status >= 500", "status >= 500 or status == 429"))
        scan(engine)
        report = embed_pending(engine)
        assert report.embedded == 1


def test_restart_reuses_everything(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        chunks = engine.status().chunks
    with open_engine(workspace, encoder) as engine:
        scan_report, embed_report = update(engine)
        assert scan_report.files_changed == 0
        assert embed_report.embedded == 0
        assert len(engine.vectors) == chunks
        assert search(engine, SearchQuery("circle area")).hits


def test_corrupt_vector_file_is_rebuilt(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        store = engine.store_dir
    (vec,) = store.glob("vectors.*.usearch")
    data = bytearray(vec.read_bytes())
    for i in range(100, len(data), 50):
        data[i] ^= 0xFF
    vec.write_bytes(bytes(data))
    with open_engine(workspace, encoder) as engine:
        assert engine.vectors is None  # rejected before usearch ever saw it
        _, embed_report = update(engine)
        assert embed_report.embedded == 0  # rebuilt from stored vectors, not re-embedded
        assert search(engine, SearchQuery("area of a circle", mode="semantic")).hits[0].symbol == (
            "circle_area"
        )


def test_corrupt_database_is_moved_aside_and_rebuilt(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        db_path = engine.store_dir / "kenning.sqlite3"
    with open(db_path, "r+b") as f:
        f.seek(0)
        f.write(b"this is not a database" * 200)
    with open_engine(workspace, encoder) as engine:
        update(engine)
        assert engine.status().files == 5
        assert list(engine.store_dir.glob("kenning.sqlite3.corrupt-*"))
        assert search(engine, SearchQuery("parseHttpHeader")).hits


def test_model_change_rebuilds_vectors(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        db = engine.db
        assert db is not None
        with db.transaction() as conn:
            db.set_meta(conn, "model_id", "some-other-model:384")
    with open_engine(workspace, encoder) as engine:
        _, report = update(engine)
        # Nothing of the old model is reused: every vector is the loaded model's, computed or
        # taken from the shared cache (which keys by the real model, so it may supply them).
        assert report.embedded + report.from_shared == engine.status().chunks
        assert engine.db is not None and engine.db.get_meta("model_id") == encoder.model_id


def test_vectors_reconciled_after_unsaved_changes(workspace: Path, encoder) -> None:
    """A kill after SQLite committed but before the graph was saved: restart repairs the graph."""
    with open_engine(workspace, encoder) as engine:
        update(engine)
    engine = open_engine(workspace, encoder)
    (workspace / "late.py").write_text("def quokka_habitat_map():\n    return {}\n")
    scan(engine)
    embed_pending(engine)
    # Simulate the kill: drop the in-memory graph without saving it.
    engine.vectors = None
    assert engine.db is not None
    engine.db.close()
    engine._lock.release()
    with open_engine(workspace, encoder) as engine:
        update(engine)
        assert engine.vectors is not None
        live = set(engine.db.embedded_chunk_ids().tolist())  # type: ignore[union-attr]
        assert set(engine.vectors.keys().tolist()) == live
        assert search(engine, SearchQuery("quokka habitat", mode="semantic")).hits[0].path == ("late.py")


def test_second_writer_is_refused_and_reader_works(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as writer:
        update(writer)
        with pytest.raises(LockHeld, match="being written by pid"):
            Engine(workspace, Config(), read_only=False).open()
        reader = Engine(workspace, Config(), encoder_factory=lambda _c: encoder).open()
        try:
            assert reader.read_only
            assert search(reader, SearchQuery("parseHttpHeader")).hits[0].path == "web/headers.js"
        finally:
            reader.close()


def test_store_is_private_and_ignored(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine, embed=False)
        mode = os.stat(engine.store_dir).st_mode & 0o777
        assert mode == 0o700
        assert (engine.store_dir / ".gitignore").read_text().strip().endswith("*")
        with sqlite3.connect(engine.store_dir / "kenning.sqlite3") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_lexical_works_before_embedding(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine, embed=False)
        response = search(engine, SearchQuery("parseHttpHeader"))
        assert response.lexical_only
        assert response.hits[0].path == "web/headers.js"


def test_similar_excludes_the_selection(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        response = similar(engine, "geometry.py", 4, 5, limit=5)
        assert response.hits
        assert all(
            not (h.path == "geometry.py" and h.start_line <= 5 and h.end_line >= 4) for h in response.hits
        )


def test_symbols_fuzzy(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine, embed=False)
        finder = SymbolSearch(engine)
        assert finder.find("urp", 5)[0].symbol.name == "UploadRetryPolicy"
        retry = [h.symbol for h in finder.find("should_retry", 5)]
        assert retry[0].container == "UploadRetryPolicy" and retry[0].kind == "method"


def test_dedupes_identical_text(workspace: Path, encoder) -> None:
    (workspace / "copy").mkdir()
    (workspace / "copy" / "geometry.py").write_text((workspace / "geometry.py").read_text())
    with open_engine(workspace, encoder) as engine:
        update(engine)
        hits = search(engine, SearchQuery("circle area radius", limit=10)).hits
        texts = [(h.symbol, h.preview) for h in hits]
        assert len(texts) == len(set(texts))


def test_vector_file_keys_match_chunks(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        assert engine.vectors is not None and engine.db is not None
        keys = np.sort(engine.vectors.keys())
        assert np.array_equal(keys, np.sort(engine.db.embedded_chunk_ids()))


def test_embedding_cache_survives_a_branch_switch_and_is_pruned_when_large(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        original = (workspace / "geometry.py").read_text()
        (workspace / "geometry.py").write_text("def other_branch_only():\n    return 0\n")
        scan(engine)
        assert embed_pending(engine).embedded == 1
        (workspace / "geometry.py").write_text(original)  # switch back
        scan(engine)
        assert embed_pending(engine).embedded == 0  # every vector came from the cache
        assert engine.prune_embedding_cache() == 0  # one stale vector is worth keeping
        db = engine.db
        assert db is not None
        with db.transaction() as conn:
            junk = np.zeros((12_000, 384), dtype=np.float32)
            db.put_embeddings(conn, [i.to_bytes(16, "big") for i in range(12_000)], junk)
        assert engine.prune_embedding_cache() == 12_001
        assert embed_pending(engine).embedded == 0


def _count_prunes(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time ``engine`` counts its embedding cache."""
    calls: list[int] = []
    prune = engine.prune_embedding_cache

    def counting_prune() -> int:
        calls.append(1)
        return prune()

    monkeypatch.setattr(engine, "prune_embedding_cache", counting_prune)
    return calls


def test_only_a_run_that_removed_chunks_counts_the_embedding_cache(
    workspace: Path, encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting the cache reads every stored vector: an unchanged run (a restart) skips it."""
    with open_engine(workspace, encoder) as engine:
        update(engine)
        calls = _count_prunes(engine, monkeypatch)
        update(engine)
        assert calls == []
        (workspace / "geometry.py").write_text("def only_this():\n    return 1\n")
        update(engine)
        assert calls == [1]


def test_a_save_counts_the_embedding_cache_only_once_removals_add_up(
    workspace: Path, encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save replaces a chunk or two; counting after each one walked two whole indexes."""
    from kenning.indexer import pipeline

    monkeypatch.setattr(pipeline, "PRUNE_AFTER_REMOVALS", 3)
    (workspace / "geometry.py").write_text("def circle_area(r):\n    return r * r\n")
    with open_engine(workspace, encoder) as engine:
        update(engine)
        calls = _count_prunes(engine, monkeypatch)
        for n in range(3):  # one chunk replaced by each save
            (workspace / "geometry.py").write_text(f"def circle_area(r):\n    return {n} * r\n")
            update(engine, ["geometry.py"])
            assert calls == ([1] if n == 2 else []), n
        assert engine.removed_since_prune == 0


def test_heavy_churn_rebuilds_the_graph(workspace: Path, encoder, caplog) -> None:
    with open_engine(workspace, encoder) as engine:
        update(engine)
        assert engine.vectors is not None
        live = len(engine.vectors)
        engine.churn = 5_000  # as if thousands of chunks had been replaced since the build
        engine.save_vectors()
    with caplog.at_level("INFO", logger="kenning.engine"), open_engine(workspace, encoder) as engine:
        update(engine)
        assert "rebuilt the vector index (5000 removals since it was built)" in caplog.text
        assert engine.churn == 0 and engine.vectors is not None and len(engine.vectors) == live
        assert engine.db is not None and engine.db.get_meta("vectors_churn") == "0"


def test_read_only_engine_follows_the_writer(workspace: Path, encoder) -> None:
    with open_engine(workspace, encoder) as writer:
        update(writer)
        reader = Engine(workspace, Config(), encoder_factory=lambda _c: encoder).open()
        try:
            assert reader.read_only
            finder = SymbolSearch(reader)
            assert not [h for h in finder.find("walrus_counter", 5) if h.symbol.name == "walrus_counter"]
            (workspace / "walrus.py").write_text("def walrus_counter(n):\n    return n\n")
            scan(writer)
            embed_pending(writer)
            writer.save_vectors()
            names = [h.symbol.name for h in finder.find("walrus_counter", 5)]
            assert names[0] == "walrus_counter"
            hits = search(reader, SearchQuery("walrus counter", mode="semantic")).hits
            assert hits[0].path == "walrus.py"
        finally:
            reader.close()


def test_partial_name_match_does_not_beat_the_exact_identifier(tmp_path: Path, encoder) -> None:
    from tests.conftest import write_workspace

    files = {
        "a.py": "def bom_marker_fn(data):\n    return data.startswith(b'\\xef')\n",
        "b.py": "longline_marker = 'x' * 5000\n\n\ndef unrelated():\n    return 1\n",
    }
    for i in range(8):
        files[f"pad{i}.py"] = f"def marker_{i}_helper(x):\n    return x + {i}\n"
    root = write_workspace(tmp_path / "ws", files)
    with open_engine(root, encoder) as engine:
        update(engine)
        for mode in ("lexical", "hybrid"):
            assert search(engine, SearchQuery("longline_marker", mode=mode)).hits[0].path == "b.py"


def test_preview_of_a_long_line_shows_the_match(tmp_path: Path, encoder) -> None:
    from tests.conftest import write_workspace

    line = "x = [" + ", ".join(str(i) for i in range(1200)) + ", 'needle_token_here']"
    normal = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(4))
    root = write_workspace(tmp_path / "ws", {"long.py": normal + line + "\n"})
    with open_engine(root, encoder) as engine:
        update(engine, embed=False)
        hit = search(engine, SearchQuery("needle_token_here", mode="lexical")).hits[0]
        assert "needle_token_here" in hit.preview
        assert len(hit.preview) <= 300
        assert hit.preview.startswith("…")


@pytest.mark.parametrize("planted", ["../outside.py", "/etc/passwd", "a/../../b.py", "./x.py"])
def test_a_path_kenning_never_writes_is_never_returned(workspace: Path, encoder, planted: str) -> None:
    # A database file planted beside an authentic one (a WAL from a `git pull`) could rewrite
    # rows; a result must never name a location outside the workspace all the same.
    with open_engine(workspace, encoder) as engine:
        update(engine)
        assert engine.db is not None and engine.db.writer is not None
        with engine.db.transaction() as conn:
            conn.execute("UPDATE files SET path=? WHERE path='uploads.py'", (planted,))
        engine.bump_generation()
        for mode in ("hybrid", "semantic", "lexical"):
            found = paths(search(engine, SearchQuery("retry a failed upload after waiting", mode=mode)))
            assert found and planted not in found, (mode, found)
        symbols = [h.symbol.path for h in SymbolSearch(engine).find("UploadRetryPolicy", 10)]
        assert planted not in symbols
