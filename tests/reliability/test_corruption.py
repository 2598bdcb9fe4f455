"""Cases 4–7 and 29: every persisted file damaged in turn, then the server started on it.

One healthy store (and model cache) is built per module; each case copies it, damages one file
— flipped bytes, truncated, emptied, replaced by junk, deleted — and starts a server on it.
The server must start, answer a search at once, say in its log why it rebuilt something, end up
ready, and answer semantically again. The server runs as a subprocess: usearch segfaults on
flipped bytes it is allowed to load, and that must fail this test, not the runner.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.store.schema import SCHEMA_VERSION
from tests.conftest import FILES, write_workspace
from tests.reliability.client import Client
from tests.reliability.conftest import StartServer
from tests.reliability.tinymodel import build_tiny_model


def corrupt(path: Path, mode: str, seed: int = 0) -> None:
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    assert data, f"{path} is already empty"
    if mode == "flip":  # scattered through the body, past any file header
        start = min(len(data) // 4, 4096)
        for i in range(start, len(data), max(1, (len(data) - start) // 24)):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    elif mode == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif mode == "empty":
        path.write_bytes(b"")
    elif mode == "junk":
        path.write_bytes(rng.randbytes(len(data)))
    elif mode == "delete":
        path.unlink()
    else:
        raise ValueError(mode)


class Pristine:
    """A healthy indexed workspace, one with an un-checkpointed WAL, and the model cache."""

    def __init__(self, base: Path, model: Path) -> None:
        self.model = model
        self.cache = base / "cache"
        self.clean = write_workspace(base / "clean", FILES)
        env = {"KENNING_CACHE_DIR": str(self.cache)}
        client = Client(env=env)
        try:
            client.initialize(self.clean, {"model": str(model)})
            client.wait_state("ready")
            assert client.close() == 0
        finally:
            client.kill()
        # Killed right after indexing: the last commits live only in the WAL.
        self.killed = write_workspace(base / "killed", FILES)
        client = Client(env=env)
        try:
            client.initialize(self.killed, {"model": str(model)})
            client.wait_state("ready")
        finally:
            client.kill()
        assert (self.killed / ".kenning" / "kenning.sqlite3-wal").stat().st_size > 0

    def copy(self, dest: Path, which: str = "clean") -> tuple[Path, dict[str, str]]:
        root = shutil.copytree(self.clean if which == "clean" else self.killed, dest / "ws", symlinks=True)
        cache = shutil.copytree(self.cache, dest / "cache")
        return Path(root), {"KENNING_CACHE_DIR": str(cache)}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> Iterator[Pristine]:
    yield Pristine(tmp_path_factory.mktemp("pristine"), tiny_model)


def start_and_check(
    start_server: StartServer, root: Path, env: dict[str, str], options: dict[str, Any], log_says: str | None
) -> Client:
    """Start on a damaged store: answers at once, logs why, gets ready, searches both ways."""
    client = start_server(root, options, env=env)
    first = client.search("circle_area", mode="lexical")  # answered while it recovers
    assert isinstance(first["results"], list)
    status = client.wait_state("ready")
    assert status["files"] == len(FILES) and status["pending"] == 0, status
    if log_says is not None:
        deadline = time.monotonic() + 10
        while not any(log_says in line for line in client.log_lines()):
            assert time.monotonic() < deadline, f"no log line with {log_says!r}: {client.log_lines()}"
            time.sleep(0.05)
    lexical = client.search("circle_area", mode="lexical")["results"]
    assert lexical[0]["uri"].endswith("/geometry.py")
    dense = client.search("area of a circle radius", mode="semantic")["results"]
    assert dense and all(h["match"]["denseRank"] is not None for h in dense)
    return client


def recorded_vectors_valid(root: Path) -> bool:
    from kenning.store.trust import store_key
    from kenning.store.vectors import file_mac

    store = root / ".kenning"
    with sqlite3.connect(store / "kenning.sqlite3") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    path = store / meta["vectors_file"]
    return (
        path.stat().st_size == int(meta["vectors_size"])
        and file_mac(path, store_key()) == meta["vectors_mac"]
    )


@pytest.mark.parametrize("mode", ["flip", "truncate", "empty", "junk"])
def test_corrupt_vector_file(
    mode: str, pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path)
    (vec,) = (root / ".kenning").glob("vectors.*.usearch")
    corrupt(vec, mode)
    client = start_and_check(start_server, root, env, {"model": str(pristine.model)}, "vector index rejected")
    assert client.close() == 0
    assert recorded_vectors_valid(root)


@pytest.mark.parametrize("mode", ["flip", "truncate", "junk"])
def test_corrupt_database(mode: str, pristine: Pristine, tmp_path: Path, start_server: StartServer) -> None:
    root, env = pristine.copy(tmp_path)
    corrupt(root / ".kenning" / "kenning.sqlite3", mode)
    client = start_and_check(start_server, root, env, {"model": str(pristine.model)}, "moving it aside")
    assert client.close() == 0
    assert list((root / ".kenning").glob("kenning.sqlite3.corrupt-*"))
    assert recorded_vectors_valid(root)


def test_empty_database_is_a_new_index(pristine: Pristine, tmp_path: Path, start_server: StartServer) -> None:
    root, env = pristine.copy(tmp_path)
    corrupt(root / ".kenning" / "kenning.sqlite3", "empty")  # a valid, empty SQLite file
    client = start_and_check(start_server, root, env, {"model": str(pristine.model)}, None)
    assert client.close() == 0
    assert recorded_vectors_valid(root)


@pytest.mark.parametrize("mode", ["flip", "truncate", "junk", "delete"])
def test_damaged_or_lost_wal(
    mode: str, pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path, "killed")
    corrupt(root / ".kenning" / "kenning.sqlite3-wal", mode)
    # SQLite drops WAL frames whose checksums fail: the index is older, or moved aside if what
    # is left does not check out; either way the server catches up from the workspace.
    client = start_and_check(start_server, root, env, {"model": str(pristine.model)}, None)
    assert client.close() == 0
    assert recorded_vectors_valid(root)
    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")


@pytest.mark.parametrize("mode", ["flip", "truncate", "empty", "junk"])
def test_corrupt_optimised_model_cache(
    mode: str, pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path)
    (graph,) = (Path(env["KENNING_CACHE_DIR"]) / "models").glob("*-optimized-v2.onnx")
    corrupt(graph, mode)
    (root / "geometry.py").write_text(FILES["geometry.py"] + "\n# touched\n")
    client = start_and_check(start_server, root, env, {"model": str(pristine.model)}, "rebuilding")
    assert client.close() == 0
    # Rebuilt to the same graph: same model id, so nothing stored was thrown away.
    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        model_id = conn.execute("SELECT value FROM meta WHERE key='model_id'").fetchone()[0]
    assert ":optimized-v2:" in model_id
    import json

    sidecar = json.loads(graph.with_name(graph.name + ".json").read_text())
    from kenning.embedding.cache import sha256_hex

    assert sidecar["sha256"] == sha256_hex(graph.read_bytes())


# -- case 6: the model itself missing or broken ------------------------------------------------------


@pytest.mark.parametrize("damage", ["delete-onnx", "truncate-onnx", "junk-tokenizer"])
def test_broken_model_keeps_lexical_search(
    damage: str, pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path)
    model = Path(shutil.copytree(pristine.model, tmp_path / "model"))
    what, name = damage.split("-")
    target = model / ("model.onnx" if name == "onnx" else "tokenizer.json")
    corrupt(target, {"delete": "delete", "truncate": "truncate", "junk": "junk"}[what])
    (root / "extra.py").write_text("def platypus_counter():\n    return 7\n")
    client = start_server(root, {"model": str(model)}, env=env)
    client.wait_state("ready")
    # Lexical search and symbols keep working, new files included; dense results are flagged.
    result = client.search("platypus_counter")
    assert result["results"][0]["uri"].endswith("/extra.py")
    assert result["index"].get("lexicalOnly") is True
    symbols = client.call("workspace/symbol", {"query": "platypus"})["result"]
    assert symbols[0]["name"] == "platypus_counter"
    errors = [m for m in client.show_messages() if "model" in m]
    assert len(errors) == 1, client.show_messages()  # said once, clearly; no crash loop
    assert str(model) in errors[0]
    assert client.alive()
    assert client.close() == 0


# -- case 7: a different model (other dimensions) between runs ----------------------------------------


def test_model_with_other_dimensions_rebuilds_vectors(
    pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path)
    wider = build_tiny_model(tmp_path / "wider", dim=48, seed=11, model_id="tiny-wide")
    client = start_and_check(start_server, root, env, {"model": str(wider)}, "re-embedding")
    assert client.close() == 0
    from kenning.store import vectors

    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        sizes = {len(r[0]) for r in conn.execute("SELECT vector FROM embeddings")}
    assert meta["model_dim"] == "48" and meta["model_id"].startswith("tiny-wide:")
    assert sizes == {48 * 2}  # float16: never a mix of the two models' vectors
    header = vectors.usearch_index().metadata(str(root / ".kenning" / meta["vectors_file"]))
    assert header["dimensions"] == 48


# -- case 29: an index written by another version -----------------------------------------------------


@pytest.mark.parametrize("version", [SCHEMA_VERSION - 1, SCHEMA_VERSION + 1, 0])
def test_other_schema_version_is_rebuilt(
    version: int, pristine: Pristine, tmp_path: Path, start_server: StartServer
) -> None:
    root, env = pristine.copy(tmp_path)
    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        conn.execute(f"PRAGMA user_version={version}")
    client = start_and_check(
        start_server, root, env, {"model": str(pristine.model)}, f"schema version {version}"
    )
    assert client.close() == 0
    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
