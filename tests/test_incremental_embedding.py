"""The embedding pass on an index that is mostly embedded already: it starts after the
recorded watermark, reconciles the graph with the database once per session, and still embeds
exactly what is new (with a fake, instant encoder)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import embed_pending, scan, update
from kenning.store.schema import EMBEDDED_THROUGH


class FakeEncoder:
    dim = 16
    max_tokens = 256

    def __init__(self, model_id: str = "fake:1") -> None:
        self.model_id = model_id
        self.embedded: list[str] = []

    def embed_documents(self, texts, should_stop=None) -> np.ndarray:
        self.embedded.extend(texts)
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)


def _engine(root: Path, encoder: FakeEncoder) -> Engine:
    return Engine(root, Config(), encoder_factory=lambda _c: encoder).open()


def _max_chunk_id(engine: Engine) -> int:
    assert engine.db is not None
    return int(engine.db.reader().execute("SELECT max(id) FROM chunks").fetchone()[0])


def test_watermark_and_reconcile_skip_work_without_missing_any(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
        assert engine.db is not None and engine.vectors is not None
        assert engine.db.get_meta(EMBEDDED_THROUGH) == str(_max_chunk_id(engine))
        assert engine.vectors_in_step
        chunks = engine.status().chunks
        assert len(engine.vectors) == chunks

        # A second job on the same engine neither re-embeds nor re-compares the id sets.
        def no_join(*_a: object, **_k: object) -> np.ndarray:
            raise AssertionError("reconciled again although the graph was in step")

        monkeypatch.setattr(engine.db, "embedded_chunk_ids", no_join)
        enc.embedded.clear()
        assert embed_pending(engine).embedded == 0 and enc.embedded == []

        # An edit: only the new chunk is embedded, and the graph follows.
        (workspace / "geometry.py").write_text(
            (workspace / "geometry.py").read_text()
            + "\n\ndef triangle_area(base, height):\n    return base * height / 2\n"
        )
        scan(engine, ["geometry.py"])
        report = embed_pending(engine)
        assert report.embedded >= 1
        assert any("triangle_area" in t for t in enc.embedded)
        assert len(engine.vectors) == engine.status().chunks
        assert engine.status().pending == 0
        assert engine.db.get_meta(EMBEDDED_THROUGH) == str(_max_chunk_id(engine))


def test_restart_reconciles_once_then_trusts_the_graph(workspace: Path) -> None:
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
    enc.embedded.clear()
    with _engine(workspace, enc) as engine:
        assert not engine.vectors_in_step  # loaded from disk: not trusted yet
        assert embed_pending(engine).embedded == 0 and enc.embedded == []
        assert engine.vectors_in_step


def test_a_failed_scan_makes_the_next_job_reconcile(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
        assert engine.db is not None
        (workspace / "new.py").write_text("def fresh_function():\n    return 42\n")

        def broken(*_a: object, **_k: object) -> None:
            raise RuntimeError("disk trouble")

        monkeypatch.setattr(engine.db, "replace_symbols", broken)
        with pytest.raises(RuntimeError):
            scan(engine)
        assert not engine.vectors_in_step
        monkeypatch.undo()
        update(engine)
        assert engine.vectors_in_step
        assert engine.vectors is not None and len(engine.vectors) == engine.status().chunks


def test_another_model_clears_the_watermark_and_embeds_everything(workspace: Path) -> None:
    with _engine(workspace, FakeEncoder("fake:1")) as engine:
        update(engine)
        chunks = engine.status().chunks
    other = FakeEncoder("fake:2")
    with _engine(workspace, other) as engine:
        _, report = update(engine)
        assert report.embedded == len({*other.embedded}) and len(other.embedded) > 0
        assert engine.status().embedded == chunks
        assert engine.db is not None
        assert engine.db.get_meta(EMBEDDED_THROUGH) == str(_max_chunk_id(engine))


def _pending_the_slow_way(engine: Engine) -> int:
    assert engine.db is not None
    return int(
        engine.db.reader()
        .execute(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)"
        )
        .fetchone()[0]
    )


def test_counts_stay_exact_through_a_cancelled_pass(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for f in range(6):
        (root / f"m{f}.py").write_text(
            "".join(
                f"def function_{f}_{i}(value):\n    total = value * {i}\n    return total + {f}\n\n\n"
                for i in range(60)
            )
        )
    enc = FakeEncoder()
    with _engine(root, enc) as engine:
        scan(engine)
        assert engine.status().pending == _pending_the_slow_way(engine) > 200
        batches = iter(range(100))
        report = embed_pending(engine, should_stop=lambda: next(batches) >= 2)
        assert report.cancelled
        st = engine.status()
        assert 0 < st.pending == _pending_the_slow_way(engine) < st.chunks
        assert st.embedded == st.chunks - st.pending
        assert embed_pending(engine).embedded == st.pending
        st = engine.status()
        assert st.pending == 0 == _pending_the_slow_way(engine) and st.embedded == st.chunks


def test_deferred_save_leaves_small_edits_to_close(workspace: Path) -> None:
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
        assert engine.db is not None and engine.vectors is not None
        generation = engine.db.get_meta("vectors_generation")
        (workspace / "late.py").write_text("def late_arrival():\n    return 1\n")
        scan(engine, ["late.py"])
        assert embed_pending(engine, defer_save=True).embedded == 1
        assert engine.db.get_meta("vectors_generation") == generation  # not rewritten
        assert len(engine.vectors) == engine.status().chunks and engine.vectors.dirty
    with _engine(workspace, enc) as engine:  # close saved it
        engine.adopt_loaded_vectors()  # open loads the saved graph on a thread; the writer adopts it
        assert engine.db is not None and engine.vectors is not None
        assert engine.db.get_meta("vectors_generation") != generation
        assert len(engine.vectors) == engine.status().chunks
        assert embed_pending(engine).embedded == 0 and not engine.vectors.dirty


def test_a_crash_before_the_deferred_save_loses_nothing(workspace: Path) -> None:
    enc = FakeEncoder()
    engine = _engine(workspace, enc)
    update(engine)
    (workspace / "late.py").write_text("def late_arrival():\n    return 1\n")
    scan(engine, ["late.py"])
    embed_pending(engine, defer_save=True)
    assert engine.db is not None
    engine.db.close()  # the process dies: no save, the lock goes with it
    engine._lock.release()
    enc.embedded.clear()
    with _engine(workspace, enc) as again:
        assert embed_pending(again).embedded == 0 and enc.embedded == []  # reconciled, not redone
        assert again.vectors is not None and len(again.vectors) == again.status().chunks


def test_a_filtered_search_sees_chunks_embedded_after_it_was_cached(workspace: Path) -> None:
    from kenning.indexer import embed_input
    from kenning.search import SearchQuery, search

    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
        query = SearchQuery("anything", mode="semantic", paths=("web/**",))
        before = search(engine, query).hits
        assert before and all(h.path.startswith("web/") for h in before)
        search(engine, query)  # now answered from the filter's cached vectors
        text = "export function freshHelper() {\n  return 1;\n}"
        (workspace / "web" / "fresh.js").write_text(text + "\n")
        update(engine)
        probe = SearchQuery(embed_input("web/fresh.js", "", text), mode="semantic", paths=("web/**",))
        assert search(engine, probe).hits[0].path == "web/fresh.js"


def _kill(engine: Engine) -> None:
    """What a kill leaves: SQLite committed, the graph in memory never saved."""
    engine.vectors = None
    assert engine.db is not None
    engine.db.close()
    engine.db = None
    engine._lock.release()


def _live_ids(engine: Engine) -> set[int]:
    assert engine.db is not None
    return set(engine.db.embedded_chunk_ids().tolist())


def test_an_unchanged_restart_trusts_the_graph_without_joining_every_chunk(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
    with _engine(workspace, enc) as engine:
        assert engine.db is not None

        def no_join(*_a: object, **_k: object) -> np.ndarray:
            raise AssertionError("joined every chunk although the saved graph matched the store")

        monkeypatch.setattr(engine.db, "embedded_chunk_ids", no_join)
        assert embed_pending(engine).embedded == 0
        assert engine.vectors_in_step and engine.vectors_ready.is_set()


def test_a_restart_after_a_kill_repairs_a_graph_with_as_many_vectors(workspace: Path) -> None:
    """A file's chunks deleted and as many new ones embedded, the graph never saved: the counts
    agree, the ids do not, and the restart must notice."""
    enc = FakeEncoder()
    with _engine(workspace, enc) as engine:
        update(engine)
    engine = _engine(workspace, enc)
    update(engine)
    old = (workspace / "geometry.py").read_text()
    (workspace / "geometry.py").unlink()
    (workspace / "geometry2.py").write_text(old)  # same chunks, new ids
    scan(engine, ["geometry.py", "geometry2.py"])
    embed_pending(engine, defer_save=True)  # a server's small job: the graph file stays as it was
    before = len(_live_ids(engine))
    _kill(engine)
    with _engine(workspace, enc) as engine:
        engine.adopt_loaded_vectors()  # open loads the saved graph on a thread; the writer adopts it
        assert engine.vectors is not None and len(engine.vectors) == before  # the stale graph
        stale = set(engine.vectors.keys().tolist())
        assert stale != _live_ids(engine)
        embed_pending(engine)
        assert set(engine.vectors.keys().tolist()) == _live_ids(engine)
