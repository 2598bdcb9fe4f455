"""One workspace root's index: opening and repairing the store, and the model it is bound to.

The engine is what the CLI and the language server hold. It owns the store directory (SQLite,
HNSW file, writer lock) and the encoder, and hands them to ``indexer`` (writing) and ``search``
(reading). It never imports pygls.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kenning.config import Config
from kenning.store.db import DB_FILENAME, EMBEDDED_THROUGH, Database, StoreCorrupt
from kenning.store.lock import LockHeld, WriterLock
from kenning.store.vectors import (
    VectorFileInfo,
    VectorFileInvalid,
    VectorIndex,
    clean_stale_files,
)

if TYPE_CHECKING:
    from kenning.embedding import Encoder
    from kenning.embedding.shared import ModelCache

log = logging.getLogger(__name__)

# Rebuild the graph when removals since it was built exceed this share of live vectors:
# usearch tombstones never give their slots back and degrade recall.
CHURN_REBUILD_RATIO = 0.25

EncoderFactory = Callable[[Config], "Encoder"]


def default_encoder_factory(config: Config) -> Encoder:
    from kenning.embedding import Encoder

    return Encoder.load(config.model, variant=config.model_variant, threads=config.embed_threads)


@dataclass(slots=True)
class Status:
    state: str  # "scanning" | "embedding" | "ready" | "error"
    files: int
    chunks: int
    embedded: int
    pending: int
    skipped: int
    symbols: int
    message: str | None = None
    # Where the store's vectors came from since its model was bound (indexer.ORIGIN_KEYS, short
    # names: computed, store, shared_cache, pack), and the shared cache: enabled, bytes, max_bytes.
    origin: dict[str, int] | None = None
    shared_cache: dict[str, object] | None = None


class Engine:
    """The index of one workspace root. Open it, index it, search it, close it."""

    def __init__(
        self,
        root: Path,
        config: Config | None = None,
        *,
        encoder_factory: EncoderFactory = default_encoder_factory,
        read_only: bool | None = None,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.config = config or Config()
        self.store_dir = Path(os.path.realpath(self.config.store_dir(self.root)))
        self._encoder_factory = encoder_factory
        self._want_read_only = read_only
        self._lock = WriterLock(self.store_dir)
        self.db: Database | None = None
        self.vectors: VectorIndex | None = None
        self.vectors_ready = threading.Event()
        # The graph holds exactly the embedded chunks: set by a reconcile or rebuild, kept true
        # by the indexer mirroring each change, cleared when an indexing step fails midway.
        self.vectors_in_step = False
        self.vectors_saved_at = time.monotonic()  # when the graph file last matched memory
        self._encoder: Encoder | None = None
        self._encoder_lock = threading.Lock()
        self.model_error: str | None = None
        self.read_only = False
        self.read_only_reason: str | None = None
        self.state = "scanning"
        self.state_message: str | None = None
        self.churn = 0
        self._generation = 0  # bumped whenever files, chunks or symbols change; caches key on it
        self._gen_lock = threading.Lock()
        self._data_version: int | None = None  # read-only: the writer's commits, as last seen
        self._version_conn: sqlite3.Connection | None = None
        self._loaded_vectors_file: str | None = None
        # The user-level embedding cache for this engine's model (opened by the indexer).
        self.shared_cache: ModelCache | None = None
        self.shared_cache_error: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def open(self) -> Engine:
        if self.db is not None:
            return self
        self._make_store_dir()
        if self._want_read_only is not True:
            try:
                self._lock.acquire()
            except LockHeld as exc:
                if self._want_read_only is False:
                    raise
                self.read_only = True
                self.read_only_reason = str(exc)
                log.warning("%s; opening it read-only", exc)
        else:
            self.read_only = True
            self.read_only_reason = "opened read-only"
        self.db = self._open_db()
        if not self.read_only:
            self._load_vectors_if_valid()
        else:
            self._load_vectors_read_only()
        return self

    def close(self) -> None:
        if self.db is not None and not self.read_only:
            try:
                self.save_vectors()
            except OSError as exc:
                log.error("could not save the vector index at close: %s", exc)
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._version_conn is not None:
            self._version_conn.close()
            self._version_conn = None
        if self.shared_cache is not None:
            self.shared_cache.flush()
            self.shared_cache.cache.close()
            self.shared_cache = None
        self._lock.release()

    def __enter__(self) -> Engine:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _make_store_dir(self) -> None:
        self.store_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):  # a store on a filesystem without modes still works
            os.chmod(self.store_dir, 0o700)
        ignore = self.store_dir / ".gitignore"
        if not ignore.exists():
            try:
                ignore.write_text("# kenning's index: never commit it\n*\n")
            except OSError as exc:
                log.warning("cannot write %s: %s", ignore, exc)

    def _open_db(self) -> Database:
        path = self.store_dir / DB_FILENAME
        if self.read_only:
            if not path.exists():
                raise StoreCorrupt(f"no index at {self.store_dir} yet and it is locked by a writer")
            return Database(path, read_only=True)
        try:
            return Database(path)
        except StoreCorrupt as exc:
            aside = path.with_name(f"{DB_FILENAME}.corrupt-{int(time.time())}")
            log.error("%s: moving it aside to %s and rebuilding the index", exc, aside.name)
            for suffix in ("", "-wal", "-shm"):
                p = Path(str(path) + suffix)
                if p.exists():
                    os.replace(p, Path(str(aside) + suffix))
            for p in self.store_dir.glob("vectors.*"):
                p.unlink(missing_ok=True)
            return Database(path)

    def _recorded_vector_file(self) -> VectorFileInfo | None:
        assert self.db is not None
        get = self.db.get_meta
        name = get("vectors_file")
        if not name:
            return None
        try:
            return VectorFileInfo(
                name=name,
                size=int(get("vectors_size") or -1),
                blake2b=get("vectors_hash") or "",
                dim=int(get("model_dim") or -1),
                count=int(get("vectors_count") or 0),
            )
        except ValueError:
            return None

    def _load_vectors_if_valid(self) -> None:
        """Load the saved graph if it is exactly what SQLite recorded; else leave it to rebuild."""
        info = self._recorded_vector_file()
        clean_stale_files(self.store_dir, info.name if info else None)
        if info is None:
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info)
            self.churn = int(self.db.get_meta("vectors_churn") or 0) if self.db else 0
        except VectorFileInvalid as exc:
            log.warning("vector index rejected (%s); it will be rebuilt from stored vectors", exc)
            self.vectors = None

    def _load_vectors_read_only(self) -> None:
        info = self._recorded_vector_file()
        if info is None:
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info)
            self._loaded_vectors_file = info.name
            self.vectors_ready.set()
        except VectorFileInvalid as exc:
            log.warning("vector index unusable read-only (%s); dense search is off", exc)

    # -- the model ---------------------------------------------------------------------------

    def encoder(self) -> Encoder | None:
        """The encoder, loaded on first use; None (with ``model_error`` set) if it cannot load."""
        if self._encoder is not None or self.model_error is not None:
            return self._encoder
        with self._encoder_lock:
            if self._encoder is None and self.model_error is None:
                try:
                    self._encoder = self._encoder_factory(self.config)
                except Exception as exc:
                    self.model_error = f"the embedding model could not be loaded: {exc}"
                    log.error("%s; lexical search still works", self.model_error)
        return self._encoder

    def model_matches(self) -> bool:
        """Whether the store's vectors were made by the loaded encoder (dense search is valid)."""
        enc = self._encoder
        return enc is not None and self.db is not None and self.db.get_meta("model_id") == enc.model_id

    def bind_model(self) -> Encoder | None:
        """Load the encoder and make the store's vectors its own, clearing another model's."""
        enc = self.encoder()
        if enc is None or self.db is None or self.read_only:
            return enc
        stored = self.db.get_meta("model_id")
        if stored == enc.model_id:
            return enc
        if stored is not None:
            log.warning(
                "the index was embedded with %s, the model now is %s: re-embedding",
                stored,
                enc.model_id,
            )
        with self.db.transaction() as conn:
            self.db.clear_embeddings(conn)
            self.db.set_meta(conn, "model_id", enc.model_id)
            self.db.set_meta(conn, "model_dim", str(enc.dim))
            for key in ("vectors_file", "vectors_size", "vectors_hash", "vectors_count", EMBEDDED_THROUGH):
                conn.execute("DELETE FROM meta WHERE key=?", (key,))
            conn.execute("DELETE FROM meta WHERE substr(key, 1, 7) = 'origin_'")  # origin counters
        self.vectors = VectorIndex(enc.dim)
        self.vectors_in_step = False
        self.churn = 0
        clean_stale_files(self.store_dir, None)
        return enc

    # -- the vector index (writer thread) ----------------------------------------------------

    def prepare_vectors(self, should_stop: Callable[[], bool] | None = None) -> None:
        """Make the in-memory graph hold exactly the embedded chunks (reconcile or rebuild)."""
        assert self.db is not None
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
        live = self.db.embedded_chunk_ids()
        keys = self.vectors.keys()
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
        if self.churn > CHURN_REBUILD_RATIO * max(len(self.vectors), 1000):
            self._rebuild_vectors(dim, f"{self.churn} removals since it was built", should_stop)
            return
        self.vectors_in_step = True
        self.vectors_ready.set()
        if len(extra) or len(missing):
            self.save_vectors()

    def _rebuild_vectors(self, dim: int, reason: str, should_stop: Callable[[], bool] | None) -> None:
        assert self.db is not None
        started = time.monotonic()
        fresh = VectorIndex(dim)
        for ids, vecs in self.db.iter_vectors():
            if should_stop is not None and should_stop():
                return
            fresh.add(ids, vecs)
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
        info_before = self._recorded_vector_file()
        if (
            not self.vectors.dirty
            and info_before is not None
            and self.db.get_meta("vectors_churn") == str(self.churn)
        ):
            return  # the recorded file holds exactly this graph: idle shutdowns write nothing
        generation = int(self.db.get_meta("vectors_generation") or 0) + 1
        info = self.vectors.save(self.store_dir, generation)
        try:
            with self.db.transaction() as conn:
                set_meta = self.db.set_meta
                set_meta(conn, "vectors_generation", str(generation))
                set_meta(conn, "vectors_file", info.name)
                set_meta(conn, "vectors_size", str(info.size))
                set_meta(conn, "vectors_hash", info.blake2b)
                set_meta(conn, "vectors_count", str(info.count))
                set_meta(conn, "vectors_churn", str(self.churn))
        except BaseException:
            self.vectors.dirty = True  # the file is not recorded: it must be written again
            raise
        self.vectors_saved_at = time.monotonic()
        if info_before is not None and info_before.name != info.name:
            (self.store_dir / info_before.name).unlink(missing_ok=True)

    def prune_embedding_cache(self) -> int:
        """Drop cached vectors no chunk uses once they outnumber the live ones.

        The cache is what makes a branch switch and back cheap, so it is kept generously:
        pruned only when unused vectors exceed the live chunks (and a floor of 10,000).
        """
        if self.db is None or self.read_only:
            return 0
        conn = self.db.reader()
        cached = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        live = conn.execute("SELECT count(DISTINCT embed_key) FROM chunks").fetchone()[0]
        if cached - live <= max(live, 10_000):
            return 0
        with self.db.transaction() as wconn:
            removed = self.db.prune_embeddings(wconn)
        log.info("pruned %d cached vectors no chunk uses any more", removed)
        return removed

    # -- state -------------------------------------------------------------------------------

    def bump_generation(self) -> None:
        with self._gen_lock:
            self._generation += 1

    @property
    def generation(self) -> int:
        """Changes whenever the indexed files change; a read-only engine follows the writer."""
        if self.read_only and self.db is not None:
            self._follow_writer()
        return self._generation

    def _follow_writer(self) -> None:
        """Notice another process's commits (PRAGMA data_version) and pick up its saved graph."""
        with self._gen_lock:
            if self._version_conn is None:
                self._version_conn = sqlite3.connect(
                    f"file:{self.store_dir / DB_FILENAME}?mode=ro",
                    uri=True,
                    check_same_thread=False,
                    timeout=10.0,
                )
            try:
                version = int(self._version_conn.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:
                return
            if version == self._data_version:
                return
            self._data_version = version
            self._generation += 1
        info = self._recorded_vector_file()
        if info is not None and info.name != self._loaded_vectors_file:
            try:
                self.vectors = VectorIndex.load(self.store_dir, info)
                self._loaded_vectors_file = info.name
                self.vectors_ready.set()
            except VectorFileInvalid as exc:
                log.info("the writer's vector index is not usable yet (%s)", exc)

    def status(self) -> Status:
        assert self.db is not None
        c = self.db.counts()
        return Status(
            state=self.state,
            files=c["files"],
            chunks=c["chunks"],
            embedded=c["embedded"] if self.model_matches() or self._encoder is None else 0,
            pending=c["pending"],
            skipped=c["skipped"],
            symbols=c["symbols"],
            message=self.state_message or self.model_error,
            origin=self.origin_counts(),
            shared_cache=self.shared_cache_info(),
        )

    def origin_counts(self) -> dict[str, int]:
        """Where the store's vectors came from (see ``Status.origin``)."""
        assert self.db is not None
        raw = self.db.meta_with_prefix("origin_")
        out = {}
        for name in ("computed", "store", "shared_cache", "pack"):
            try:
                out[name] = int(raw.get(f"origin_{name}", "0"))
            except ValueError:
                out[name] = 0
        return out

    def shared_cache_info(self) -> dict[str, object]:
        """The shared cache as a status shows it: on or off, its size on disk and its cap."""
        from kenning.embedding.cache import cache_dir
        from kenning.embedding.shared import FILENAME, default_max_bytes, file_bytes

        broken = self.shared_cache is not None and self.shared_cache.broken is not None
        enabled = self.config.shared_cache_on() and self.shared_cache_error is None and not broken
        path = self.shared_cache.path if self.shared_cache is not None else cache_dir() / FILENAME
        cap = self.config.shared_cache_max
        return {
            "enabled": enabled,
            "bytes": file_bytes(path),
            "max_bytes": cap if cap is not None else default_max_bytes(),
        }

    def dense_available(self) -> bool:
        return (
            self.vectors is not None
            and self.vectors_ready.is_set()
            and self.encoder() is not None
            and self.model_matches()
        )
