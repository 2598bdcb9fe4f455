"""The SQLite database: the source of truth for files, chunks, symbols, FTS5 rows and vectors.

Every other file in the store (the HNSW index) is a cache rebuilt from what this database holds.
One connection writes (the indexer's thread); every other thread reads through its own connection,
so readers see a consistent WAL snapshot and never block the writer.

This module owns opening, authenticating and closing the database and its connections; the
layout is in ``schema``, the row types in ``rows``, the writes in ``writes``, the reads in
``queries`` and those only a search makes in ``search_rows`` (all mixed into :class:`Database`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kenning.store.clean_close import record_clean_close, take_clean_close
from kenning.store.queries import Queries
from kenning.store.schema import SCHEMA, SCHEMA_VERSION, STORE_AUTH
from kenning.store.search_rows import SearchReads
from kenning.store.trust import same_mac
from kenning.store.writes import Writes
from kenning.types import KenningError

log = logging.getLogger(__name__)


class StoreClosed(Exception):
    """The database was closed (its folder removed, the server shutting down) before a read."""


class StoreCorrupt(KenningError):
    """The database cannot be trusted (unreadable, failed integrity check, foreign schema)."""


class StoreUnavailable(KenningError, OSError):
    """The database is fine but cannot be used now: the disk is full, a file cannot be opened,
    the file system is read-only. Nothing is moved aside for this."""


# SQLite primary result codes that mean the file's content is damaged, not the system.
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def store_error(exc: sqlite3.Error, what: str) -> Exception:
    """``StoreCorrupt`` for a damaged file, ``StoreUnavailable`` for a full disk and the like."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF not in _CORRUPT_CODES and isinstance(exc, sqlite3.OperationalError):
        return StoreUnavailable(f"{what}: {exc}")
    return StoreCorrupt(f"{what}: {exc}")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def sqlite_uri(path: Path, mode: str, *, immutable: bool = False) -> str:
    """A ``file:`` URI for ``path``: every byte outside [A-Za-z0-9/_.~-] percent-escaped, so a
    workspace path holding ``#``, ``?``, ``%`` or any other byte names exactly that file.

    ``immutable``: read the main file only, with no ``-shm`` (which a full disk cannot hold).
    Right only while nobody writes and the WAL is empty: the caller holds the writer lock."""
    return f"file:{urllib.parse.quote(os.fsencode(path), safe='/')}?mode={mode}" + (
        "&immutable=1" if immutable else ""
    )


def _connect(path: Path, *, read_only: bool, immutable: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(
        sqlite_uri(path, "ro" if read_only else "rwc", immutable=immutable),
        uri=True,
        timeout=10.0,
        check_same_thread=False,
    )
    if read_only:
        # Nothing in the schema (views, triggers, defaults) may call a function with side
        # effects. The writer needs its own triggers to write the FTS5 table, which this
        # forbids; it only ever opens a database ``authenticate`` accepted or one it made.
        conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    # 8 MiB of page cache per connection. The server holds one connection per thread that
    # reads (request threads, the lexical pool, the indexer), and the OS page cache holds the
    # file anyway: at 100k chunks 32 MiB each cost ~25 MiB of RSS per busy connection and
    # bought no measurable speed (searches, scans).
    conn.execute("PRAGMA cache_size=-8000")
    return conn


def authenticate(path: Path, token: str, *, immutable: bool = False) -> str | None:
    """None if the database at ``path`` carries ``token`` (kenning made it for this store);
    otherwise why not. Reads it read-only: a database that is not kenning's is never modified.
    Raises ``StoreCorrupt`` when it cannot be read at all."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro", immutable=immutable), uri=True, timeout=10.0)
    except sqlite3.Error as exc:
        raise store_error(exc, f"cannot open {path.name}") from exc
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("PRAGMA cell_size_check=ON")
        why = _token_problem(conn, token)
        if why is not None:
            # Damage to the meta table looks like a missing token: tell the two apart, so a
            # damaged store of ours is reported (and set aside) as corrupt, not as foreign.
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise StoreCorrupt(f"quick_check of {path.name} failed: {check}")
        return why
    except sqlite3.Error as exc:
        raise store_error(exc, f"cannot read {path.name}") from exc
    finally:
        conn.close()


def _token_problem(conn: sqlite3.Connection, token: str) -> str | None:
    kind = conn.execute("SELECT type FROM sqlite_master WHERE name='meta'").fetchone()
    if kind is None:
        return "it has no meta table"
    if kind[0] != "table":
        return f"its meta is a {kind[0]}, not a table"
    row = conn.execute("SELECT value FROM meta WHERE key=?", (STORE_AUTH,)).fetchone()
    if row is None:
        return "it carries no store token"
    if not isinstance(row[0], str) or not same_mac(row[0], token):
        return "its store token is not this store's"
    return None


class Database(Writes, Queries, SearchReads):
    """Typed access to the store's SQLite file.

    ``writer`` is for the one thread that indexes; ``reader()`` gives each other thread a
    connection of its own (sqlite3 connections must not be shared across threads in use).
    """

    def __init__(self, path: Path, *, token: str, read_only: bool = False, immutable: bool = False) -> None:
        """Open the store's database, which must be new or carry ``token`` (see ``authenticate``:
        callers check a database they did not just create before handing it here)."""
        self.path = path
        self.read_only = read_only
        self.immutable = immutable
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        # Requests reading through this database (see ``in_use``): close() waits for them,
        # since closing a connection another thread is executing on crashes the process.
        self._users = 0
        self._users_cond = threading.Condition()
        self._closed = False
        self._token = token
        self.quick_checked = False  # the writer's open ran PRAGMA quick_check (see clean_close)
        if read_only:
            self.writer: sqlite3.Connection | None = None
            self._check_schema(self.reader())
            self.identity = _identity(path)
            return
        # Closed cleanly and untouched since: its pages are what SQLite wrote (see clean_close).
        closed_cleanly = take_clean_close(path, token)
        try:
            conn = _connect(path, read_only=False)
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL: consistent after any crash; the last commits may roll back on power loss,
            # which the HNSW generation check below catches.
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name='files'").fetchone()[0]
            if has_tables and version != SCHEMA_VERSION:
                conn.close()
                raise StoreCorrupt(
                    f"schema version {version} in {path.name}, this kenning writes {SCHEMA_VERSION}"
                )
            self.quick_checked = not closed_cleanly
            check = "ok" if closed_cleanly else conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                conn.close()
                raise StoreCorrupt(f"quick_check of {path.name} failed: {check}")
            conn.executescript(SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            stored = conn.execute("SELECT value FROM meta WHERE key=?", (STORE_AUTH,)).fetchone()
            if stored is None:
                conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (STORE_AUTH, token))
            elif not same_mac(str(stored[0]), token):
                conn.close()
                raise StoreCorrupt(f"{path.name} belongs to another store")
            conn.commit()
            if stored is None:
                # The token goes into the main file at once: it must survive a lost WAL.
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, f"cannot open {path.name}") from exc
        self.writer = conn
        self.identity = _identity(path)

    @staticmethod
    def _check_schema(conn: sqlite3.Connection) -> None:
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, "cannot read the store") from exc
        if version != SCHEMA_VERSION:
            raise StoreCorrupt(f"schema version {version}, this kenning reads {SCHEMA_VERSION}")

    def replaced(self) -> str | None:
        """Why the file this database was opened from is no longer at its path (the store was
        deleted or replaced under us), or None while it still is."""
        now = _identity(self.path)
        if now is None:
            return f"{self.path} was deleted"
        if now != self.identity:
            return f"{self.path} was replaced by another file"
        return None

    def reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path, read_only=True, immutable=self.immutable)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def in_use(self) -> Iterator[Database]:
        """Hold the database open for one request's reads; raises :class:`StoreClosed` when it
        is closing or closed. ``close()`` waits until every holder has left."""
        with self._users_cond:
            if self._closed:
                raise StoreClosed(f"{self.path} is closed")
            self._users += 1
        try:
            yield self
        finally:
            with self._users_cond:
                self._users -= 1
                self._users_cond.notify_all()

    def close(self, wait_s: float = 30.0) -> None:
        with self._users_cond:
            self._closed = True
            if not self._users_cond.wait_for(lambda: self._users == 0, timeout=wait_s):
                log.warning("closing %s while %d requests still read it", self.path, self._users)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        if self.writer is not None:
            try:
                self.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                checkpointed = True
            except sqlite3.Error as exc:  # a checkpoint is an optimisation, not a duty
                log.debug("checkpoint at close failed: %s", exc)
                checkpointed = False
            self.writer.close()
            self.writer = None
            if checkpointed:
                record_clean_close(self.path, self._token)

    # -- writing (indexer thread only) -------------------------------------------------------

    def _w(self) -> sqlite3.Connection:
        if self.writer is None:
            raise RuntimeError("this store was opened read-only")
        return self.writer

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._w()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        else:
            conn.commit()
