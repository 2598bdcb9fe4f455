"""The ``Engine``: one workspace root's index: opening, checking and repairing the store, its
state, and its status. The model (``engine.model``) and the graph (``engine.vectors``) are its
mixins."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kenning.config import Config
from kenning.embedding.backend import EmbeddingBackend, EmbeddingUnavailable, RemoteBackend
from kenning.engine.model import EncoderFactory, ModelBinding, default_encoder_factory
from kenning.engine.vectors import GraphLoad, VectorKeeping, recorded_vector_file
from kenning.state import IndexStates
from kenning.store.db import Database, StoreCorrupt, StoreUnavailable, authenticate, sqlite_uri
from kenning.store.location import StoreDir, open_store_dir, requested_store
from kenning.store.lock import LockHeld, WriterLock
from kenning.store.read_ahead import ReadAhead
from kenning.store.schema import DB_FILENAME
from kenning.store.trust import aside_name, database_token, foreign_file, read_marker, store_key
from kenning.store.vectors import (
    VectorFileInvalid,
    VectorIndex,
    clean_stale_files,
)
from kenning.types import IndexState

if TYPE_CHECKING:
    from kenning.embedding.shared import ModelCache
    from kenning.search.hybrid import Searcher

log = logging.getLogger(__name__)

# The database and the files SQLite keeps beside it: moved aside together, never one alone.
DB_FAMILY = ("", "-wal", "-shm", "-journal")
# How far back ``Engine.changed_since`` reaches: this many generations, this many paths in all.
CHANGE_LOG_ENTRIES = 1_000
CHANGE_LOG_PATHS = 20_000


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


# The b-trees a server's start reads all of (the scan's file rows, counting chunks and symbols,
# the graph's check, the symbol index): read ahead of the rest of the file.
READ_FIRST = ("files", "chunks_file", "symbols", "symbols_file")


class Engine(ModelBinding, VectorKeeping):
    """The index of one workspace root. Open it, index it, search it, close it."""

    def __init__(
        self,
        root: Path,
        config: Config | None = None,
        *,
        encoder_factory: EncoderFactory = default_encoder_factory,
        read_only: bool | None = None,
        defer_vectors: bool = False,
        read_ahead: bool = False,
    ) -> None:
        """``defer_vectors``: a writer loads the saved graph when an embedding pass first needs
        it, not at open (``kenning index`` on an unchanged tree never needs it). ``read_ahead``:
        read the database file once at open so a cold start's queries find it in memory (a
        long-running server; see ``kenning.store.read_ahead``)."""
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
        # Who writes the store when another process holds its writer lock (this engine then
        # reads it and may take over when that process lets go: see ``writer_gone``).
        self.writer_elsewhere: str | None = None
        self._writer_logged: str | None = None
        # The index's state and its message: moved only through this object (see kenning.state).
        self.states = IndexStates()
        self.churn = 0
        self.removed_since_prune = 0  # chunks removed since the embedding cache was last counted
        self._generation = 0  # bumped whenever files, chunks or symbols change; caches key on it
        self._gen_lock = threading.Lock()
        # The latest generations and the files each changed (None: unknown), so a cache built
        # at an older one can update just those files (the symbol index after a save).
        self._change_log: deque[tuple[int, frozenset[str] | None]] = deque()
        self._change_log_paths = 0
        self._change_log_floor = 0  # changed_since() knows nothing before this generation
        self._data_version: int | None = None  # read-only: the writer's commits, as last seen
        self._version_conn: sqlite3.Connection | None = None
        self._loaded_vectors_file: str | None = None
        self._defer_vectors = defer_vectors
        self._vectors_deferred = False  # open() left the saved graph for prepare_vectors to load
        self._graph_load: GraphLoad | None = None  # the saved graph loading beside the scan
        self._read_ahead_wanted = read_ahead
        self.read_ahead: ReadAhead | None = None  # the database file being read at open
        self._immutable = False  # read the main file alone (full disk, lock held, WAL empty)
        # The user-level embedding cache for this engine's model (opened by the indexer).
        self.shared_cache: ModelCache | None = None
        self.shared_cache_error: str | None = None
        # This engine's searches and their caches (kenning.search), made on the first one.
        self._searcher: Searcher | None = None
        self._searcher_lock = threading.Lock()

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
        self.writer_elsewhere = None
        if self._want_read_only is not True:
            try:
                self._lock.acquire()
            except LockHeld as exc:
                if self._want_read_only is False:
                    raise
                self.read_only = True
                self.read_only_reason = str(exc)
                if exc.holder != self._writer_logged:  # once per writer, not per retry
                    log.warning("%s; opening it read-only", exc)
                    self._writer_logged = exc.holder
                self.writer_elsewhere = exc.holder
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
            self._vectors_deferred = self._defer_vectors
            if not self._defer_vectors:
                self._load_vectors_if_valid(background=True)
        else:
            self._load_vectors_read_only()
        if self._read_ahead_wanted:
            graph = self._graph_load.thread if self._graph_load is not None else None
            try:
                first = self.db.btree_roots(READ_FIRST)
            except sqlite3.Error:  # only ever a head start: read the file in order
                first = []
            self.read_ahead = ReadAhead(self.store_dir / DB_FILENAME, first=first, after=graph).start()
        return self

    def close(self) -> None:
        for enc in (self._encoder, self._unconnected):
            if isinstance(enc, RemoteBackend):
                enc.close()  # outstanding requests stop now, not when they time out
        self.drop_graph_load()
        if self.db is not None and not self.read_only and self.store_lost() is None:
            try:
                self.save_vectors()
            except OSError as exc:
                log.error("could not save the vector index at close: %s", exc)
        self._close_connections()
        if self.shared_cache is not None:
            self.shared_cache.flush()
            self.shared_cache.cache.close()
            self.shared_cache = None
        with self._searcher_lock:
            searcher, self._searcher = self._searcher, None
        if searcher is not None:
            searcher.close()
        self._lock.release()

    def __enter__(self) -> Engine:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def searcher(self) -> Searcher:
        """What searches this index and keeps their caches (made on first use, closed with the
        engine). Imported here: ``kenning.search`` is built on the engine, not the other way."""
        with self._searcher_lock:
            if self._searcher is None:
                from kenning.search.hybrid import Searcher

                self._searcher = Searcher(self)
            return self._searcher

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

    def writer_gone(self) -> bool:
        """For an engine that another process's writer lock made read-only: whether that
        process has let the lock go (exited, or closed the store), so this one can write."""
        if self.writer_elsewhere is None:
            return False
        probe = WriterLock(self.store_dir)
        try:
            probe.acquire()
        except (LockHeld, OSError):
            return False
        probe.release()
        return True

    def reopen(self) -> None:
        """Drop everything read from the old store and open the one now at its place (a store
        deleted or replaced under us; a reader taking over from a writer that has gone)."""
        self.drop_graph_load()
        self._close_connections()
        self._lock.release()
        self.vectors = None
        self.vectors_ready.clear()
        self.vectors_in_step = False
        self.churn = 0
        self._data_version = None
        self._loaded_vectors_file = None
        self.bump_generation()
        self.open()

    def query_reads(self) -> AbstractContextManager[None]:
        """Around a query: the store's read-ahead, if one is running, waits while it runs."""
        ahead = self.read_ahead
        return ahead.query() if ahead is not None else nullcontext()

    def _close_connections(self) -> None:
        if self.read_ahead is not None:
            self.read_ahead.stop()
            self.read_ahead = None
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._version_conn is not None:
            self._version_conn.close()
            self._version_conn = None

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

    def bump_generation(self, changed: Iterable[str] | None = None) -> None:
        """A new generation: files, chunks or symbols changed. ``changed``: the stored paths of
        the files whose rows changed (None: unknown, or everything), kept for ``changed_since``."""
        paths = None if changed is None else frozenset(changed)
        with self._gen_lock:
            self._generation += 1
            entries = self._change_log
            entries.append((self._generation, paths))
            self._change_log_paths += len(paths) if paths is not None else 0
            while len(entries) > 1 and (
                len(entries) > CHANGE_LOG_ENTRIES or self._change_log_paths > CHANGE_LOG_PATHS
            ):
                generation, dropped = entries.popleft()
                self._change_log_floor = generation
                self._change_log_paths -= len(dropped) if dropped is not None else 0

    def changed_since(self, generation: int) -> frozenset[str] | None:
        """The stored paths of the files changed after ``generation`` (a caller's cache was
        built then), or None when that is not known: the log no longer reaches back that far,
        a change did not say which files, or another process wrote the store."""
        with self._gen_lock:
            if self.read_only or generation < self._change_log_floor or generation > self._generation:
                return None
            out: set[str] = set()
            for gen, paths in self._change_log:
                if gen <= generation:
                    continue
                if paths is None:
                    return None
                out |= paths
            return frozenset(out)

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
        assert self.db is not None  # only called with the store open
        info = recorded_vector_file(self.db)
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
