"""The usearch HNSW index over chunk vectors, saved atomically and never loaded unchecked.

usearch writes in place with no checksum, and a file with flipped bytes loads fine and then
segfaults on the first search. So every save goes to a temp file that is fsynced and renamed, its
size and MAC (HMAC-SHA-256, ``trust.data_mac``) are recorded in SQLite, and a load reads the
file once into memory, checks size, MAC and header on those bytes and hands usearch the same
bytes; any mismatch means "rebuild from the float16 vectors in SQLite", never "try it and see".
The MAC's key lives outside the workspace, so a graph a repository shipped (with a database that
"records" it) is rejected too. Files are named by kenning only (``vectors.<generation>.usearch``)
and opened without following symlinks.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kenning.store.trust import data_mac, data_mac_matches

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger(__name__)

# Search breadth: ef=128 costs ~0.2 ms more than the default 64 and buys back most i8 recall.
EXPANSION_SEARCH = 128
# Up to this many candidates a filter's chunks are scanned exactly (their stored vectors, kept
# for the next query with the same filter) instead of over-fetching the graph by the filter's
# rarity: at a million chunks a 1 % filter (9,829 chunks) fetched ~24,000 graph neighbours, hybrid
# p50 / p95 123 / 150 ms; scanned, 13.8 / 28.5 ms (the limit was 5,000). A graph of up to this
# many vectors is scanned whole too (VectorIndex.search).
EXACT_SEARCH_LIMIT = 20_000
# The centroid (VectorIndex.centroid) is the mean of at most this many vectors, evenly spaced
# over the keys: its error is a small fraction of its length, and 10,000 int8 reads and a mean
# take ~15 ms (measured on a 100,000-vector graph).
CENTROID_SAMPLE = 10_000
# ... and is worked out again once vectors added and removed since exceed this share of the index.
CENTROID_CHURN = 0.02


def usearch_index() -> type[Index]:
    """usearch's ``Index``, imported on first use: with onnxruntime and what usearch imports
    (urllib, http, tqdm) ~0.13 s that commands needing no graph (an unchanged ``kenning index``,
    lexical search, symbols) do not pay."""
    # onnxruntime must be loaded before usearch: the other order segfaults inside onnxruntime's
    # import (usearch 2.26.6 + onnxruntime 1.32.0, seen here).
    import onnxruntime  # noqa: F401  (import order is the point)
    from usearch.index import Index

    return Index


class VectorFileInvalid(Exception):
    """The saved HNSW file does not match what SQLite recorded; rebuild it."""


_NAME = re.compile(r"vectors\.([1-9][0-9]{0,17})\.usearch")


@dataclass(frozen=True, slots=True)
class VectorFileInfo:
    name: str
    size: int
    mac: str
    dim: int
    count: int


def vector_file_name(generation: int) -> str:
    return f"vectors.{generation}.usearch"


def valid_vector_file_name(name: str) -> bool:
    """Only names kenning itself gives (``vectors.<n>.usearch``): no directories, no ``..``."""
    return _NAME.fullmatch(name) is not None


def read_plain_file(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file (a symlink is refused, not followed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def file_mac(path: Path, key: bytes) -> str:
    return data_mac(key, read_plain_file(path))


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class VectorIndex:
    """An int8 cosine HNSW keyed by chunk id. One writer thread mutates; searches may overlap."""

    def __init__(self, dim: int, index: Index | None = None) -> None:
        self.dim = dim
        self._index = index if index is not None else self._new(dim)
        self._write_lock = threading.Lock()
        # Changed since it was loaded or last saved: an unchanged graph is not written again
        # (at 100k chunks a save rewrites, fsyncs and hashes 51 MB).
        self.dirty = False
        self.version = 0  # bumped by every add and remove: lets readers cache what they derive
        self._churn = 0  # vectors added and removed, ever: when the centroid is worked out again
        self._centroid: tuple[int, np.ndarray] | None = None  # (churn then, the mean)

    @staticmethod
    def _new(dim: int) -> Index:
        return usearch_index()(ndim=dim, metric="cos", dtype="i8", expansion_search=EXPANSION_SEARCH)

    def __len__(self) -> int:
        return len(self._index)

    def keys(self) -> np.ndarray:
        return np.asarray(self._index.keys, dtype=np.uint64)

    def add(self, ids: np.ndarray, vectors: np.ndarray, *, threads: int = 1) -> None:
        """Insert (or replace) vectors; ``threads`` > 1 only where no query waits on the cores."""
        if len(ids) == 0:
            return
        with self._write_lock:
            ids = np.asarray(ids, dtype=np.uint64)
            present = np.array([self._index.contains(int(k)) for k in ids], dtype=bool)
            if present.any():
                self._index.remove(ids[present])
            self._index.add(ids, np.asarray(vectors, dtype=np.float32), threads=max(1, threads))
            self.dirty = True
            self.version += 1
            self._churn += len(ids)

    def remove(self, ids: np.ndarray | list[int]) -> int:
        if len(ids) == 0:
            return 0
        with self._write_lock:
            keys = np.asarray(ids, dtype=np.uint64)
            removed = self._index.remove(keys)
            count = int(np.sum(removed)) if not isinstance(removed, int | bool) else int(removed)
            if count:
                self.dirty = True
                self.version += 1
                self._churn += count
            return count

    def centroid(self) -> np.ndarray | None:
        """The mean of the stored vectors (each unit length, as the graph keeps them), or None
        when there are none; of ``CENTROID_SAMPLE`` evenly spaced ones in a larger index. Kept
        until vectors added and removed since exceed ``CENTROID_CHURN`` of the index: a save
        moves it by nothing a ranking can see, a branch switch or the first indexing by much."""
        cached = self._centroid
        if cached is not None and self._churn - cached[0] <= CENTROID_CHURN * len(self._index):
            return cached[1]
        with self._write_lock:  # no removal between reading the keys and their vectors
            churn = self._churn
            keys = self.keys()
            if len(keys) > CENTROID_SAMPLE:
                keys = keys[np.linspace(0, len(keys) - 1, CENTROID_SAMPLE).astype(np.int64)]
            got = self._index.get(keys, dtype="f32") if len(keys) else None
        # One array per key (None for a key the graph does not hold), each the int8 codes / 127.
        found = [np.asarray(v, dtype=np.float32) for v in (got if got is not None else ()) if v is not None]
        if not found:
            return None
        mean: np.ndarray = np.mean(np.stack(found), axis=0).astype(np.float32)
        self._centroid = (churn, mean)
        return mean

    def search(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``count`` (ids, cosine similarities) by the int8 graph: walked, or scanned whole
        when it holds at most ``EXACT_SEARCH_LIMIT`` vectors."""
        if len(self._index) == 0 or count <= 0:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32)
        # A walk can miss the best match: a thousand near-identical one-liners and one file
        # unlike them (added first) left that file out of a 1,001-vector graph's top 80 at ef 128.
        # Scanning 20,000 int8 vectors takes ~0.9 ms (a walk ~0.3 ms), against ~10 ms to embed
        # the query, so small graphs are scanned.
        exact = len(self._index) <= EXACT_SEARCH_LIMIT
        matches = self._index.search(np.asarray(query, dtype=np.float32), count, exact=exact)
        keys = np.asarray(matches.keys, dtype=np.uint64)
        sims = 1.0 - np.asarray(matches.distances, dtype=np.float32)
        return keys, sims

    # -- persistence -------------------------------------------------------------------------

    def save(self, directory: Path, generation: int, key: bytes) -> VectorFileInfo:
        """Write ``vectors.<generation>.usearch`` atomically and describe it for SQLite."""
        name = vector_file_name(generation)
        final = directory / name
        tmp = directory / f"{name}.tmp"
        with self._write_lock:
            was_dirty, self.dirty = self.dirty, False  # a concurrent add marks it again
            try:
                data = self._index.save()
            except BaseException as exc:
                self.dirty = self.dirty or was_dirty
                if isinstance(exc, RuntimeError):  # usearch says little more than "failed"
                    raise OSError(f"cannot serialise {name}: {exc}") from exc
                raise
            count = len(self._index)
        if data is None:
            self.dirty = self.dirty or was_dirty
            raise OSError(f"cannot serialise {name}: usearch returned nothing")
        try:
            # Whatever lies at the temp name (a link git wrote, a crash's leftover) goes first;
            # O_EXCL | O_NOFOLLOW then guarantee the bytes land in a new file of our own.
            tmp.unlink(missing_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise OSError(
                    f"cannot write {name}: {exc.strerror or exc} ({_free(directory)} free in {directory})"
                ) from exc
            finally:
                os.close(fd)
            os.replace(tmp, final)
            fsync_dir(directory)
        except BaseException:
            self.dirty = self.dirty or was_dirty
            raise
        return VectorFileInfo(name=name, size=len(data), mac=data_mac(key, data), dim=self.dim, count=count)

    @classmethod
    def load(cls, directory: Path, info: VectorFileInfo, key: bytes) -> VectorIndex:
        """Load a saved index after checking it against what SQLite recorded."""
        if not valid_vector_file_name(info.name):
            raise VectorFileInvalid(f"{info.name!r} is not a name kenning gives its graph files")
        path = directory / info.name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise VectorFileInvalid(f"{info.name} is missing") from None
        if not stat.S_ISREG(st.st_mode):
            raise VectorFileInvalid(f"{info.name} is not a regular file")
        if st.st_size != info.size:
            raise VectorFileInvalid(f"{info.name} is {st.st_size} bytes, expected {info.size}")
        try:
            data = read_plain_file(path)
        except OSError as exc:
            raise VectorFileInvalid(f"{info.name} cannot be read: {exc}") from exc
        if len(data) != info.size:
            raise VectorFileInvalid(f"{info.name} is {len(data)} bytes, expected {info.size}")
        if not data_mac_matches(key, data, info.mac):
            raise VectorFileInvalid(f"{info.name} content does not match its recorded MAC")
        try:
            header = usearch_index().metadata(data)
        except Exception as exc:
            raise VectorFileInvalid(f"{info.name} header unreadable: {exc}") from exc
        if header is None or int(header.get("dimensions", -1)) != info.dim:
            raise VectorFileInvalid(f"{info.name} has a different dimension than the model")
        index = cls._new(info.dim)
        try:
            index.load(data)
        except Exception as exc:
            raise VectorFileInvalid(f"{info.name} failed to load: {exc}") from exc
        return cls(info.dim, index)


def _free(directory: Path) -> str:
    try:
        return f"{shutil.disk_usage(directory).free / 2**20:.1f} MiB"
    except OSError:
        return "unknown space"


def clean_stale_files(directory: Path, keep: str | None) -> list[str]:
    """Remove temp files and vector files of other generations left by a crash.

    Only names kenning gives its graph files are touched, and only in the store directory
    (whose marker says it is kenning's); a symlink there is removed, never followed.
    """
    removed: list[str] = []
    for p in directory.glob("vectors.*"):
        base = p.name[: -len(".tmp")] if p.name.endswith(".tmp") else p.name
        if p.name != keep and valid_vector_file_name(base):
            p.unlink(missing_ok=True)
            removed.append(p.name)
    return removed
