"""One workspace root's index: opening and repairing the store, and the model it is bound to.

The engine is what the CLI and the language server hold. It owns the store directory (SQLite,
HNSW file, writer lock) and the encoder, and hands them to ``indexer`` (writing) and ``search``
(reading). It never imports pygls.
"""

from __future__ import annotations

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
from kenning.embedding.backend import EmbeddingBackend, EmbeddingUnavailable, RemoteBackend
from kenning.state import IndexStates
from kenning.store.db import Database, StoreCorrupt, StoreUnavailable, authenticate, sqlite_uri
from kenning.store.location import StoreDir, open_store_dir, requested_store
from kenning.store.lock import LockHeld, WriterLock
from kenning.store.schema import DB_FILENAME, EMBEDDED_THROUGH
from kenning.store.trust import aside_name, database_token, foreign_file, read_marker, store_key
from kenning.store.vectors import (
    VectorFileInfo,
    VectorFileInvalid,
    VectorIndex,
    clean_stale_files,
    valid_vector_file_name,
    vector_file_name,
)
from kenning.types import IndexState

if TYPE_CHECKING:
    from kenning.embedding import Encoder
    from kenning.embedding.shared import ModelCache

log = logging.getLogger(__name__)

# The database and the files SQLite keeps beside it: moved aside together, never one alone.
DB_FAMILY = ("", "-wal", "-shm", "-journal")
# Meta keys describing the saved graph file (all cleared when the model changes).
VECTOR_META = ("vectors_file", "vectors_size", "vectors_mac", "vectors_hash", "vectors_count")

# Rebuild the graph when removals since it was built exceed this share of live vectors:
# usearch tombstones never give their slots back and degrade recall.
CHURN_REBUILD_RATIO = 0.25

EncoderFactory = Callable[[Config], "Encoder | EmbeddingBackend"]
#: The store's record of the probe vector an endpoint gave (see ``RemoteBackend``).
PROBE_META = "model_probe"


def default_encoder_factory(config: Config) -> Encoder | EmbeddingBackend:
    """The local ONNX model, or the OpenAI-compatible endpoint the config names."""
    if config.embedding is not None:
        from kenning.embedding.endpoint import EndpointEmbedder

        return EndpointEmbedder(config.embedding)
    from kenning.embedding import Encoder

    return Encoder.load(config.model, variant=config.model_variant, threads=config.embed_threads)


@dataclass(slots=True)
class Status:
    state: IndexState
    files: int
    chunks: int
    embedded: int
    pending: int
    skipped: int
    symbols: int
    message: str | None = None
    embedder: str | None = None  # "scheme://host:port" when code is sent to an endpoint
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
        # Where the store is asked to be; ``open`` decides where it is (see store.location).
        self.store_dir = requested_store(self.root, self.config)[0]
        self._store: StoreDir | None = None
        self.store_note: str | None = None  # said in the status while it holds
        self._key = b""
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
        self._encoder: EmbeddingBackend | None = None
        self._encoder_lock = threading.Lock()
        self.model_error: str | None = None
        # An endpoint that could not be reached: why, and not before when to try again.
        self.embed_outage: EmbeddingUnavailable | None = None
        self._unconnected: EmbeddingBackend | None = None
        self.read_only = False
        self.read_only_reason: str | None = None
        # The index's state and its message: moved only through this object (see kenning.state).
        self.states = IndexStates()
        self.churn = 0
        self._generation = 0  # bumped whenever files, chunks or symbols change; caches key on it
        self._gen_lock = threading.Lock()
        self._data_version: int | None = None  # read-only: the writer's commits, as last seen
        self._version_conn: sqlite3.Connection | None = None
        self._loaded_vectors_file: str | None = None
        self._immutable = False  # read the main file alone (full disk, lock held, WAL empty)
        # The user-level embedding cache for this engine's model (opened by the indexer).
        self.shared_cache: ModelCache | None = None
        self.shared_cache_error: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def open(self) -> Engine:
        """Open the store: find or make kenning's own directory, take the writer lock if free,
        open (or rebuild) the database, load the graph. Raises ``StoreRefused`` when the asked-for
        store location is not kenning's, ``StoreCorrupt`` / ``OSError`` when it cannot be used."""
        if self.db is not None:
            return self
        self._key = store_key()
        self._store = open_store_dir(self.root, self.config, self._key)
        self.store_dir = self._store.path
        if self._store.fallback_from is not None:
            self.store_note = (
                f"{self._store.fallback_from} is not kenning's (left untouched);"
                f" the index is in {self.store_dir}"
            )
        self._lock = WriterLock(self.store_dir)
        self.read_only = False
        self.read_only_reason = None
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
        self._immutable = False
        try:
            self.db = self._open_db()
        except StoreUnavailable as exc:
            # A full disk (say) must not stop searching what is already indexed. Holding the
            # writer lock, with every commit in the main file (no WAL), the main file can be
            # read alone: no -shm needs to be made, which a full disk cannot.
            wal = self.store_dir / (DB_FILENAME + "-wal")
            if self.read_only or not (self.store_dir / DB_FILENAME).exists():
                self._lock.release()
                raise
            log.error("%s; searching the index as it is, read-only", exc)
            self.read_only = True
            self.read_only_reason = f"the index cannot be written ({exc}); it is searched as it is"
            self._immutable = not os.path.exists(wal) or os.path.getsize(wal) == 0
            try:
                self.db = self._open_db()
            except BaseException:
                self._lock.release()
                raise
        except BaseException:
            self._lock.release()
            raise
        if not self.read_only:
            self._load_vectors_if_valid()
        else:
            self._load_vectors_read_only()
        return self

    def close(self) -> None:
        for enc in (self._encoder, self._unconnected):
            if isinstance(enc, RemoteBackend):
                enc.close()  # outstanding requests stop now, not when they time out
        if self.db is not None and not self.read_only and self.store_lost() is None:
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

    def store_lost(self) -> str | None:
        """Why the open store is no longer the one at its place (deleted, as by ``git clean
        -fdx``, or replaced), or None. Cheap: a few ``lstat`` calls and the marker's bytes."""
        store, db = self._store, self.db  # read once: another thread may be reopening
        if store is None or db is None:
            return None
        try:
            st = os.lstat(store.path)
        except OSError:
            return f"{store.path} was deleted"
        if (st.st_dev, st.st_ino) != (store.dev, store.ino):
            return f"{store.path} was replaced"
        if read_marker(store.path, self._key) != store.store_id:
            return f"{store.path} lost its kenning-store marker"
        return db.replaced()

    def reopen(self, reason: str) -> None:
        """Drop everything read from the old store and open the one now at its place."""
        log.warning("%s: reopening the index (rebuilt if it is gone)", reason)
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._version_conn is not None:
            self._version_conn.close()
            self._version_conn = None
        self._lock.release()
        self.vectors = None
        self.vectors_ready.clear()
        self.vectors_in_step = False
        self.churn = 0
        self._data_version = None
        self._loaded_vectors_file = None
        self.bump_generation()
        self.open()

    def _open_db(self) -> Database:
        assert self._store is not None
        path = self.store_dir / DB_FILENAME
        token = database_token(self._key, self._store.store_id)
        if self.read_only:
            if not path.exists():
                raise StoreCorrupt(f"no index at {self.store_dir} yet and it is locked by a writer")
            for suffix in DB_FAMILY:
                why = foreign_file(Path(str(path) + suffix))
                if why is not None:
                    raise StoreCorrupt(f"{path.name}{suffix} {why}: not opened")
            why = authenticate(path, token, immutable=self._immutable)
            if why is not None:
                raise StoreCorrupt(f"{path} was not written by kenning for this store ({why})")
            return Database(path, token=token, read_only=True, immutable=self._immutable)
        for suffix in DB_FAMILY:
            why = foreign_file(Path(str(path) + suffix))
            if why is not None:
                self._move_db_aside(path, "foreign", f"{path.name}{suffix} {why}")
                break
        if path.exists():
            try:
                why = authenticate(path, token)
            except StoreCorrupt as exc:
                why = None  # unreadable: moved aside as corrupt below, by the writer's own checks
                log.info("%s", exc)
            if why is not None:
                self._move_db_aside(
                    path, "foreign", f"{path.name} was not written by kenning for this store ({why})"
                )
        try:
            return Database(path, token=token)
        except StoreCorrupt as exc:
            self._move_db_aside(path, "corrupt", str(exc))
            return Database(path, token=token)

    def _move_db_aside(self, path: Path, tag: str, reason: str) -> None:
        """Rename the database and its companions, untouched, and forget the graph files."""
        aside = aside_name(path, tag)
        log.error("%s: moving it aside to %s and rebuilding the index", reason, aside.name)
        for suffix in DB_FAMILY:
            p = Path(str(path) + suffix)
            if os.path.lexists(p):
                os.rename(p, Path(str(aside) + suffix))
        clean_stale_files(self.store_dir, None)

    def _recorded_vector_file(self) -> VectorFileInfo | None:
        """The graph file SQLite records; its name is derived from the generation number, never
        taken from the database as a path."""
        assert self.db is not None
        db = self.db
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

    def _load_vectors_if_valid(self) -> None:
        """Load the saved graph if it is exactly what SQLite recorded; else leave it to rebuild."""
        info = self._recorded_vector_file()
        clean_stale_files(self.store_dir, info.name if info else None)
        if info is None:
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info, self._key)
            self.churn = self.db.get_meta_int("vectors_churn", 0) if self.db else 0
        except VectorFileInvalid as exc:
            log.warning("vector index rejected (%s); it will be rebuilt from stored vectors", exc)
            self.vectors = None

    def _load_vectors_read_only(self) -> None:
        info = self._recorded_vector_file()
        if info is None:
            return
        try:
            self.vectors = VectorIndex.load(self.store_dir, info, self._key)
            self._loaded_vectors_file = info.name
            self.vectors_ready.set()
        except VectorFileInvalid as exc:
            log.warning("vector index unusable read-only (%s); dense search is off", exc)

    # -- the model ---------------------------------------------------------------------------

    def encoder(self, *, quick: bool = False) -> EmbeddingBackend | None:
        """The backend, loaded on first use; None (with ``model_error`` set) if it cannot load,
        or (with ``embed_outage`` set) while its endpoint is unreachable. ``quick``: a request
        is waiting, so an endpoint gets one short try."""
        if self._encoder is not None or self.model_error is not None:
            return self._encoder
        outage = self.embed_outage
        if outage is not None and (time.time() < outage.retry_at or (quick and not self.read_only)):
            # A query never waits on a reconnect: the indexer's retry job does that (a reader
            # of another process's store has no indexer, so its queries try, briefly).
            return None
        with self._encoder_lock:
            if self._encoder is None and self.model_error is None:
                try:
                    # An endpoint that failed to connect is kept and asked again (its outage
                    # count paces the retries), not built anew.
                    enc = self._unconnected or self._encoder_factory(self.config)
                    if isinstance(enc, RemoteBackend):
                        self._unconnected = enc
                        enc.connect(quick=quick)
                        self._unconnected = None
                    self._encoder = enc
                    self.embed_outage = None
                except EmbeddingUnavailable as exc:
                    self.embed_outage = exc
                    log.warning("%s; lexical search still works, retrying at %s", exc, exc.retry_text())
                except Exception as exc:
                    self.model_error = f"the embedding model could not be loaded: {exc}"
                    log.error("%s; lexical search still works", self.model_error)
        return self._encoder

    def embedding_receiver(self) -> str | None:
        """The ``scheme://host:port`` that receives code for embedding, or None (local model)."""
        settings = self.config.embedding
        return settings.receiver if settings is not None else None

    def model_matches(self) -> bool:
        """Whether the store's vectors were made by the loaded encoder (dense search is valid)."""
        enc = self._encoder
        return enc is not None and self.db is not None and self.db.get_meta("model_id") == enc.model_id

    def bind_model(self) -> EmbeddingBackend | None:
        """Load the encoder and make the store's vectors its own, clearing another model's.

        An endpoint's model is also checked by its probe vector: the same name and dimension
        with a different vector means the server swapped the model, and the store re-embeds.
        """
        enc = self.encoder()
        if enc is None or self.db is None or self.read_only:
            return enc
        stored = self.db.get_meta("model_id")
        remote = enc if isinstance(enc, RemoteBackend) else None
        if stored == enc.model_id:
            recorded = self.db.get_meta(PROBE_META)
            if remote is None:
                return enc
            reason = remote.probe_mismatch(recorded) if recorded is not None else None
            if reason is None:
                if recorded is None:
                    with self.db.transaction() as conn:
                        self.db.set_meta(conn, PROBE_META, remote.probe_record())
                return enc
            log.warning("%s: re-embedding the index of %s", reason, self.root)
        elif stored is not None:
            log.warning(
                "the index was embedded with %s, the model now is %s: re-embedding",
                stored,
                enc.model_id,
            )
        with self.db.transaction() as conn:
            self.db.clear_embeddings(conn)
            self.db.set_meta(conn, "model_id", enc.model_id)
            self.db.set_meta(conn, "model_dim", str(enc.dim))
            if remote is not None:
                self.db.set_meta(conn, PROBE_META, remote.probe_record())
            else:
                self.db.delete_meta(conn, PROBE_META)
            # The vector bookkeeping and the origin counters ("origin_…") start again.
            self.db.delete_meta(conn, *VECTOR_META, EMBEDDED_THROUGH, prefix="origin_")
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
        info_before = self._recorded_vector_file()
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

    def prune_embedding_cache(self) -> int:
        """Drop cached vectors no chunk uses once they outnumber the live ones.

        The cache is what makes a branch switch and back cheap, so it is kept generously:
        pruned only when unused vectors exceed the live chunks (and a floor of 10,000).
        """
        if self.db is None or self.read_only:
            return 0
        cached, live = self.db.embedding_cache_counts()
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
                    sqlite_uri(self.store_dir / DB_FILENAME, "ro", immutable=self._immutable),
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
                self.vectors = VectorIndex.load(self.store_dir, info, self._key)
                self._loaded_vectors_file = info.name
                self.vectors_ready.set()
            except VectorFileInvalid as exc:
                log.info("the writer's vector index is not usable yet (%s)", exc)

    @property
    def state(self) -> IndexState:
        return self.states.state

    @property
    def state_message(self) -> str | None:
        return self.states.message

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
            message=self.state_message or self.model_error or self._outage_message() or self.store_note,
            embedder=self.embedding_receiver(),
            origin=self.origin_counts(),
            shared_cache=self.shared_cache_info(),
        )

    def _outage_message(self) -> str | None:
        outage = self.embed_outage
        if outage is None:
            return None
        return f"{outage}; lexical results only, retrying at {outage.retry_text()}"

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
            and self.encoder(quick=True) is not None
            and self.model_matches()
        )
