"""Index packs: export, import into the shared cache, reuse by a fresh clone; and every way a
pack can be wrong (truncated, corrupt, another model, hostile) refused without changing anything.

Every test has a private, empty ``KENNING_CACHE_DIR`` (conftest).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.embedding.pack import (
    DIGEST_BYTES,
    MAGIC,
    PackError,
    export_store,
    import_pack,
    verify_pack,
    write_pack,
)
from kenning.embedding.shared import ModelCache, SharedCache, file_bytes, model_identity
from kenning.engine import Engine
from kenning.indexer import update
from tests.conftest import private_cache_dir

MODEL = "made-up:0123456789abcdef:original:00000000"
DIM = 8


@pytest.fixture(scope="module")
def encoder():  # type: ignore[no-untyped-def]
    from kenning.embedding import Encoder

    return Encoder.load()


def _key(i: int) -> bytes:
    return hashlib.blake2b(str(i).encode(), digest_size=16).digest()


def _good_pack(path: Path, n: int = 50, dim: int = DIM, model: str = MODEL) -> Path:
    rng = np.random.default_rng(5)
    write_pack(path, model, dim, [_key(i) for i in range(n)], rng.standard_normal((n, dim)))
    return path


@pytest.fixture
def cache(tmp_path: Path):  # type: ignore[no-untyped-def]
    shared = SharedCache(tmp_path / "cache")
    yield shared.model(model_identity(MODEL, DIM), DIM)
    shared.close()


def _fingerprint(model: ModelCache) -> tuple[int, list[tuple[bytes, bytes]]]:
    rows = model.cache._conn.execute("SELECT key, vector FROM vectors ORDER BY key").fetchall()
    return len(rows), [(bytes(k), bytes(v)) for k, v in rows]


# -- the round trip ----------------------------------------------------------------------------


def test_import_verifies_adds_and_is_idempotent(tmp_path: Path, cache: ModelCache) -> None:
    pack = _good_pack(tmp_path / "p.kpack")
    info = verify_pack(pack)
    assert (info.count, info.dim, info.model_id) == (50, DIM, MODEL)
    first = import_pack(pack, cache)
    assert (first.added, first.already) == (50, 0)
    again = import_pack(pack, cache)
    assert (again.added, again.already) == (0, 50)
    found = cache.lookup([_key(i) for i in range(50)])
    assert len(found) == 50 and {origin for _, origin in found.values()} == {1}
    expected = np.random.default_rng(5).standard_normal((50, DIM)).astype("<f2")
    assert found[_key(7)][0] == expected[7].tobytes()


def test_a_fresh_clone_seeded_by_a_pack_embeds_nothing(
    workspace: Path, tmp_path: Path, encoder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    clone = tmp_path / "clone"
    shutil.copytree(workspace, clone)
    # "CI": index the main branch and export a pack.
    with Engine(workspace, Config(), encoder_factory=lambda _c: encoder) as engine:
        _, built = update(engine)
        info = export_store(engine.store_dir / "kenning.sqlite3", tmp_path / "main.kpack")
    assert info.count == built.embedded > 5
    raw = (tmp_path / "main.kpack").read_bytes()
    assert b"uploads" not in raw and b"retry" not in raw  # no paths, no source text
    # "A developer": another machine (an empty cache); the pack is imported before indexing.
    monkeypatch.setenv("KENNING_CACHE_DIR", str(private_cache_dir(tmp_path / "dev-cache")))
    (clone / "geometry.py").write_text("def area(r):\n    return 3.14 * r * r\n")
    config = Config(import_pack=str(tmp_path / "main.kpack"))
    with Engine(clone, config, encoder_factory=lambda _c: encoder) as engine:
        _, dev = update(engine)
        status = engine.status()
    assert dev.pack_imported == info.count
    assert dev.embedded == 1  # only the chunk changed since the pack was made
    assert dev.from_pack == dev.from_shared == status.chunks - 1
    assert status.origin == {"computed": 1, "store": 0, "shared_cache": 0, "pack": dev.from_pack}
    # The same pack again (unchanged file) is not re-imported.
    (clone / "new.py").write_text("def fresh():\n    return 1\n")
    with Engine(clone, config, encoder_factory=lambda _c: encoder) as engine:
        _, later = update(engine)
    assert later.pack_imported == 0 and later.embedded == 1


def test_cli_export_import_and_index(workspace: Path, tmp_path: Path) -> None:
    def kenning(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kenning", *args],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **(env or {})},
        )

    pack = tmp_path / "ci.kpack"
    out = kenning("pack", "export", str(pack), "--root", str(workspace), "-q")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "wrote" in out.stdout
    dev = {"KENNING_CACHE_DIR": str(private_cache_dir(tmp_path / "dev"))}
    clone = tmp_path / "clone"
    shutil.copytree(workspace, clone, ignore=shutil.ignore_patterns(".kenning"))
    imported = kenning("pack", "import", str(pack), env=dev)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert "imported" in imported.stdout
    summary = json.loads(kenning("index", str(clone), "--json", env=dev).stdout)
    assert summary["computed"] == 0 and summary["reused"] == summary["reused_from"]["pack"] > 5
    bad = tmp_path / "bad.kpack"
    bad.write_bytes(pack.read_bytes()[:-100])
    refused = kenning("pack", "import", str(bad), env=dev)
    assert refused.returncode == 2 and "truncated" in refused.stderr and "Traceback" not in refused.stderr


# -- hostile and broken packs -----------------------------------------------------------------


def _parts(path: Path) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    data = path.read_bytes()
    (hlen,) = struct.unpack("<I", data[len(MAGIC) : len(MAGIC) + 4])
    start = len(MAGIC) + 4
    return json.loads(data[start : start + hlen]), data[start + hlen : -DIGEST_BYTES]


def _forge(path: Path, header: dict | bytes, body: bytes, magic: bytes = MAGIC) -> Path:  # type: ignore[type-arg]
    """A pack with a valid checksum around whatever header and body are given."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    data = magic + struct.pack("<I", len(raw)) + raw + body
    path.write_bytes(data + hashlib.blake2b(data, digest_size=DIGEST_BYTES).digest())
    return path


def _keys_at(data: bytes) -> int:
    (hlen,) = struct.unpack("<I", data[len(MAGIC) : len(MAGIC) + 4])
    return len(MAGIC) + 4 + hlen


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def _edit(field: str, value: object) -> Callable[[Path, Path], Path]:
    def make(good: Path, out: Path) -> Path:
        header, body = _parts(good)
        header[field] = value
        return _forge(out, header, body)

    return make


def _bytes(fn: Callable[[bytes], bytes]) -> Callable[[Path, Path], Path]:
    def make(good: Path, out: Path) -> Path:
        out.write_bytes(fn(good.read_bytes()))
        return out

    return make


def _body(fn: Callable[[dict, bytes], tuple[dict, bytes]]) -> Callable[[Path, Path], Path]:  # type: ignore[type-arg]
    def make(good: Path, out: Path) -> Path:
        header, body = _parts(good)
        return _forge(out, *fn(header, body))

    return make


def _swap_first_keys(header: dict, body: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    return header, body[16:32] + body[:16] + body[32:]


def _duplicate_key(header: dict, body: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    return header, body[:16] + body[:16] + body[32:]


def _nan_vector(header: dict, body: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    at = header["count"] * 16 + 4
    return header, body[:at] + np.array([np.nan], dtype="<f2").tobytes() + body[at + 2 :]


def _other_dim(header: dict, body: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    # Consistent sizes, another dimension: the same 50 keys with vectors of 4.
    keys = body[: header["count"] * 16]
    header = {**header, "dim": 4, "model_identity": model_identity(header["model_id"], 4)}
    return header, keys + np.zeros((header["count"], 4), dtype="<f2").tobytes()


HOSTILE: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "empty file": (_bytes(lambda d: b""), "not a kenning index pack"),
    "not a pack": (_bytes(lambda d: b"PK\x03\x04" + d[4:]), "not a kenning index pack"),
    "text-mode mangled": (_bytes(lambda d: d.replace(b"\r\n", b"\n", 1)), "not a kenning index pack"),
    "cut in the header": (_bytes(lambda d: d[: len(MAGIC) + 10]), "truncated"),
    "cut in the keys": (_bytes(lambda d: d[: len(d) // 3]), "truncated"),
    "cut in the vectors": (_bytes(lambda d: d[:-200]), "truncated"),
    "cut in the checksum": (_bytes(lambda d: d[:-5]), "truncated"),
    "padded": (_bytes(lambda d: d + b"\0" * 64), "more than its header announces"),
    "flipped vector bit": (_bytes(lambda d: d[:-40] + bytes([d[-40] ^ 1]) + d[-39:]), "checksum mismatch"),
    "flipped key bit": (_bytes(lambda d: _flip(d, _keys_at(d) + 15)), "checksum mismatch"),
    "format 2": (_edit("format", 2), "format 2"),
    "another model": (_edit("model_id", "some-other-model:1"), "disagrees"),
    "another model, consistent": (
        _body(lambda h, b: ({**h, "model_id": "x:1", "model_identity": model_identity("x:1", DIM)}, b)),
        "was made with model x:1",
    ),
    "another dimension": (_body(_other_dim), "4 dimensions"),
    "absurd count": (_edit("count", 10**12), "'count' must be an integer"),
    "count and size disagree": (_edit("count", 49), "more than its header announces"),
    "negative dim": (_edit("dim", -8), "'dim' must be an integer"),
    "boolean dim": (_edit("dim", True), "'dim' must be an integer"),
    "a path inside": (_edit("path", "../../../home/user/.ssh/id_rsa"), "unexpected header field 'path'"),
    "source text inside": (_edit("files", ["src/secret.py"]), "unexpected header field 'files'"),
    "path as the model": (
        _body(
            lambda h, b: (
                {
                    **h,
                    "model_id": "../../etc/passwd",
                    "model_identity": model_identity("../../etc/passwd", DIM),
                },
                b,
            )
        ),
        "was made with model ../../etc/passwd",
    ),
    "control characters": (_edit("kenning", "0.1\x1b[2J"), "control characters"),
    "missing field": (
        _body(lambda h, b: ({k: v for k, v in h.items() if k != "dtype"}, b)),
        "'dtype' is missing",
    ),
    "header not json": (lambda g, o: _forge(o, b"{not json", _parts(g)[1]), "not valid JSON"),
    "header a list": (lambda g, o: _forge(o, b"[1, 2]", _parts(g)[1]), "must be a JSON object"),
    "huge header length": (
        _bytes(lambda d: d[: len(MAGIC)] + struct.pack("<I", 0xFFFFFFFF) + d[len(MAGIC) + 4 :]),
        "header length",
    ),
    "unordered keys": (_body(_swap_first_keys), "not strictly ascending"),
    "duplicate keys": (_body(_duplicate_key), "not strictly ascending"),
    "not finite": (_body(_nan_vector), "not finite"),
    "float32 claimed": (_edit("dtype", "float32"), "'dtype' must be 'float16-le'"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_bad_pack_is_refused_and_changes_nothing(case: str, tmp_path: Path, cache: ModelCache) -> None:
    make, message = HOSTILE[case]
    import_pack(_good_pack(tmp_path / "seed.kpack", n=5), cache)  # something already there
    before = _fingerprint(cache)
    good = _good_pack(tmp_path / "good.kpack")
    bad = make(good, tmp_path / "bad.kpack")
    with pytest.raises(PackError) as err:
        import_pack(bad, cache)
    assert message in str(err.value), str(err.value)
    assert str(bad) in str(err.value) or "was made with model" in str(err.value)
    assert _fingerprint(cache) == before


def test_files_that_are_not_packs_at_all(tmp_path: Path, cache: ModelCache) -> None:
    with pytest.raises(PackError, match="not a regular file"):
        import_pack(tmp_path, cache)
    with pytest.raises(PackError, match="cannot open"):
        import_pack(tmp_path / "missing.kpack", cache)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(PackError, match="not a regular file"):
        verify_pack(fifo)


def test_a_pack_changed_between_check_and_import_rolls_back(tmp_path: Path, cache: ModelCache) -> None:
    """The rows are re-hashed as they are inserted, inside one transaction."""
    pack = _good_pack(tmp_path / "p.kpack", n=20_000)
    before = _fingerprint(cache)
    import kenning.embedding.pack as pack_module

    real_verify = pack_module.verify_pack

    def verify_then_tamper(path: Path):  # type: ignore[no-untyped-def]
        info = real_verify(path)
        data = bytearray(path.read_bytes())
        data[-100] ^= 1  # a vector byte near the end: the insert is well under way by then
        path.write_bytes(bytes(data))
        return info

    pack_module.verify_pack = verify_then_tamper  # type: ignore[assignment]
    try:
        with pytest.raises(PackError, match="checksum mismatch"):
            import_pack(pack, cache)
    finally:
        pack_module.verify_pack = real_verify
    assert _fingerprint(cache) == before


_IMPORTER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from kenning.embedding.pack import import_pack
    from kenning.embedding.shared import SharedCache, model_identity

    cache = SharedCache(Path(sys.argv[1]))
    model = cache.model(model_identity(sys.argv[3], int(sys.argv[4])), int(sys.argv[4]))
    print("importing", flush=True)
    import_pack(Path(sys.argv[2]), model)
    print("done", flush=True)
    """
)


def test_an_import_killed_midway_leaves_all_or_nothing(tmp_path: Path) -> None:
    n, dim = 150_000, 32
    pack = tmp_path / "big.kpack"
    rng = np.random.default_rng(1)
    write_pack(pack, MODEL, dim, [_key(i) for i in range(n)], rng.standard_normal((n, dim)))
    directory = tmp_path / "cache"
    outcomes = set()
    for delay in (0.3, 0.8, 1.5):
        proc = subprocess.Popen(
            [sys.executable, "-c", _IMPORTER, str(directory), str(pack), MODEL, str(dim)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "importing"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        conn = sqlite3.connect(directory / "embeddings-v1.sqlite3")
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            count = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            conn.close()
        assert count in (0, n), count
        outcomes.add(count)
    # Whatever the kills left, importing again completes it.
    cache = SharedCache(directory)
    model = cache.model(model_identity(MODEL, dim), dim)
    result = import_pack(pack, model)
    assert result.added + result.already == n and model.count() == n
    cache.close()
    assert file_bytes(directory / "embeddings-v1.sqlite3") > n * dim * 2


def test_export_refuses_an_index_without_vectors(tmp_path: Path, workspace: Path) -> None:
    with Engine(workspace, Config()) as engine:
        from kenning.indexer import scan

        scan(engine)
        db = engine.store_dir / "kenning.sqlite3"
    with pytest.raises(PackError, match="no vectors yet"):
        export_store(db, tmp_path / "x.kpack")
    assert not (tmp_path / "x.kpack").exists()
