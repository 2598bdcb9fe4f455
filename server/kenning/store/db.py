"""The SQLite database: the source of truth for files, chunks, symbols, FTS5 rows and vectors.

Every other file in the store (the HNSW index) is a cache rebuilt from what this database holds.
One connection writes (the indexer's thread); every other thread reads through its own connection,
so readers see a consistent WAL snapshot and never block the writer.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kenning.store.trust import same_mac

log = logging.getLogger(__name__)

# Bump when the layout changes: an older or newer store is rebuilt, never misread.
SCHEMA_VERSION = 3
DB_FILENAME = "kenning.sqlite3"
# Meta key: every chunk with an id up to this one has a vector of the store's model (chunk ids
# only grow and a chunk never changes its model input; a model change deletes the key). The
# embedding pass starts after it, and counting pending chunks looks only past it.
EMBEDDED_THROUGH = "embedded_through"
# Meta key: the store's database token (``trust.database_token``); only a database holding the
# token of the store it lies in is believed or written.
STORE_AUTH = "store_auth"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT,
    language TEXT,
    skip_reason TEXT,
    line_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_language ON files(language);
-- AUTOINCREMENT: a chunk id is never reused, so a key in the HNSW file can never point at a
-- different chunk than the one it was embedded from, whatever happened between saves.
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    symbol TEXT,
    header TEXT NOT NULL,
    text TEXT NOT NULL,
    idents TEXT NOT NULL,
    embed_key BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_embed_key ON chunks(embed_key);
CREATE TABLE IF NOT EXISTS symbols(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    container TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    name_line INTEGER NOT NULL,
    name_col INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);
-- The embedding cache: float16 vectors keyed by a hash of the exact model input. It is valid for
-- the store's model only (meta 'model_id'); a model change empties it.
CREATE TABLE IF NOT EXISTS embeddings(key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, idents, content='chunks', content_rowid='id',
    tokenize="unicode61 remove_diacritics 2"
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, idents) VALUES (new.id, new.text, new.idents);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, idents)
    VALUES ('delete', old.id, old.text, old.idents);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF text, idents ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, idents)
    VALUES ('delete', old.id, old.text, old.idents);
    INSERT INTO chunks_fts(rowid, text, idents) VALUES (new.id, new.text, new.idents);
END;
"""


class StoreClosed(Exception):
    """The database was closed (its folder removed, the server shutting down) before a read."""


class StoreCorrupt(Exception):
    """The database cannot be trusted (unreadable, failed integrity check, foreign schema)."""


class StoreUnavailable(OSError):
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


@dataclass(frozen=True, slots=True)
class FileRow:
    id: int
    path: str
    size: int
    mtime_ns: int
    content_hash: str | None
    language: str | None
    skip_reason: str | None


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    file_id: int
    path: str
    language: str
    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    header: str
    text: str


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk about to be written: what the chunker produced plus its derived columns."""

    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    header: str
    text: str
    idents: str
    embed_key: bytes


@dataclass(frozen=True, slots=True)
class NewSymbol:
    name: str
    kind: str
    container: str | None
    start_line: int
    end_line: int
    name_line: int
    name_col: int


@dataclass(frozen=True, slots=True)
class SymbolRow:
    id: int
    path: str
    name: str
    kind: str
    container: str | None
    start_line: int
    end_line: int
    name_line: int
    name_col: int


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


class Database:
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
        if read_only:
            self.writer: sqlite3.Connection | None = None
            self._check_schema(self.reader())
            self.identity = _identity(path)
            return
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
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                conn.close()
                raise StoreCorrupt(f"quick_check of {path.name} failed: {check}")
            conn.executescript(_SCHEMA)
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
            except sqlite3.Error as exc:  # a checkpoint is an optimisation, not a duty
                log.debug("checkpoint at close failed: %s", exc)
            self.writer.close()
            self.writer = None

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

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def upsert_file(
        self,
        conn: sqlite3.Connection,
        *,
        path: str,
        size: int,
        mtime_ns: int,
        content_hash: str | None,
        language: str | None,
        skip_reason: str | None,
        line_count: int,
    ) -> int:
        row = conn.execute(
            "INSERT INTO files(path, size, mtime_ns, content_hash, language, skip_reason, line_count)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(path) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns,"
            " content_hash=excluded.content_hash, language=excluded.language,"
            " skip_reason=excluded.skip_reason, line_count=excluded.line_count"
            " RETURNING id",
            (path, size, mtime_ns, content_hash, language, skip_reason, line_count),
        ).fetchone()
        return int(row[0])

    def touch_file(self, conn: sqlite3.Connection, file_id: int, size: int, mtime_ns: int) -> None:
        conn.execute("UPDATE files SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, file_id))

    def delete_files(self, conn: sqlite3.Connection, file_ids: Sequence[int]) -> list[int]:
        """Delete files with their chunks and symbols; return the deleted chunk ids."""
        chunk_ids: list[int] = []
        for fid in file_ids:
            chunk_ids.extend(r[0] for r in conn.execute("SELECT id FROM chunks WHERE file_id=?", (fid,)))
            conn.execute("DELETE FROM chunks WHERE file_id=?", (fid,))
            conn.execute("DELETE FROM symbols WHERE file_id=?", (fid,))
            conn.execute("DELETE FROM files WHERE id=?", (fid,))
        return chunk_ids

    def replace_chunks(
        self, conn: sqlite3.Connection, file_id: int, chunks: Sequence[NewChunk]
    ) -> tuple[list[int], list[int]]:
        """Make the file's chunks equal ``chunks``; return (removed ids, added ids).

        Chunks whose exact model input is unchanged keep their id (only their lines move), so an
        edit re-embeds and re-inserts only what really changed.
        """
        old: dict[bytes, list[int]] = {}
        for cid, key in conn.execute("SELECT id, embed_key FROM chunks WHERE file_id=?", (file_id,)):
            old.setdefault(bytes(key), []).append(cid)
        added: list[int] = []
        for c in chunks:
            same = old.get(c.embed_key)
            if same:
                cid = same.pop()
                conn.execute(
                    "UPDATE chunks SET start_line=?, end_line=?, kind=?, symbol=? WHERE id=?",
                    (c.start_line, c.end_line, c.kind, c.symbol, cid),
                )
                continue
            row = conn.execute(
                "INSERT INTO chunks(file_id, start_line, end_line, kind, symbol, header, text,"
                " idents, embed_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    file_id,
                    c.start_line,
                    c.end_line,
                    c.kind,
                    c.symbol,
                    c.header,
                    c.text,
                    c.idents,
                    c.embed_key,
                ),
            ).fetchone()
            added.append(int(row[0]))
        removed = [cid for ids in old.values() for cid in ids]
        conn.executemany("DELETE FROM chunks WHERE id=?", [(cid,) for cid in removed])
        return removed, added

    def replace_symbols(self, conn: sqlite3.Connection, file_id: int, symbols: Sequence[NewSymbol]) -> None:
        conn.execute("DELETE FROM symbols WHERE file_id=?", (file_id,))
        conn.executemany(
            "INSERT INTO symbols(file_id, name, kind, container, start_line, end_line, name_line,"
            " name_col) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (file_id, s.name, s.kind, s.container, s.start_line, s.end_line, s.name_line, s.name_col)
                for s in symbols
            ],
        )

    def put_embeddings(self, conn: sqlite3.Connection, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        half = vectors.astype(np.float16)
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings(key, vector) VALUES (?, ?)",
            [(k, half[i].tobytes()) for i, k in enumerate(keys)],
        )

    def add_to_meta(self, conn: sqlite3.Connection, counts: dict[str, int]) -> None:
        """Add to integer meta values (the vector origin counters), creating them at 0."""
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
            [(k, str(int(n))) for k, n in counts.items() if n],
        )

    def clear_embeddings(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM embeddings")

    def prune_embeddings(self, conn: sqlite3.Connection) -> int:
        """Drop cached vectors no chunk uses; returns how many went."""
        cur = conn.execute("DELETE FROM embeddings WHERE key NOT IN (SELECT embed_key FROM chunks)")
        return cur.rowcount

    # -- reading (any thread) ----------------------------------------------------------------

    def _r(self, conn: sqlite3.Connection | None) -> sqlite3.Connection:
        return conn if conn is not None else self.reader()

    def get_meta(self, key: str, conn: sqlite3.Connection | None = None) -> str | None:
        row = self._r(conn).execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def get_meta_int(self, key: str, default: int, conn: sqlite3.Connection | None = None) -> int:
        """A counter from the meta table; ``default`` for anything but plain decimal digits
        (the meta table is kenning's own, but a value must never become a crash or a path)."""
        value = self.get_meta(key, conn)
        if value is None or not value.isascii() or not value.isdigit() or len(value) > 18:
            return default
        return int(value)

    def all_files(self, conn: sqlite3.Connection | None = None) -> dict[str, FileRow]:
        return {
            r[1]: FileRow(*r)
            for r in self._r(conn).execute(
                "SELECT id, path, size, mtime_ns, content_hash, language, skip_reason FROM files"
            )
        }

    def file_by_path(self, path: str, conn: sqlite3.Connection | None = None) -> FileRow | None:
        r = (
            self._r(conn)
            .execute(
                "SELECT id, path, size, mtime_ns, content_hash, language, skip_reason FROM files"
                " WHERE path=?",
                (path,),
            )
            .fetchone()
        )
        return None if r is None else FileRow(*r)

    def counts(self, conn: sqlite3.Connection | None = None) -> dict[str, int]:
        """Files, chunks, embedded and pending chunks, symbols.

        Every search answer and status notification carries these counts. Pending chunks are
        looked for only past the ``EMBEDDED_THROUGH`` mark (looking up every chunk's key took
        78 ms at 100k chunks), and a reader's last answer is reused until ``PRAGMA
        data_version`` says another connection committed.
        """
        own_reader = conn is None or conn is getattr(self._local, "conn", None)
        c = self._r(conn)
        if own_reader and c is not self.writer:
            version = c.execute("PRAGMA data_version").fetchone()[0]
            cached = getattr(self._local, "counts", None)
            if cached is not None and cached[0] == version:
                return dict(cached[1])
            result = self._count(c)
            self._local.counts = (version, result)
            return dict(result)
        return self._count(c)

    @staticmethod
    def _count(c: sqlite3.Connection) -> dict[str, int]:
        files = c.execute("SELECT count(*) FROM files WHERE skip_reason IS NULL").fetchone()[0]
        skipped = c.execute("SELECT count(*) FROM files WHERE skip_reason IS NOT NULL").fetchone()[0]
        chunks = c.execute("SELECT count(*) FROM chunks").fetchone()[0]
        row = c.execute("SELECT value FROM meta WHERE key=?", (EMBEDDED_THROUGH,)).fetchone()
        pending = c.execute(
            "SELECT count(*) FROM chunks c WHERE c.id > ?"
            " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)",
            (int(row[0]) if row else 0,),
        ).fetchone()[0]
        embedded = chunks - pending
        symbols = c.execute("SELECT count(*) FROM symbols").fetchone()[0]
        return {
            "files": files,
            "skipped": skipped,
            "chunks": chunks,
            "embedded": embedded,
            "pending": chunks - embedded,
            "symbols": symbols,
        }

    def skip_counts(self, conn: sqlite3.Connection | None = None) -> dict[str, int]:
        return {
            str(r[0]): int(r[1])
            for r in self._r(conn).execute(
                "SELECT skip_reason, count(*) FROM files WHERE skip_reason IS NOT NULL"
                " GROUP BY skip_reason ORDER BY 2 DESC"
            )
        }

    def language_counts(self, conn: sqlite3.Connection | None = None) -> dict[str, int]:
        return {
            str(r[0]): int(r[1])
            for r in self._r(conn).execute(
                "SELECT language, count(*) FROM files WHERE skip_reason IS NULL"
                " GROUP BY language ORDER BY 2 DESC"
            )
        }

    def pending_chunks(
        self, limit: int, conn: sqlite3.Connection | None = None, *, after_id: int = 0
    ) -> list[tuple[int, bytes, str, str, str]]:
        """Chunks whose model input has no vector yet: (id, embed_key, path, header, text),
        in id order, starting after ``after_id``.

        Pass the last id of the previous batch as ``after_id``: starting from the first chunk
        every time re-checks every embedded chunk per batch, which made the embedding loop
        quadratic (7.7 s of CPU for the 30k chunks of the standard library, ~85 s at 100k).
        """
        return [
            (int(r[0]), bytes(r[1]), str(r[2]), str(r[3]), str(r[4]))
            for r in self._r(conn).execute(
                "SELECT c.id, c.embed_key, f.path, c.header, c.text FROM chunks c"
                " JOIN files f ON f.id = c.file_id"
                " WHERE c.id > ?"
                " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)"
                " ORDER BY c.id LIMIT ?",
                (after_id, limit),
            )
        ]

    def pending_chunks_in(
        self, paths: Sequence[str], limit: int, conn: sqlite3.Connection | None = None
    ) -> list[tuple[int, bytes, str, str, str]]:
        """Like ``pending_chunks``, for the given files only: in the order of ``paths``, then
        by id (the files the user works on are embedded first)."""
        if not paths or limit <= 0:
            return []
        return [
            (int(r[0]), bytes(r[1]), str(r[2]), str(r[3]), str(r[4]))
            for r in self._r(conn).execute(
                "SELECT c.id, c.embed_key, f.path, c.header, c.text FROM json_each(?) j"
                " JOIN files f ON f.path = j.value JOIN chunks c ON c.file_id = f.id"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)"
                " ORDER BY j.key, c.id LIMIT ?",
                (_json_strs(paths), limit),
            )
        ]

    def count_embedded(self, chunk_ids: Sequence[int], conn: sqlite3.Connection | None = None) -> int:
        """How many of the given chunks have a stored vector (reused, not computed)."""
        if not chunk_ids:
            return 0
        row = (
            self._r(conn)
            .execute(
                "SELECT count(*) FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?))"
                " AND EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)",
                (_json_ints(chunk_ids),),
            )
            .fetchone()
        )
        return int(row[0])

    def meta_with_prefix(self, prefix: str, conn: sqlite3.Connection | None = None) -> dict[str, str]:
        rows = self._r(conn).execute(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
        )
        return {str(r[0]): str(r[1]) for r in rows}

    def chunk_ids_for_keys(
        self, keys: Iterable[bytes], conn: sqlite3.Connection | None = None
    ) -> list[tuple[int, bytes]]:
        c = self._r(conn)
        out: list[tuple[int, bytes]] = []
        for k in keys:
            out.extend((int(r[0]), k) for r in c.execute("SELECT id FROM chunks WHERE embed_key=?", (k,)))
        return out

    def embedded_chunk_ids(self, conn: sqlite3.Connection | None = None) -> np.ndarray:
        rows = (
            self._r(conn)
            .execute("SELECT c.id FROM chunks c JOIN embeddings e ON e.key = c.embed_key")
            .fetchall()
        )
        return np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))

    def iter_vectors(
        self, batch: int = 4096, conn: sqlite3.Connection | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All (chunk ids, float32 vectors) in batches, for rebuilding the HNSW."""
        cur = self._r(conn).execute(
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.key = c.embed_key"
        )
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
            yield ids, vecs.reshape(len(rows), -1).astype(np.float32)

    def vectors_for(
        self, chunk_ids: Sequence[int], conn: sqlite3.Connection | None = None
    ) -> tuple[list[int], np.ndarray]:
        """Stored float vectors of the given chunks (those that have one), in a batch query."""
        if not chunk_ids:
            return [], np.zeros((0, 0), dtype=np.float32)
        rows = (
            self._r(conn)
            .execute(
                "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.key = c.embed_key"
                " WHERE c.id IN (SELECT value FROM json_each(?))",
                (_json_ints(chunk_ids),),
            )
            .fetchall()
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        ids = [int(r[0]) for r in rows]
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
        return ids, vecs.reshape(len(rows), -1).astype(np.float32)

    def chunks_by_id(
        self, chunk_ids: Sequence[int], conn: sqlite3.Connection | None = None
    ) -> dict[int, ChunkRow]:
        if not chunk_ids:
            return {}
        rows = self._r(conn).execute(
            "SELECT c.id, c.file_id, f.path, f.language, c.start_line, c.end_line, c.kind,"
            " c.symbol, c.header, c.text FROM chunks c JOIN files f ON f.id = c.file_id"
            " WHERE c.id IN (SELECT value FROM json_each(?))",
            (_json_ints(chunk_ids),),
        )
        return {int(r[0]): ChunkRow(*r) for r in rows}

    def chunks_of_file(self, file_id: int, conn: sqlite3.Connection | None = None) -> list[ChunkRow]:
        rows = self._r(conn).execute(
            "SELECT c.id, c.file_id, f.path, f.language, c.start_line, c.end_line, c.kind,"
            " c.symbol, c.header, c.text FROM chunks c JOIN files f ON f.id = c.file_id"
            " WHERE c.file_id=? ORDER BY c.start_line",
            (file_id,),
        )
        return [ChunkRow(*r) for r in rows]

    def all_symbols(self, conn: sqlite3.Connection | None = None) -> list[SymbolRow]:
        return [SymbolRow(*r) for r in self.iter_symbols(conn)]

    def iter_symbols(self, conn: sqlite3.Connection | None = None) -> Iterator[tuple[Any, ...]]:
        """Every symbol as a plain tuple in ``SymbolRow`` field order, by id."""
        return iter(
            self._r(conn).execute(
                "SELECT s.id, f.path, s.name, s.kind, s.container, s.start_line, s.end_line,"
                " s.name_line, s.name_col FROM symbols s JOIN files f ON f.id = s.file_id"
                " ORDER BY s.id"
            )
        )

    def term_doc_counts(self, terms: Sequence[str], conn: sqlite3.Connection | None = None) -> dict[str, int]:
        if not terms:
            return {}
        rows = self._r(conn).execute(
            "SELECT term, doc FROM chunks_vocab WHERE term IN (SELECT value FROM json_each(?))",
            (_json_strs(terms),),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def integrity_problems(self, conn: sqlite3.Connection | None = None) -> list[str]:
        """SQLite and FTS5 integrity checks; an empty list means healthy."""
        c = self._r(conn)
        problems = [str(r[0]) for r in c.execute("PRAGMA integrity_check") if str(r[0]) != "ok"]
        if self.writer is not None:
            in_transaction = self.writer.in_transaction
            try:
                self.writer.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                problems.append(f"fts5: {exc}")
            finally:
                # sqlite3 opened a transaction for the INSERT: end it, or the writer's next
                # BEGIN fails ("cannot start a transaction within a transaction").
                if not in_transaction:
                    self.writer.rollback()
        return problems


def _json_ints(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _json_strs(values: Iterable[str]) -> str:
    import json

    return json.dumps(list(values))
