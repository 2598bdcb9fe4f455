"""The engine's HNSW graph: loading the saved file, keeping it in step with SQLite, rebuilding
and saving it (a mixin of ``Engine``; these run on the writer thread, except the read-only load).

SQLite is the truth: the graph is a cache of the embedded chunks' vectors, trusted only when it is
exactly the file SQLite recorded (name from the generation number, size, keyed MAC), and repaired
or rebuilt from the stored vectors otherwise.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kenning.store.db import Database
from kenning.store.queries import ids_digest
from kenning.store.vectors import (
    VectorFileInfo,
    VectorFileInvalid,
    VectorIndex,
    clean_stale_files,
    valid_vector_file_name,
    vector_file_name,
)

log = logging.getLogger(__name__)

# Meta keys describing the saved graph file (all cleared when the model changes).
VECTOR_META = ("vectors_file", "vectors_size", "vectors_mac", "vectors_hash", "vectors_count")

# Rebuild the graph when removals since it was built exceed this share of live vectors:
# usearch tombstones never give their slots back and degrade recall.
CHURN_REBUILD_RATIO = 0.25


def recorded_vector_file(db: Database) -> VectorFileInfo | None:
    """The graph file SQLite records; its name is derived from the generation number, never
    taken from the database as a path."""
    generation = db.get_meta_int("vectors_generation", 0)
    name = vector_file_name(generation)
    if generation <= 0 or db.get_meta("vectors_file") != name or not valid_vector_file_name(name):
        return None
    return VectorFileInfo(
        name=name,
        size=db.get_meta_int("vectors_size", -1),
        mac=db.get_meta("vectors_mac") or "",
        dim=db.get_meta_int("model_dim", -1),
        count=db.get_meta_int("vectors_count", 0),
    )


class GraphLoad:
    """The saved graph being read, checked and loaded on a thread of its own.

    Reading the file, its keyed MAC and usearch's load release the GIL: started when the
    store opens, the ~1.9 s they take at a million chunks run beside the scan and the model's
    load instead of before them. The writer thread adopts the result (``result``) before it
    first touches the graph; nothing else sees it half-loaded.
    """

    def __init__(self, directory: Path, info: VectorFileInfo, key: bytes) -> None:
        self.info = info
        self._directory = directory
        self._key = key
        self._index: VectorIndex | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._load, name="kenning-graph-load", daemon=True)
        self.thread.start()

    def _load(self) -> None:
        try:
            self._index = VectorIndex.load(self._directory, self.info, self._key)
        except BaseException as exc:  # handed to the writer thread, which decides
            self._error = exc

    def result(self) -> VectorIndex:
        """The loaded graph, once the thread is done; raises what the load raised."""
        self.thread.join()
        if self._error is not None:
            raise self._error
        assert self._index is not None
        return self._index


class VectorKeeping:
    """The graph half of ``Engine`` (its attributes are set in ``Engine.__init__``)."""

    db: Database | None
    store_dir: Path
    read_only: bool
    vectors: VectorIndex | None
    vectors_ready: threading.Event
    vectors_in_step: bool
    vectors_saved_at: float
    churn: int
    _key: bytes
    _loaded_vectors_file: str | None
    _vectors_deferred: bool
    _graph_load: GraphLoad | None

    def _load_vectors_if_valid(self, *, background: bool = False) -> None:
        """Load the saved graph if it is exactly what SQLite recorded; else leave it to rebuild.
        ``background``: on a thread (``GraphLoad``), adopted by ``adopt_loaded_vectors``."""
        assert self.db is not None
        info = recorded_vector_file(self.db)
        clean_stale_files(self.store_dir, info.name if info else None)
        if info is None:
            return
        if background:
            self._graph_load = GraphLoad(self.store_dir, info, self._key)
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info, self._key)
            self.churn = self.db.get_meta_int("vectors_churn", 0) if self.db else 0
        except VectorFileInvalid as exc:
            log.warning("vector index rejected (%s); it will be rebuilt from stored vectors", exc)
            self.vectors = None

    def adopt_loaded_vectors(self) -> None:
        """Make the saved graph ``self.vectors`` if a load of it is still owed: wait for the load
        started at open, or (a deferred open) load it now. Writer thread; a no-op otherwise."""
        if self._vectors_deferred:
            self._vectors_deferred = False
            self._load_vectors_if_valid()
            return
        pending, self._graph_load = self._graph_load, None
        if pending is None:
            return
        try:
            self.vectors = pending.result()
        except VectorFileInvalid as exc:
            log.warning("vector index rejected (%s); it will be rebuilt from stored vectors", exc)
            self.vectors = None
            return
        assert self.db is not None
        self.churn = self.db.get_meta_int("vectors_churn", 0)

    def drop_graph_load(self) -> None:
        """Forget a load still in flight (close, reopen, another model): wait for its thread,
        which only reads, and discard what it read."""
        pending, self._graph_load = self._graph_load, None
        if pending is not None:
            try:
                pending.result()
            except BaseException as exc:  # whatever it found no longer matters
                log.debug("a dropped graph load failed: %s", exc)

    def _load_vectors_read_only(self) -> None:
        assert self.db is not None
        info = recorded_vector_file(self.db)
        if info is None:
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info, self._key)
            self._loaded_vectors_file = info.name
            self.vectors_ready.set()
        except VectorFileInvalid as exc:
            log.warning("vector index unusable read-only (%s); dense search is off", exc)

    def prepare_vectors(self, should_stop: Callable[[], bool] | None = None) -> None:
        """Make the in-memory graph hold exactly the embedded chunks (reconcile or rebuild)."""
        assert self.db is not None
        self.adopt_loaded_vectors()
        dim_text = self.db.get_meta("model_dim")
        if dim_text is None:
            self.vectors_ready.set()
            return
        dim = int(dim_text)
        if self.vectors is None or self.vectors.dim != dim:
            self._rebuild_vectors(dim, "no valid saved index", should_stop)
            return
        if self.vectors_in_step:
            # The indexer has mirrored every change since the last reconcile; comparing the id
            # sets again would cost a join over all chunks per job (~0.3 s at 100k chunks).
            if self.churn > CHURN_REBUILD_RATIO * max(len(self.vectors), 1000):
                self._rebuild_vectors(dim, f"{self.churn} removals since it was built", should_stop)
                return
            self.vectors_ready.set()
            return
        keys = self.vectors.keys()
        if self.db.embedded_ids_digest() == ids_digest(keys):
            # The saved graph holds exactly the embedded chunks (the usual restart): an
            # aggregate over the ids instead of joining every chunk with the embedding cache
            # and diffing the sets (~0.5 s at 100k chunks, seconds at a million).
            self._trust_vectors(dim, should_stop)
            return
        live = self.db.embedded_chunk_ids()
        extra = np.setdiff1d(keys, live, assume_unique=False)
        missing = np.setdiff1d(live, keys, assume_unique=False)
        if len(extra) or len(missing):
            log.info(
                "vector index out of step with the database (%d extra, %d missing): repairing",
                len(extra),
                len(missing),
            )
        if len(extra):
            self.vectors.remove(extra)
            self.churn += len(extra)
        for start in range(0, len(missing), 4096):
            ids, vecs = self.db.vectors_for([int(k) for k in missing[start : start + 4096]])
            self.vectors.add(np.asarray(ids, dtype=np.uint64), vecs)
        self._trust_vectors(dim, should_stop)
        if len(extra) or len(missing):
            self.save_vectors()

    def _trust_vectors(self, dim: int, should_stop: Callable[[], bool] | None) -> None:
        """The graph holds the embedded chunks: use it, or rebuild it if removals wore it out."""
        assert self.vectors is not None
        if self.churn > CHURN_REBUILD_RATIO * max(len(self.vectors), 1000):
            self._rebuild_vectors(dim, f"{self.churn} removals since it was built", should_stop)
            return
        self.vectors_in_step = True
        self.vectors_ready.set()

    def _rebuild_vectors(self, dim: int, reason: str, should_stop: Callable[[], bool] | None) -> None:
        assert self.db is not None
        started = time.monotonic()
        fresh = VectorIndex(dim)
        # With no graph at all (first open, a rejected file) no dense query can run until this
        # ends, so it takes every core: at 1M chunks one thread took over 20 minutes on 2 cores.
        # A rebuild beside a live graph (churn) keeps one, leaving the other to the queries.
        threads = (os.cpu_count() or 1) if self.vectors is None else 1
        for ids, vecs in self.db.iter_vectors():
            if should_stop is not None and should_stop():
                return
            fresh.add(ids, vecs, threads=threads)
        fresh.dirty = True  # even empty, it replaces whatever file is recorded
        self.vectors = fresh
        self.vectors_in_step = True
        self.churn = 0
        self.vectors_ready.set()
        log.info(
            "rebuilt the vector index (%s): %d vectors in %.1fs",
            reason,
            len(fresh),
            time.monotonic() - started,
        )
        self.save_vectors()

    def save_vectors(self) -> None:
        """Persist the graph atomically and record it in SQLite; a no-op without vectors."""
        if self.db is None or self.read_only or self.vectors is None:
            return
        if not self.vectors_ready.is_set():
            return
        info_before = recorded_vector_file(self.db)
        if (
            not self.vectors.dirty
            and info_before is not None
            and self.db.get_meta("vectors_churn") == str(self.churn)
        ):
            return  # the recorded file holds exactly this graph: idle shutdowns write nothing
        generation = self.db.get_meta_int("vectors_generation", 0) + 1
        info = self.vectors.save(self.store_dir, generation, self._key)
        try:
            with self.db.transaction() as conn:
                set_meta = self.db.set_meta
                set_meta(conn, "vectors_generation", str(generation))
                set_meta(conn, "vectors_file", info.name)
                set_meta(conn, "vectors_size", str(info.size))
                set_meta(conn, "vectors_mac", info.mac)
                set_meta(conn, "vectors_count", str(info.count))
                set_meta(conn, "vectors_churn", str(self.churn))
        except BaseException:
            self.vectors.dirty = True  # the file is not recorded: it must be written again
            raise
        self.vectors_saved_at = time.monotonic()
        if info_before is not None and info_before.name != info.name:
            (self.store_dir / info_before.name).unlink(missing_ok=True)
