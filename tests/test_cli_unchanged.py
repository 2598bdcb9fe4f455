"""``kenning index`` on an unchanged tree loads neither the model nor the vector index (real
processes: what they log and what they leave on disk), and still does the work when anything
it would check has changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from kenning.config import Config
from kenning.engine import Engine
from tests.conftest import write_workspace
from tests.test_cli import kenning

MODEL_LOADED = "embedding model"


def graph_file(root: Path) -> Path:
    (found,) = (root / ".kenning").glob("vectors.*.usearch")
    return found


def test_an_unchanged_index_loads_neither_the_model_nor_the_graph(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    first = kenning("index", str(root))
    assert first.returncode == 0, first.stderr
    assert MODEL_LOADED in first.stderr

    # Garble the saved graph (same size): a process that loaded it would reject it (its MAC)
    # and write a rebuilt one.
    graph = graph_file(root)
    garbled = bytes(b ^ 0x5A for b in graph.read_bytes())
    graph.write_bytes(garbled)

    again = kenning("index", str(root))  # not --json, which keeps the log quiet
    assert again.returncode == 0, again.stderr
    assert "nothing changed" in again.stderr  # the log is on: its silence below means something
    assert MODEL_LOADED not in again.stderr and "rejected" not in again.stderr
    summary = json.loads(kenning("stats", "--json", "--root", str(root)).stdout)
    assert summary["pending"] == 0 and summary["embedded"] == summary["chunks"] > 0
    assert graph_file(root) == graph and graph.read_bytes() == garbled  # not even opened for writing

    # A search needs the graph: it notices the garbled file, rebuilds it and answers densely.
    found = kenning("search", "area of a circle", "--json", "--mode", "semantic", "--root", str(root))
    assert found.returncode == 0, found.stderr
    assert "rejected" in found.stderr
    assert json.loads(found.stdout)["results"][0]["symbol"] == "circle_area"
    assert graph_file(root).read_bytes() != garbled

    # A changed file: the model is loaded and the new chunk embedded.
    (root / "late.py").write_text("def quokka_habitat_map():\n    return {}\n")
    changed = kenning("index", str(root))
    assert changed.returncode == 0, changed.stderr
    assert MODEL_LOADED in changed.stderr and "nothing changed" not in changed.stderr
    assert "embedded 1 chunks" in changed.stderr or "embedded 2 chunks" in changed.stderr


def test_the_store_remembers_the_model_configuration_it_was_embedded_with(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    assert kenning("index", "-q", str(root)).returncode == 0
    with Engine(root, Config(), defer_vectors=True) as engine:
        assert engine.embedding_current()
        assert engine.vectors is None  # deferred: nothing asked for it
    with Engine(root, Config(model_variant="original"), defer_vectors=True) as engine:
        assert not engine.embedding_current()  # another graph: another model id
    # A chunk without a vector (as a kill mid-pass leaves): not current.
    db = root / ".kenning" / "kenning.sqlite3"
    with Engine(root, Config()) as engine:
        assert engine.db is not None
        with engine.db.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key='embedded_through'")
            conn.execute("DELETE FROM embeddings WHERE key = (SELECT embed_key FROM chunks LIMIT 1)")
    with Engine(root, Config(), defer_vectors=True) as engine:
        assert not engine.embedding_current()
    assert sqlite3.connect(db).execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
