"""The HNSW wrapper: atomic saves, and never loading a file that differs from the record."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kenning.store.vectors import VectorFileInvalid, VectorIndex, clean_stale_files

KEY = bytes(range(32))  # a store key (kenning.store.trust); any fixed one will do here


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 4))
    v = latent @ rng.normal(size=(4, dim)) + 0.1 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_add_search_remove_and_replace() -> None:
    ix = VectorIndex(16)
    vecs = _vectors(50)
    ix.add(np.arange(1, 51, dtype=np.uint64), vecs)
    keys, sims = ix.search(vecs[9], 3)
    assert keys[0] == 10 and sims[0] > 0.99
    assert ix.remove([10]) == 1
    keys, _ = ix.search(vecs[9], 5)
    assert 10 not in keys.tolist()
    # Adding an id that exists replaces its vector instead of raising.
    ix.add(np.array([11], dtype=np.uint64), vecs[20:21])
    ix.add(np.array([11], dtype=np.uint64), vecs[30:31])
    keys, _ = ix.search(vecs[30], 1)
    assert keys[0] in (11, 31)
    assert len(ix) == 49


def test_a_small_graph_is_scanned_whole_so_its_top_matches_are_exact() -> None:
    """Up to ``EXACT_SEARCH_LIMIT`` vectors the search is usearch's exact scan, not a walk of
    the graph. Random unit vectors in the model's 384 dimensions are a walk's hardest case: here
    it misses about a fifth of the true top 80. (With the real model, a walk at ef 128 once left
    a file out of a 1,001-vector graph's top 80: tests/lsp/test_workset.py.)"""
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(5_000, 384)).astype(np.float32)
    ix = VectorIndex(384)
    ix.add(np.arange(1, 5_001, dtype=np.uint64), vecs)
    for query in rng.normal(size=(20, 384)).astype(np.float32):
        keys, sims = ix.search(query, 80)
        scan = ix._index.search(query, 80, exact=True)  # usearch's own exact scan, the reference
        assert set(keys.tolist()) == set(np.asarray(scan.keys).tolist())
        assert np.allclose(np.sort(sims), np.sort(1.0 - np.asarray(scan.distances)))


def test_centroid_is_the_mean_of_the_vectors_and_follows_large_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ix = VectorIndex(16)
    assert ix.centroid() is None
    vecs = _vectors(200)
    ix.add(np.arange(1, 201, dtype=np.uint64), vecs)
    mean = ix.centroid()
    assert mean is not None and mean.shape == (16,)
    # int8 codes: within a rounding step of the float mean.
    assert np.abs(mean - vecs.mean(axis=0)).max() < 0.01
    # A change within CENTROID_CHURN (2 % of 200: 4 vectors) keeps it; more works it out again.
    other = _vectors(20, seed=1)
    ix.add(np.array([1, 2], dtype=np.uint64), other[:2])
    assert ix.centroid() is mean
    ix.remove(np.arange(1, 101, dtype=np.uint64))
    moved = ix.centroid()
    assert moved is not mean and moved is not None
    assert np.abs(moved - vecs[100:].mean(axis=0)).max() < 0.01
    # A large index is read in an evenly spaced sample.
    monkeypatch.setattr("kenning.store.vectors.CENTROID_SAMPLE", 10)
    ix.add(np.arange(1000, 1500, dtype=np.uint64), _vectors(500, seed=2))
    sampled = ix.centroid()
    assert sampled is not None and np.linalg.norm(sampled) > 0
    ix.remove(ix.keys())
    assert ix.centroid() is None


def test_save_is_atomic_and_load_checks_hash(tmp_path: Path) -> None:
    ix = VectorIndex(16)
    ix.add(np.arange(1, 101, dtype=np.uint64), _vectors(100))
    info = ix.save(tmp_path, 1, KEY)
    assert not list(tmp_path.glob("*.tmp"))
    loaded = VectorIndex.load(tmp_path, info, KEY)
    assert len(loaded) == 100

    path = tmp_path / info.name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(VectorFileInvalid, match="MAC"):
        VectorIndex.load(tmp_path, info, KEY)
    path.write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(VectorFileInvalid, match="bytes"):
        VectorIndex.load(tmp_path, info, KEY)
    path.unlink()
    with pytest.raises(VectorFileInvalid, match="missing"):
        VectorIndex.load(tmp_path, info, KEY)


def test_flipped_bytes_never_reach_usearch(tmp_path: Path) -> None:
    """A corrupted file can segfault usearch on search; the check must stop it before load."""
    ix = VectorIndex(16)
    ix.add(np.arange(1, 201, dtype=np.uint64), _vectors(200))
    info = ix.save(tmp_path, 1, KEY)
    path = tmp_path / info.name
    data = bytearray(path.read_bytes())
    for i in range(200, len(data), 97):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    code = (
        "import sys; from pathlib import Path; import numpy as np\n"
        "from kenning.store.vectors import VectorIndex, VectorFileInfo, VectorFileInvalid\n"
        f"info = VectorFileInfo(**{dataclasses.asdict(info)!r})\n"
        "try:\n"
        f"    ix = VectorIndex.load(Path({str(tmp_path)!r}), info, {KEY!r})\n"
        "    ix.search(np.ones(16, dtype=np.float32), 5)\n"
        "    print('loaded')\n"
        "except VectorFileInvalid as e:\n"
        "    print('rejected', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("rejected")


def test_clean_stale_files(tmp_path: Path) -> None:
    for name in ("vectors.1.usearch", "vectors.2.usearch", "vectors.3.usearch.tmp"):
        (tmp_path / name).write_bytes(b"x")
    removed = clean_stale_files(tmp_path, "vectors.2.usearch")
    assert sorted(removed) == ["vectors.1.usearch", "vectors.3.usearch.tmp"]
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.2.usearch"]


def test_graph_written_with_another_key_is_rejected(tmp_path: Path) -> None:
    """A graph file and the MAC "recorded" for it by someone without the key never load."""
    ix = VectorIndex(16)
    ix.add(np.arange(1, 51, dtype=np.uint64), _vectors(50))
    info = ix.save(tmp_path, 1, bytes(32))
    with pytest.raises(VectorFileInvalid, match="MAC"):
        VectorIndex.load(tmp_path, info, KEY)


@pytest.mark.parametrize("name", ["../vectors.1.usearch", "/etc/passwd", "vectors.0.usearch", "x.usearch"])
def test_only_names_kenning_gives_are_loaded(tmp_path: Path, name: str) -> None:
    ix = VectorIndex(16)
    info = ix.save(tmp_path, 1, KEY)
    with pytest.raises(VectorFileInvalid, match="not a name"):
        VectorIndex.load(tmp_path, dataclasses.replace(info, name=name), KEY)


def test_a_symlinked_graph_file_is_not_followed(tmp_path: Path) -> None:
    ix = VectorIndex(16)
    ix.add(np.arange(1, 51, dtype=np.uint64), _vectors(50))
    info = ix.save(tmp_path, 1, KEY)
    real = tmp_path / info.name
    moved = tmp_path / "elsewhere.bin"
    real.rename(moved)
    real.symlink_to(moved)
    with pytest.raises(VectorFileInvalid, match="not a regular file"):
        VectorIndex.load(tmp_path, info, KEY)
    # A link planted at the temp name is replaced, never written through.
    real.unlink()
    (tmp_path / "vectors.2.usearch.tmp").symlink_to(moved)
    before = moved.read_bytes()
    ix.save(tmp_path, 2, KEY)
    assert moved.read_bytes() == before
    assert not (tmp_path / "vectors.2.usearch").is_symlink()


def test_graph_mac_is_hmac_sha256_and_an_older_blake2b_record_still_loads(tmp_path: Path) -> None:
    """The MAC names its algorithm; a graph recorded by an earlier kenning (keyed BLAKE2b, no
    prefix) is still accepted after an upgrade, and still refused when its bytes differ."""
    import hashlib
    import hmac

    ix = VectorIndex(16)
    ix.add(np.arange(1, 41, dtype=np.uint64), _vectors(40))
    info = ix.save(tmp_path, 1, KEY)
    path = tmp_path / info.name
    data = path.read_bytes()
    expected = hmac.new(KEY, b"kenning-vectors\0" + data, hashlib.sha256).hexdigest()
    assert info.mac == f"hmac-sha256:{expected}"

    legacy = hashlib.blake2b(data, key=KEY, digest_size=32, person=b"kenning-vectors").hexdigest()
    older = dataclasses.replace(info, mac=legacy)
    assert len(VectorIndex.load(tmp_path, older, KEY)) == 40
    for wrong in (legacy[:-1], "sha1:" + expected, f"hmac-sha256:{legacy}", ""):
        with pytest.raises(VectorFileInvalid, match="MAC"):
            VectorIndex.load(tmp_path, dataclasses.replace(info, mac=wrong), KEY)
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x01
    path.write_bytes(bytes(flipped))
    for recorded in (info, older):
        with pytest.raises(VectorFileInvalid, match="MAC"):
            VectorIndex.load(tmp_path, recorded, KEY)
