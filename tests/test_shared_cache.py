"""The user-level shared embedding cache: reuse across stores, isolation between models, the cap
and LRU eviction, several writing processes, and that the stores stay the source of truth.

Every test runs with a private, empty ``KENNING_CACHE_DIR`` (the autouse fixture in conftest),
and with the real packaged model: counts, never times, are asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.embedding.shared import (
    FILENAME,
    ORIGIN_COMPUTED,
    ORIGIN_PACK,
    SharedCache,
    file_bytes,
    model_identity,
    parse_size,
)
from kenning.engine import Engine
from kenning.indexer import SHARED_ORIGIN_PACK, update
from kenning.search import SearchQuery, search
from tests.conftest import git_init, private_cache_dir, write_workspace


@pytest.fixture(scope="module")
def encoder():  # type: ignore[no-untyped-def]
    from kenning.embedding import Encoder

    return Encoder.load()


def _index(root: Path, encoder, config: Config | None = None):  # type: ignore[no-untyped-def]
    with Engine(root, config or Config(), encoder_factory=lambda _c: encoder) as engine:
        scanned, embedded = update(engine)
        status = engine.status()
        hits = search(engine, SearchQuery(text="retry a failed upload", mode="semantic", limit=3)).hits
    return scanned, embedded, status, hits


def _unique_inputs(root: Path) -> int:
    conn = sqlite3.connect(root / ".kenning" / "kenning.sqlite3")
    try:
        return int(conn.execute("SELECT count(DISTINCT embed_key) FROM chunks").fetchone()[0])
    finally:
        conn.close()


def test_a_second_copy_of_a_tree_embeds_nothing(workspace: Path, tmp_path: Path, encoder) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    _, first, status, _ = _index(workspace, encoder)
    assert first.embedded == _unique_inputs(workspace) > 5 and first.from_shared == 0
    assert status.origin == {"computed": first.embedded, "store": 0, "shared_cache": 0, "pack": 0}

    _, second, status2, hits = _index(copy, encoder)
    assert second.embedded == 0
    assert second.from_shared == first.embedded and second.from_pack == 0
    assert status2.embedded == status2.chunks and status2.pending == 0
    assert status2.origin == {"computed": 0, "store": 0, "shared_cache": first.embedded, "pack": 0}
    assert status2.shared_cache is not None and status2.shared_cache["enabled"] is True
    assert int(status2.shared_cache["bytes"]) > 0  # type: ignore[call-overload]
    assert hits and hits[0].path == "uploads.py"  # the reused vectors really search


def test_deleting_the_shared_cache_loses_nothing(workspace: Path, encoder) -> None:  # type: ignore[no-untyped-def]
    _index(workspace, encoder)
    cache = Path(os.environ["KENNING_CACHE_DIR"])
    for p in cache.glob(FILENAME + "*"):
        p.unlink()
    (workspace / "geometry.py").write_text("def area(r):\n    return 3.14 * r * r\n")
    _, again, status, hits = _index(workspace, encoder)
    assert again.embedded == 1 and again.from_shared == 0  # only the edited file's chunk
    assert status.embedded == status.chunks
    assert hits and hits[0].path == "uploads.py"


def test_off_by_config_or_environment(workspace: Path, tmp_path: Path, encoder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    copies = [tmp_path / "c1", tmp_path / "c2"]
    for c in copies:
        shutil.copytree(workspace, c)
    _index(workspace, encoder)
    _, off, _, _ = _index(copies[0], encoder, Config(shared_cache=False))
    assert off.embedded == _unique_inputs(copies[0]) and off.from_shared == 0
    monkeypatch.setenv("KENNING_SHARED_CACHE", "0")
    _, off_env, status, _ = _index(copies[1], encoder)
    assert off_env.embedded == _unique_inputs(copies[1]) and off_env.from_shared == 0
    assert status.shared_cache is not None and status.shared_cache["enabled"] is False


def test_an_empty_cache_dir_starts_from_an_empty_cache(
    workspace: Path, tmp_path: Path, encoder, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    _index(workspace, encoder)
    monkeypatch.setenv("KENNING_CACHE_DIR", str(private_cache_dir(tmp_path / "empty-cache")))
    _, fresh, _, _ = _index(copy, encoder)
    assert fresh.from_shared == 0 and fresh.embedded == _unique_inputs(copy)


def test_a_reused_vector_is_the_computed_one_to_the_int8_code(  # type: ignore[no-untyped-def]
    workspace: Path, tmp_path: Path, encoder
) -> None:
    # The store and the shared cache keep float16; a vector computed now must enter the graph
    # as the one read back later (another copy, a pack, a rebuild), or two indexes of one tree
    # rank differently. From float32 one vector in two was a code off.
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    _index(workspace, encoder)
    _, second, _, _ = _index(copy, encoder)
    assert second.embedded == 0 and second.from_shared > 5

    def graph(root: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with Engine(root, Config(), encoder_factory=lambda _c: encoder) as engine:
            engine.open()
            engine.adopt_loaded_vectors()
            assert engine.vectors is not None
            centroid = engine.vectors.centroid()
            assert centroid is not None
            keys, sims = engine.vectors.search(encoder.embed_query("retry a failed upload"), 50)
            return centroid, keys, sims

    computed, reused = graph(workspace), graph(copy)
    for a, b in zip(computed, reused, strict=True):
        assert np.array_equal(a, b)


def test_a_model_change_never_reuses_another_models_vectors(workspace: Path, tmp_path: Path, encoder) -> None:  # type: ignore[no-untyped-def]
    from kenning.embedding import Encoder

    original = Encoder.load(variant="original")
    # Same dimension, same inputs, another graph: the vectors differ, so they must not mix.
    assert original.dim == encoder.dim and original.model_id != encoder.model_id
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    _index(workspace, encoder)
    _, other, _, _ = _index(copy, original)
    assert other.from_shared == 0 and other.embedded == _unique_inputs(copy)
    # And the same store switching model re-embeds, then switching back reuses the first model's.
    _, back, status, _ = _index(copy, encoder)
    assert back.from_shared == _unique_inputs(copy) and back.embedded == 0
    assert status.origin is not None and status.origin["computed"] == 0  # counters restart per model
    cache = SharedCache()
    try:
        idents = {m.identity for m in cache.usage().models}
    finally:
        cache.close()
    assert idents == {
        model_identity(encoder.model_id, encoder.dim),
        model_identity(original.model_id, original.dim),
    }


def test_identity_and_sizes() -> None:
    assert model_identity("m:1", 384) != model_identity("m:1", 256) != model_identity("m:2", 256)
    assert parse_size("2G") == 2 * 1024**3 and parse_size("1.5MiB") == int(1.5 * 1024**2)
    assert parse_size("750000") == 750000 and parse_size(4096) == 4096
    for bad in ("", "2X", "-1G", "G"):
        with pytest.raises(ValueError, match="size"):
            parse_size(bad)
    assert SHARED_ORIGIN_PACK == ORIGIN_PACK


# -- the cache on its own (synthetic vectors of a made-up model: no model needed) ---------------


def _key(i: int) -> bytes:
    return i.to_bytes(16, "big")


def _vectors(keys: list[int], dim: int) -> np.ndarray:
    return np.stack([np.random.default_rng(k).standard_normal(dim) for k in keys]).astype(np.float16)


def _rows(keys: list[int], dim: int) -> list[tuple[bytes, bytes]]:
    return [(_key(k), v.tobytes()) for k, v in zip(keys, _vectors(keys, dim), strict=True)]


def test_least_recently_used_vectors_go_first(tmp_path: Path) -> None:
    dim, cap = 64, 2 * 1024 * 1024  # ~9,000 rows of 64 dimensions
    cache = SharedCache(tmp_path / "c", max_bytes=cap)
    model = cache.model("made-up#64", dim)
    now = int(time.time())
    old, older, fresh = list(range(2000)), list(range(2000, 4000)), list(range(4000, 10_000))
    model.put_rows(_rows(old, dim), ORIGIN_COMPUTED, now - 9000)
    model.put_rows(_rows(older, dim), ORIGIN_COMPUTED, now - 5000)
    # Using the oldest group makes it recent (stamped on flush), so eviction spares it.
    assert len(model.lookup([_key(k) for k in old])) == len(old)
    model.flush()
    model.put_rows(_rows(fresh, dim), ORIGIN_COMPUTED, now + 60)  # used after the look-up
    assert cache.enforce_cap() > 0
    assert len(model.lookup([_key(k) for k in old])) == len(old)
    assert len(model.lookup([_key(k) for k in fresh])) == len(fresh)
    assert len(model.lookup([_key(k) for k in older])) < len(older)
    cache.close()


def test_the_cap_is_honoured_within_a_few_percent(tmp_path: Path) -> None:
    dim, cap = 64, 2 * 1024 * 1024
    cache = SharedCache(tmp_path / "c", max_bytes=cap)
    model = cache.model("made-up#64", dim)
    for start in range(0, 40_000, 2000):  # ~9 MB of vectors through a 2 MiB cache
        keys = list(range(start, start + 2000))
        model.put([_key(k) for k in keys], _vectors(keys, dim))
    # The cap bounds the database; the WAL beside it is folded back at the last close (and is
    # bounded by SQLite's auto-checkpoint, ~4 MB, while open).
    cache.close()
    cache = SharedCache(tmp_path / "c", max_bytes=cap)
    model = cache.model("made-up#64", dim)
    size = file_bytes(cache.path)
    assert cap * 0.85 <= size <= cap * 1.03, (size, cap)  # and not far more evicted than needed
    newest = list(range(38_000, 40_000))
    assert len(model.lookup([_key(k) for k in newest])) == len(newest)
    assert model.lookup([_key(k) for k in range(2000)]) == {}
    # An explicit trim (kenning cache --trim) goes lower, once; it checkpoints the WAL itself.
    cache.enforce_cap(1024 * 1024)
    assert file_bytes(cache.path) <= 1024 * 1024 * 1.03
    assert cache.clear() > 0 and cache.usage().vectors == 0
    cache.close()


def test_vectors_of_the_wrong_size_are_never_handed_out(tmp_path: Path) -> None:
    cache = SharedCache(tmp_path / "c")
    model = cache.model("made-up#8", 8)
    model.put_rows([(_key(1), b"\0" * 10), (_key(2), b"\0" * 16)], ORIGIN_COMPUTED, int(time.time()))
    assert set(model.lookup([_key(1), _key(2)])) == {_key(2)}
    with pytest.raises(Exception, match="dimension"):
        cache.model("made-up#8", 16)
    cache.close()


def test_a_file_that_is_not_a_database_is_set_aside(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / FILENAME).write_bytes(b"this is not SQLite" * 500)
    cache = SharedCache(directory)
    model = cache.model("made-up#4", 4)
    model.put([_key(1)], np.ones((1, 4), dtype=np.float32))
    assert set(model.lookup([_key(1)])) == {_key(1)}
    cache.close()
    assert list(directory.glob(FILENAME + ".corrupt-*"))


_WRITER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from pathlib import Path
    from kenning.embedding.shared import SharedCache

    directory, worker, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cache = SharedCache(directory, max_bytes=1 << 30)
    model = cache.model("made-up#32", 32)
    reads = 0
    for r in range(rounds):
        # Each worker writes its own keys and a range every worker writes too.
        keys = [worker * 100_000 + r * 10 + i for i in range(10)] + [r * 10 + i for i in range(10)]
        vecs = np.stack([np.random.default_rng(k).standard_normal(32) for k in keys])
        model.put([k.to_bytes(16, "big") for k in keys], vecs)
        reads += len(model.lookup([k.to_bytes(16, "big") for k in keys]))
    model.flush()
    assert model.broken is None, model.broken
    print(reads)
    """
)


def test_several_processes_write_and_read_at_once(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    workers, rounds = 4, 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(directory), str(w), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(1, workers + 1)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
        assert "off for this process" not in err, err[-3000:]
        assert int(out) == rounds * 20  # every write was readable right after, by its writer
    cache = SharedCache(directory)
    model = cache.model("made-up#32", 32)
    own = [w * 100_000 + r * 10 + i for w in range(1, workers + 1) for r in range(rounds) for i in range(10)]
    common = [r * 10 + i for r in range(rounds) for i in range(10)]
    found = model.lookup([_key(k) for k in own + common])
    assert len(found) == len(own) + len(common) == model.count()
    for k in (own[0], own[-1], common[0], common[-1]):
        expected = np.random.default_rng(k).standard_normal(32).astype(np.float16)
        assert np.frombuffer(found[_key(k)][0], dtype="<f2").tolist() == expected.tolist()
    assert cache._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache.close()


# -- branches ------------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _module(i: int, flavour: str) -> str:
    return f"def {flavour}_step_{i}(value):\n    return value * {i} + {len(flavour)}\n"


@pytest.fixture
def two_branches(tmp_path: Path) -> Path:
    """A repository whose branches ``main`` and ``feature`` differ in 12 of 16 files."""
    repo = tmp_path / "repo"
    write_workspace(repo, {f"pkg/m{i}.py": _module(i, "base") for i in range(16)})
    git_init(repo)
    _git(repo, "branch", "-M", "main")
    _git(repo, "checkout", "-q", "-b", "feature")
    for i in range(12):
        (repo / f"pkg/m{i}.py").write_text(_module(i, "feature"))
    _git(repo, "commit", "-qam", "feature")
    _git(repo, "checkout", "-q", "main")
    return repo


@pytest.mark.parametrize("shared", [True, False], ids=["shared-cache", "no-shared-cache"])
def test_switching_branches_and_back_embeds_only_the_unseen(
    two_branches: Path, encoder, shared: bool
) -> None:  # type: ignore[no-untyped-def]
    repo, config = two_branches, Config(shared_cache=shared)
    _, main, _, _ = _index(repo, encoder, config)
    assert main.embedded == 16
    _git(repo, "checkout", "-q", "feature")
    scanned, feature, _, _ = _index(repo, encoder, config)
    assert scanned.files_changed == 12 and feature.embedded == 12
    for branch in ("main", "feature", "main"):
        _git(repo, "checkout", "-q", branch)
        scanned, back, status, _ = _index(repo, encoder, config)
        assert scanned.files_changed == 12 and scanned.chunks_reused == 12
        assert back.embedded == 0 and back.from_shared == 0  # the store's own vectors sufficed
        assert status.embedded == status.chunks


def test_a_new_branch_in_a_new_worktree_is_cheap_with_the_shared_cache(
    two_branches: Path, tmp_path: Path, encoder
) -> None:  # type: ignore[no-untyped-def]
    repo = two_branches
    _index(repo, encoder)  # main
    _git(repo, "checkout", "-q", "feature")
    _index(repo, encoder)  # feature
    _git(repo, "checkout", "-q", "main")
    # A new worktree on a new branch: main plus two edited files, and one new one.
    tree = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", "-b", "topic", str(tree), "main")
    (tree / "pkg/m14.py").write_text(_module(14, "topic"))
    (tree / "pkg/m3.py").write_text(_module(3, "feature"))  # as on feature: seen before
    (tree / "pkg/new.py").write_text(_module(99, "topic"))
    _, topic, status, _ = _index(tree, encoder)
    assert topic.embedded == 2  # only m14 and new.py are new to this machine
    assert topic.from_shared == 15
    assert status.embedded == status.chunks == 17


def test_cli_reports_origins_and_manages_the_cache(workspace: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)

    def kenning(*args: str) -> dict:  # type: ignore[type-arg]
        proc = subprocess.run(
            [sys.executable, "-m", "kenning", *args], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    first = kenning("index", str(workspace), "--json")
    n = first["computed"]
    assert n > 5 and first["reused"] == 0 and first["chunks"] >= n
    second = kenning("index", str(copy), "--json")
    assert second["computed"] == 0 and second["reused"] == n
    assert second["reused_from"] == {"store": 0, "shared_cache": n, "pack": 0}
    stats = kenning("stats", "--root", str(copy), "--json")
    assert stats["origin"]["shared_cache"] == n and stats["shared_cache"]["enabled"] is True
    shown = kenning("cache", "--json")
    assert shown["vectors"] == n and shown["bytes"] > 0 and shown["max_bytes"] == 2 * 1024**3
    assert kenning("cache", "--json", "--cache-max", "64M")["max_bytes"] == 64 * 1024**2
    assert kenning("cache", "--clear", "--json")["vectors"] == 0
    off = kenning("index", str(copy), "--json", "--no-shared-cache")
    assert off["shared_cache"]["enabled"] is False and off["computed"] == 0  # nothing changed
    proc = subprocess.run(
        [sys.executable, "-m", "kenning", "cache", "--trim", "lots"], capture_output=True, text=True
    )
    assert proc.returncode != 0 and "--trim" in proc.stderr and "Traceback" not in proc.stderr
