"""Index packs: one portable file of an index's vectors, to seed other machines' shared caches.

A pack holds the model identity, the dimension, and for every distinct model input of an index
its key (blake2b-128 of the exact input) and float16 vector: no paths, no source text. A CI job
exports one from the main branch; a developer imports it into the shared embedding cache
(:mod:`kenning.embedding.shared`), and a fresh clone then embeds only what changed since.

Format (version 1), little-endian, chosen over a SQLite file because a database from outside is
a program for SQLite's parser to run (triggers, views, odd page layouts): every byte of this one
is checked against a size computed from the header before anything is used::

    MAGIC (16 bytes)  b"\\x89KENNING-PACK\\r\\n\\x1a\\n"   (catches text-mode mangling)
    header length     uint32
    header            UTF-8 JSON: format, model_identity, model_id, dim, count, key_bytes, dtype, kenning
    keys              count x 16 bytes, strictly ascending (so no duplicates)
    vectors           count x dim float16, finite
    checksum          blake2b-256 of every byte before it

Import refuses, with a message naming what is wrong and before changing anything: a wrong magic
or format version, a header that is not exactly the fields above, another model or dimension,
absurd counts, a file whose size disagrees with its header (truncated or padded), a checksum
mismatch, unordered keys, non-finite vectors. The rows go into the cache in one transaction,
re-hashed as they are read: a kill or a file changed under it leaves the cache as it was, and
importing the same pack twice adds nothing the second time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import struct
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from kenning import __version__
from kenning.embedding.shared import ORIGIN_PACK, ModelCache, model_identity
from kenning.types import KenningError

__all__ = [
    "FORMAT",
    "ImportReport",
    "PackError",
    "PackInfo",
    "export_store",
    "import_pack",
    "verify_pack",
    "write_pack",
]

MAGIC = b"\x89KENNING-PACK\r\n\x1a\n"
FORMAT = 1
KEY_BYTES = 16
DIGEST_BYTES = 32
MAX_HEADER = 64 * 1024
MAX_COUNT = 50_000_000  # far above any repository; a bigger count is a hostile or broken header
MAX_DIM = 16_384
MAX_STRING = 1_000
BLOCK = 8192  # records per read
_FIELDS = frozenset({"format", "model_identity", "model_id", "dim", "count", "key_bytes", "dtype", "kenning"})


class PackError(KenningError):
    """The pack cannot be used; the message says why and names the file."""


@dataclass(frozen=True, slots=True)
class PackInfo:
    path: str
    model_id: str
    dim: int
    count: int
    identity: str
    bytes: int
    checksum: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    info: PackInfo
    added: int  # vectors the cache did not hold before
    already: int  # vectors it held (re-stamped as used)


def _header_bytes(model_id: str, dim: int, count: int) -> bytes:
    header = {
        "format": FORMAT,
        "model_identity": model_identity(model_id, dim),
        "model_id": model_id,
        "dim": dim,
        "count": count,
        "key_bytes": KEY_BYTES,
        "dtype": "float16-le",
        "kenning": __version__,
    }
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _expected_size(header_len: int, count: int, dim: int) -> int:
    return len(MAGIC) + 4 + header_len + count * KEY_BYTES + count * dim * 2 + DIGEST_BYTES


# -- export -------------------------------------------------------------------------------------


def export_store(db_path: Path, dest: Path) -> PackInfo:
    """Write the vectors of the chunks a store holds now to ``dest`` (atomically).

    Reads one consistent snapshot of the store's SQLite file (a writer may keep working).
    """
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30.0)
    try:
        conn.execute("BEGIN")  # one snapshot for the counting and both passes below
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('model_id', 'model_dim')"))
        if "model_id" not in meta or "model_dim" not in meta:
            raise PackError(f"the index at {db_path.parent} has no vectors yet: run `kenning index` first")
        model_id, dim = str(meta["model_id"]), int(meta["model_dim"])
        live = (
            "FROM embeddings e WHERE e.key IN (SELECT embed_key FROM chunks) AND length(e.vector) = ?"
            " ORDER BY e.key"
        )
        count = int(conn.execute(f"SELECT count(*) {live}", (dim * 2,)).fetchone()[0])
        header = _header_bytes(model_id, dim, count)
        digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
        dest = dest.expanduser()
        if dest.is_dir():
            raise PackError(f"{dest} is a directory; give a file name (e.g. {dest / 'index.kpack'})")
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:

                def write(data: bytes) -> None:
                    fh.write(data)
                    digest.update(data)

                write(MAGIC + struct.pack("<I", len(header)) + header)
                for column in ("e.key", "e.vector"):
                    cur = conn.execute(f"SELECT {column} {live}", (dim * 2,))
                    while rows := cur.fetchmany(BLOCK):
                        write(b"".join(bytes(r[0]) for r in rows))
                fh.write(digest.digest())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except sqlite3.Error as exc:
        raise PackError(f"cannot read the index at {db_path.parent}: {exc}") from exc
    finally:
        conn.close()
    return PackInfo(
        path=str(dest),
        model_id=model_id,
        dim=dim,
        count=count,
        identity=model_identity(model_id, dim),
        bytes=dest.stat().st_size,
        checksum=digest.hexdigest(),
    )


def write_pack(dest: Path, model_id: str, dim: int, keys: list[bytes], vectors: np.ndarray) -> PackInfo:
    """Write a pack from memory (sorted on the way): the export of anything not in a store."""
    half = np.ascontiguousarray(vectors, dtype="<f2")
    if half.shape != (len(keys), dim) or any(len(k) != KEY_BYTES for k in keys):
        n = len(keys)
        raise ValueError(f"expected {n} keys of {KEY_BYTES} bytes and vectors of shape ({n}, {dim})")
    order = sorted(range(len(keys)), key=keys.__getitem__)
    header = _header_bytes(model_id, dim, len(keys))
    body = MAGIC + struct.pack("<I", len(header)) + header
    body += b"".join(keys[i] for i in order) + half[order].tobytes()
    digest = hashlib.blake2b(body, digest_size=DIGEST_BYTES)
    dest = Path(dest).expanduser()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body + digest.digest())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return PackInfo(
        path=str(dest),
        model_id=model_id,
        dim=dim,
        count=len(keys),
        identity=model_identity(model_id, dim),
        bytes=dest.stat().st_size,
        checksum=digest.hexdigest(),
    )


# -- reading and checking -----------------------------------------------------------------------


def _open(path: Path) -> tuple[IO[bytes], int]:
    # O_NONBLOCK: opening a FIFO someone named as a pack must not hang waiting for a writer.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError as exc:
        raise PackError(f"{path} is not a regular file (a directory)") from exc
    except OSError as exc:
        raise PackError(f"cannot open the pack {path}: {exc.strerror or exc}") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise PackError(f"{path} is not a regular file")
    return os.fdopen(fd, "rb"), st.st_size


def _read_exact(fh: IO[bytes], n: int, path: Path, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise PackError(f"{path} is truncated (in the {what})")
    return data


def _parse_header(fh: IO[bytes], size: int, path: Path) -> tuple[dict[str, Any], int]:
    magic = fh.read(len(MAGIC))
    if magic != MAGIC:
        raise PackError(f"{path} is not a kenning index pack (wrong magic bytes)")
    (header_len,) = struct.unpack("<I", _read_exact(fh, 4, path, "header length"))
    if not 2 <= header_len <= MAX_HEADER:
        raise PackError(f"{path}: header length {header_len} is out of range (at most {MAX_HEADER})")
    raw = _read_exact(fh, header_len, path, "header")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PackError(f"{path}: the header is not valid JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise PackError(f"{path}: the header must be a JSON object")
    fmt = header.get("format")
    if fmt != FORMAT:
        raise PackError(f"{path}: pack format {fmt!r}, this kenning reads format {FORMAT}")
    extra = sorted(set(header) - _FIELDS)
    if extra:
        raise PackError(f"{path}: unexpected header field {extra[0]!r} (a pack holds no paths or text)")
    missing = sorted(_FIELDS - set(header))
    if missing:
        raise PackError(f"{path}: header field {missing[0]!r} is missing")
    for name in ("model_identity", "model_id", "dtype", "kenning"):
        value = header[name]
        if not isinstance(value, str) or not value or len(value) > MAX_STRING:
            raise PackError(
                f"{path}: header field {name!r} must be a non-empty string of at most {MAX_STRING}"
            )
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise PackError(f"{path}: header field {name!r} holds control characters")
    for name, low, high in (
        ("dim", 1, MAX_DIM),
        ("count", 0, MAX_COUNT),
        ("key_bytes", KEY_BYTES, KEY_BYTES),
    ):
        value = header[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise PackError(
                f"{path}: header field {name!r} must be an integer from {low} to {high}, not {value!r}"
            )
    if header["dtype"] != "float16-le":
        raise PackError(f"{path}: header field 'dtype' must be 'float16-le', not {header['dtype']!r}")
    if header["model_identity"] != model_identity(header["model_id"], header["dim"]):
        raise PackError(f"{path}: header field 'model_identity' disagrees with 'model_id' and 'dim'")
    expected = _expected_size(header_len, header["count"], header["dim"])
    if size < expected:
        raise PackError(f"{path} is truncated: {size:,} bytes, its header announces {expected:,}")
    if size > expected:
        raise PackError(f"{path} has {size - expected:,} bytes more than its header announces")
    return header, header_len


def _records(
    fh: IO[bytes], header: dict[str, Any], header_len: int, path: Path
) -> Iterator[tuple[bytes, bytes]]:
    """Every (key, vector bytes), checked (order, finiteness) and hashed as it is read.

    Each byte handed out is hashed exactly once, on the read that produced it; the generator
    raises PackError at the end if the file does not hash to its trailer, so a consumer inside a
    transaction rolls back everything it did with the rows.
    """
    count, dim = int(header["count"]), int(header["dim"])
    width = dim * 2
    digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
    fh.seek(0)
    digest.update(_read_exact(fh, len(MAGIC) + 4 + header_len, path, "header"))
    keys = _read_exact(fh, count * KEY_BYTES, path, "keys")  # 16 MB for a million vectors
    digest.update(keys)
    previous = b""
    for i in range(count):
        key = keys[i * KEY_BYTES : (i + 1) * KEY_BYTES]
        if key <= previous:
            raise PackError(f"{path}: keys are not strictly ascending at record {i:,}")
        previous = key
    done = 0
    while done < count:
        n = min(BLOCK, count - done)
        block = _read_exact(fh, n * width, path, "vectors")
        digest.update(block)
        if not np.isfinite(np.frombuffer(block, dtype="<f2")).all():
            raise PackError(f"{path}: a vector near record {done:,} is not finite")
        for i in range(n):
            j = done + i
            yield keys[j * KEY_BYTES : (j + 1) * KEY_BYTES], block[i * width : (i + 1) * width]
        done += n
    trailer = _read_exact(fh, DIGEST_BYTES, path, "checksum")
    if digest.digest() != trailer:
        raise PackError(f"{path}: checksum mismatch (the file is corrupt or was changed)")


def verify_pack(path: Path) -> PackInfo:
    """Check a pack completely (header, sizes, order, finiteness, checksum); change nothing."""
    path = Path(path).expanduser()
    fh, size = _open(path)
    with fh:
        header, header_len = _parse_header(fh, size, path)
        for _ in _records(fh, header, header_len, path):
            pass
        fh.seek(size - DIGEST_BYTES)
        checksum = fh.read(DIGEST_BYTES).hex()
    return PackInfo(
        path=str(path),
        model_id=header["model_id"],
        dim=header["dim"],
        count=header["count"],
        identity=header["model_identity"],
        bytes=size,
        checksum=checksum,
    )


def import_pack(path: Path, cache: ModelCache) -> ImportReport:
    """Verify the pack, then add its vectors to ``cache`` (whose model it must be for).

    All or nothing: the pack is checked completely first, then inserted in one transaction
    that re-reads and re-hashes it and rolls back on any difference.
    """
    path = Path(path).expanduser()
    info = verify_pack(path)
    if info.identity != cache.identity:
        raise PackError(
            f"{path} was made with model {info.model_id} ({info.dim} dimensions); this kenning uses"
            f" {cache.identity.rpartition('#')[0]} ({cache.dim} dimensions): nothing imported"
        )
    if cache.broken is not None:
        raise PackError(f"the shared embedding cache is not usable: {cache.broken}")
    fh, size = _open(path)
    with fh:
        header, header_len = _parse_header(fh, size, path)
        before = cache.count()
        try:
            cache.put_rows(_records(fh, header, header_len, path), ORIGIN_PACK, int(time.time()))
        except sqlite3.Error as exc:
            raise PackError(f"cannot write the shared embedding cache {cache.path}: {exc}") from exc
        after = cache.count()
    cache.cache.enforce_cap()
    added = after - before
    return ImportReport(info=info, added=added, already=info.count - added)
