"""The user-level embedding cache: vectors shared by every store on the machine, per model.

Every workspace store keeps its own vectors (the source of truth for that store); this cache sits
beside them under ``$KENNING_CACHE_DIR`` (see :func:`kenning.embedding.cache.cache_dir`) so that a
second clone, a ``git worktree`` or a new branch of a known repository finds the vectors a
neighbour already computed. Deleting it loses nothing but time.

One SQLite file, ``embeddings-v1.sqlite3`` (the version is in the name, so an older or newer
kenning never misreads it): ``models`` names each model identity (:func:`model_identity`) and
its dimension; ``vectors`` holds float16 vectors keyed by (model, blake2b of the exact model
input), with where each came from (computed here, or a pack) and when it was last used.

- Several processes (servers, the CLI, an MCP server) read and write it at once: WAL, a long
  ``busy_timeout``, short transactions; readers never wait for writers.
- Bounded: after writes, if the live pages exceed the cap, the least recently used rows go until
  they are 95 % of it, and freed pages are given back to the file system (incremental vacuum),
  so the file's size follows the cap within a few percent. Last use is recorded cheaply: a hit
  is re-stamped only when its stamp is older than ``TOUCH_AFTER_S``, in batches.
- Never fatal: any SQLite error disables the cache for this process with one warning; indexing
  goes on computing vectors. A file that cannot be opened as a database is moved aside.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kenning.embedding.cache import cache_dir

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FILENAME",
    "ORIGIN_COMPUTED",
    "ORIGIN_PACK",
    "CacheUsage",
    "ModelCache",
    "SharedCache",
    "SharedCacheError",
    "default_max_bytes",
    "format_size",
    "model_identity",
    "parse_size",
]

log = logging.getLogger(__name__)

FILENAME = "embeddings-v1.sqlite3"
SCHEMA_VERSION = 1
# 2 GiB: ~2.6 million 384-dimensional vectors, the standard library (30k chunks, 25 MB) eighty
# times over; five worktrees of a 100k-chunk repository share one copy (~80 MB).
DEFAULT_MAX_BYTES = 2 * 1024**3
MIN_MAX_BYTES = 1024 * 1024
# Trimming goes down to this share of the cap, so that a cache at its cap is not trimmed again
# after every batch of writes.
TRIM_TO = 0.95
# A hit is re-stamped only when its stamp is older than this: an unchanged re-index writes
# nothing, and LRU order is exact to within this many seconds.
TOUCH_AFTER_S = 600
TOUCH_FLUSH_EVERY = 4096
BUSY_TIMEOUT_MS = 30_000
LOOKUP_BATCH = 500  # keys per SELECT (well under SQLite's variable limit)

ORIGIN_COMPUTED = 0
ORIGIN_PACK = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS models(
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    dim INTEGER NOT NULL
);
-- origin: 0 computed by some kenning on this machine, 1 imported from a pack.
-- used: unix seconds of the last use (coarse, see TOUCH_AFTER_S), oldest evicted first.
CREATE TABLE IF NOT EXISTS vectors(
    model INTEGER NOT NULL REFERENCES models(id),
    key BLOB NOT NULL,
    vector BLOB NOT NULL,
    origin INTEGER NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


class SharedCacheError(Exception):
    """The shared cache cannot be used (unwritable directory, not a database, locked too long)."""


def model_identity(model_id: str, dim: int) -> str:
    """What the shared cache and packs key vectors by: the store's model id and dimension.

    The one place that says which vectors are interchangeable. The store records exactly these
    two (meta ``model_id``, ``model_dim``); a backend that widens the model id (an endpoint's
    name and prefixes) widens this identity with it.
    """
    return f"{model_id}#{int(dim)}"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """Bytes from ``"2G"``, ``"500M"``, ``"1.5GiB"``, ``"750000"`` (powers of 1024).

    Raises ValueError naming the accepted forms.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = _SIZE.match(str(text))
        if not m:
            raise ValueError(f"{text!r} is not a size (use bytes, or a number with K, M, G or T)")
        number = float(m.group(1))
        power = "kmgt".find(m.group(2).lower()) + 1 if m.group(2) else 0
        value = int(number * 1024**power)
    if value < 0:
        raise ValueError(f"a size cannot be negative: {text!r}")
    return value


def format_size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def default_max_bytes() -> int:
    """``$KENNING_CACHE_MAX`` (a size such as ``"1G"``), else ``DEFAULT_MAX_BYTES``."""
    raw = os.environ.get("KENNING_CACHE_MAX")
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        return max(parse_size(raw), MIN_MAX_BYTES)
    except ValueError as exc:
        log.warning("KENNING_CACHE_MAX: %s; using %s", exc, format_size(DEFAULT_MAX_BYTES))
        return DEFAULT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class ModelUsage:
    identity: str
    dim: int
    vectors: int
    from_packs: int


@dataclass(frozen=True, slots=True)
class CacheUsage:
    path: str
    bytes: int  # on disk: the database and its WAL
    max_bytes: int
    vectors: int
    models: tuple[ModelUsage, ...]


def file_bytes(path: Path) -> int:
    """The cache's size on disk (database + WAL) by ``stat``: cheap enough for every status."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(str(path) + suffix).st_size
    return total


class SharedCache:
    """One process's connection to the shared cache file. Use from one thread at a time."""

    def __init__(self, directory: Path | None = None, *, max_bytes: int | None = None) -> None:
        self.directory = directory if directory is not None else cache_dir()
        self.path = self.directory / FILENAME
        self.max_bytes = max(int(max_bytes), MIN_MAX_BYTES) if max_bytes is not None else default_max_bytes()
        self._lock = threading.Lock()
        self._conn = self._open()

    # -- opening -----------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise SharedCacheError(f"cannot create {self.directory}: {exc}") from exc
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise SharedCacheError(f"{self.path} is locked: {exc}") from exc
            # Not a database (or damaged beyond opening): it is only a cache, so set it aside
            # (for a post-mortem) and start an empty one.
            aside = self.path.with_name(f"{FILENAME}.corrupt-{int(time.time())}")
            log.warning("shared embedding cache %s unusable (%s): moving it to %s", self.path, exc, aside)
            try:
                for suffix in ("", "-wal", "-shm"):
                    p = Path(str(self.path) + suffix)
                    if p.exists():
                        os.replace(p, Path(str(aside) + suffix))
                return self._connect()
            except (OSError, sqlite3.DatabaseError) as exc2:
                raise SharedCacheError(f"cannot recreate {self.path}: {exc2}") from exc2

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # Before the first table: only then can the file give freed pages back.
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a cache: losing the last commits is fine
            conn.execute("PRAGMA journal_size_limit=67108864")
            if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return self._opened(conn)  # the common case: no write at open
            with self._write(conn):
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, SCHEMA_VERSION):
                    raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return self._opened(conn)

    def _opened(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
        return conn

    @staticmethod
    @contextlib.contextmanager
    def _write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.close()

    # -- models ------------------------------------------------------------------------------

    def model(self, identity: str, dim: int) -> ModelCache:
        """The vectors of one model identity (the row is created on first use)."""
        with self._lock:
            row = self._conn.execute("SELECT id, dim FROM models WHERE identity=?", (identity,)).fetchone()
            if row is None:
                with self._write(self._conn) as conn:
                    conn.execute(
                        "INSERT OR IGNORE INTO models(identity, dim) VALUES (?, ?)", (identity, int(dim))
                    )
                row = self._conn.execute(
                    "SELECT id, dim FROM models WHERE identity=?", (identity,)
                ).fetchone()
        if int(row[1]) != int(dim):
            raise SharedCacheError(f"the cache records dimension {row[1]} for {identity}, not {dim}")
        return ModelCache(self, int(row[0]), identity, int(dim))

    # -- size --------------------------------------------------------------------------------

    def _live_bytes(self, conn: sqlite3.Connection) -> int:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def enforce_cap(self, max_bytes: int | None = None) -> int:
        """Evict least recently used vectors until the live pages fit the cap; return how many.

        ``max_bytes`` trims to that size instead (``kenning cache --trim``), once.
        """
        explicit = max_bytes is not None
        cap = int(max_bytes) if max_bytes is not None else self.max_bytes
        removed = 0
        with self._lock:
            conn = self._conn
            if self._live_bytes(conn) <= cap:
                return 0
            target = cap if explicit else int(cap * TRIM_TO)
            with self._write(conn):
                # Deleting rows frees b-tree pages unevenly; a few rounds converge on the target.
                for _ in range(20):
                    live = self._live_bytes(conn)
                    if live <= target:
                        break
                    rows = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
                    if rows == 0:
                        break
                    per_row = max(live / rows, 1.0)
                    n = max(math.ceil((live - target) / per_row), 1)
                    removed += conn.execute(
                        "DELETE FROM vectors WHERE (model, key) IN"
                        " (SELECT model, key FROM vectors ORDER BY used LIMIT ?)",
                        (n,),
                    ).rowcount
            self._release_pages(conn)
        if removed:
            log.info("shared embedding cache: evicted %d least recently used vectors", removed)
        return removed

    @staticmethod
    def _release_pages(conn: sqlite3.Connection) -> None:
        with contextlib.suppress(sqlite3.Error):
            # executescript steps the pragma to completion; execute() frees a single page.
            conn.executescript("PRAGMA incremental_vacuum;")
            # The WAL holds copies of the pages just freed; fold it back so the disk shrinks.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def clear(self) -> int:
        """Remove every vector (every model); safe while other processes use the cache."""
        with self._lock:
            with self._write(self._conn) as conn:
                n = conn.execute("DELETE FROM vectors").rowcount
                conn.execute("DELETE FROM models")
            self._release_pages(self._conn)
        return int(n)

    def usage(self) -> CacheUsage:
        with self._lock:
            conn = self._conn
            models = tuple(
                ModelUsage(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0))
                for r in conn.execute(
                    "SELECT m.identity, m.dim, count(v.key), sum(v.origin = ?) FROM models m"
                    " LEFT JOIN vectors v ON v.model = m.id GROUP BY m.id ORDER BY m.identity",
                    (ORIGIN_PACK,),
                )
            )
        return CacheUsage(
            path=str(self.path),
            bytes=file_bytes(self.path),
            max_bytes=self.max_bytes,
            vectors=sum(m.vectors for m in models),
            models=models,
        )


class ModelCache:
    """The shared vectors of one model identity: look up, add, stamp as used.

    Every method swallows SQLite errors after the first warning (the cache turns itself off for
    this process): a shared cache that fails must cost time, never an index.
    """

    def __init__(self, cache: SharedCache, model_row: int, identity: str, dim: int) -> None:
        self.cache = cache
        self.model_row = model_row
        self.identity = identity
        self.dim = dim
        self.broken: str | None = None
        self._touch: list[bytes] = []

    @property
    def path(self) -> Path:
        return self.cache.path

    def _fail(self, what: str, exc: Exception) -> None:
        if self.broken is None:
            log.warning(
                "shared embedding cache %s: %s failed (%s); off for this process", self.path, what, exc
            )
        self.broken = f"{what} failed: {exc}"

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, tuple[bytes, int]]:
        """The float16 bytes and origin of every key the cache holds (of this model)."""
        found: dict[bytes, tuple[bytes, int]] = {}
        if self.broken is not None or not keys:
            return found
        width = self.dim * 2
        now = int(time.time())
        try:
            with self.cache._lock:
                conn = self.cache._conn
                for start in range(0, len(keys), LOOKUP_BATCH):
                    part = list(keys[start : start + LOOKUP_BATCH])
                    marks = ",".join("?" * len(part))
                    for key, blob, origin, used in conn.execute(
                        f"SELECT key, vector, origin, used FROM vectors WHERE model=? AND key IN ({marks})",
                        (self.model_row, *part),
                    ):
                        if len(blob) != width:
                            continue  # never hand out a vector of the wrong size
                        found[bytes(key)] = (bytes(blob), int(origin))
                        if now - int(used) > TOUCH_AFTER_S:
                            self._touch.append(bytes(key))
        except sqlite3.Error as exc:
            self._fail("a look-up", exc)
            return {}
        if len(self._touch) >= TOUCH_FLUSH_EVERY:
            self.flush()
        return found

    def put(self, keys: Sequence[bytes], vectors: np.ndarray, origin: int = ORIGIN_COMPUTED) -> None:
        """Add vectors (float32 or float16, one row per key); existing rows are only re-stamped."""
        if self.broken is not None or not keys:
            return
        half = np.ascontiguousarray(vectors, dtype=np.float16)
        if half.shape != (len(keys), self.dim):
            raise ValueError(f"vectors of shape {half.shape}, expected {(len(keys), self.dim)}")
        now = int(time.time())
        try:
            self.put_rows(((k, half[i].tobytes()) for i, k in enumerate(keys)), origin, now)
            self.cache.enforce_cap()
        except sqlite3.Error as exc:
            self._fail("a write", exc)

    def put_rows(
        self, rows: Iterator[tuple[bytes, bytes]] | Sequence[tuple[bytes, bytes]], origin: int, now: int
    ) -> None:
        """Insert raw (key, float16 bytes) rows in one transaction; raises sqlite3.Error."""
        with self.cache._lock, self.cache._write(self.cache._conn) as conn:
            conn.executemany(
                "INSERT INTO vectors(model, key, vector, origin, used) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(model, key) DO UPDATE SET used=excluded.used",
                ((self.model_row, k, v, origin, now) for k, v in rows),
            )

    def flush(self) -> None:
        """Write the pending last-use stamps (one transaction)."""
        if self.broken is not None or not self._touch:
            self._touch.clear()
            return
        touch, self._touch = self._touch, []
        now = int(time.time())
        try:
            with self.cache._lock, self.cache._write(self.cache._conn) as conn:
                conn.executemany(
                    "UPDATE vectors SET used=? WHERE model=? AND key=?",
                    ((now, self.model_row, k) for k in touch),
                )
        except sqlite3.Error as exc:
            self._fail("recording use", exc)

    def count(self) -> int:
        with self.cache._lock:
            row = self.cache._conn.execute(
                "SELECT count(*) FROM vectors WHERE model=?", (self.model_row,)
            ).fetchone()
        return int(row[0])
