"""The usearch HNSW index over chunk vectors, saved atomically and never loaded unchecked.

usearch writes in place with no checksum, and a file with flipped bytes loads fine and then
segfaults on the first search. So every save goes to a temp file that is fsynced and renamed, its
size and blake2b hash are recorded in SQLite, and a load first checks size, hash and header; any
mismatch means "rebuild from the float16 vectors in SQLite", never "try it and see".
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# onnxruntime must be loaded before usearch: the other order segfaults inside onnxruntime's
# import (usearch 2.26.6 + onnxruntime 1.32.0, seen here). Importing it first costs ~0.2 s.
import onnxruntime  # noqa: F401  (import order is the point)
from usearch.index import Index

log = logging.getLogger(__name__)

# Search breadth: ef=128 costs ~0.2 ms more than the default 64 and buys back most i8 recall.
EXPANSION_SEARCH = 128
# Below this many candidates an exact scan of the stored float vectors is as fast as the graph.
EXACT_SEARCH_LIMIT = 5000


class VectorFileInvalid(Exception):
    """The saved HNSW file does not match what SQLite recorded; rebuild it."""


@dataclass(frozen=True, slots=True)
class VectorFileInfo:
    name: str
    size: int
    blake2b: str
    dim: int
    count: int


def file_hash(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


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

    @staticmethod
    def _new(dim: int) -> Index:
        return Index(ndim=dim, metric="cos", dtype="i8", expansion_search=EXPANSION_SEARCH)

    def __len__(self) -> int:
        return len(self._index)

    def keys(self) -> np.ndarray:
        return np.asarray(self._index.keys, dtype=np.uint64)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids) == 0:
            return
        with self._write_lock:
            ids = np.asarray(ids, dtype=np.uint64)
            present = np.array([self._index.contains(int(k)) for k in ids], dtype=bool)
            if present.any():
                self._index.remove(ids[present])
            self._index.add(ids, np.asarray(vectors, dtype=np.float32), threads=1)
            self.dirty = True
            self.version += 1

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
            return count

    def search(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``count`` (ids, cosine similarities) by the int8 graph."""
        if len(self._index) == 0 or count <= 0:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32)
        matches = self._index.search(np.asarray(query, dtype=np.float32), count)
        keys = np.asarray(matches.keys, dtype=np.uint64)
        sims = 1.0 - np.asarray(matches.distances, dtype=np.float32)
        return keys, sims

    # -- persistence -------------------------------------------------------------------------

    def save(self, directory: Path, generation: int) -> VectorFileInfo:
        """Write ``vectors.<generation>.usearch`` atomically and describe it for SQLite."""
        name = f"vectors.{generation}.usearch"
        final = directory / name
        tmp = directory / f"{name}.tmp"
        with self._write_lock:
            was_dirty, self.dirty = self.dirty, False  # a concurrent add marks it again
            try:
                self._index.save(str(tmp))
            except BaseException as exc:
                self.dirty = self.dirty or was_dirty
                if isinstance(exc, RuntimeError):
                    # usearch says only "Failed to serialize into stream" (a full disk, say):
                    # drop the partial file and raise what callers handle, with where and room.
                    tmp.unlink(missing_ok=True)
                    raise OSError(
                        f"cannot write {name}: {exc} ({_free(directory)} free in {directory})"
                    ) from exc
                raise
            expected = self._index.serialized_length
            count = len(self._index)
        try:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            size = tmp.stat().st_size
            if size != expected:
                tmp.unlink(missing_ok=True)
                raise OSError(f"short write of {name}: {size} of {expected} bytes")
            digest = file_hash(tmp)
            os.replace(tmp, final)
            fsync_dir(directory)
        except BaseException:
            self.dirty = self.dirty or was_dirty
            raise
        return VectorFileInfo(name=name, size=size, blake2b=digest, dim=self.dim, count=count)

    @classmethod
    def load(cls, directory: Path, info: VectorFileInfo) -> VectorIndex:
        """Load a saved index after checking it against what SQLite recorded."""
        path = directory / info.name
        if not path.is_file():
            raise VectorFileInvalid(f"{info.name} is missing")
        size = path.stat().st_size
        if size != info.size:
            raise VectorFileInvalid(f"{info.name} is {size} bytes, expected {info.size}")
        digest = file_hash(path)
        if digest != info.blake2b:
            raise VectorFileInvalid(f"{info.name} content hash differs from the recorded one")
        try:
            header = Index.metadata(str(path))
        except Exception as exc:
            raise VectorFileInvalid(f"{info.name} header unreadable: {exc}") from exc
        if header is None or int(header.get("dimensions", -1)) != info.dim:
            raise VectorFileInvalid(f"{info.name} has a different dimension than the model")
        index = cls._new(info.dim)
        try:
            index.load(str(path))
        except Exception as exc:
            raise VectorFileInvalid(f"{info.name} failed to load: {exc}") from exc
        return cls(info.dim, index)


def _free(directory: Path) -> str:
    try:
        return f"{shutil.disk_usage(directory).free / 2**20:.1f} MiB"
    except OSError:
        return "unknown space"


def clean_stale_files(directory: Path, keep: str | None) -> list[str]:
    """Remove temp files and vector files of other generations left by a crash."""
    removed: list[str] = []
    for p in directory.glob("vectors.*"):
        if p.name != keep:
            p.unlink(missing_ok=True)
            removed.append(p.name)
    return removed
