"""The store's reads (any thread, each on its own connection unless one is given): meta values,
files, chunks, vectors, symbols, counts, FTS5 vocabulary, integrity checks. Mixed into
:class:`~kenning.store.db.Database`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from kenning.store.rows import ChunkRow, FileRow, PendingChunk, SymbolRow
from kenning.store.schema import EMBEDDED_THROUGH


class Queries:
    """The read half of :class:`~kenning.store.db.Database`. ``conn`` is a connection to read
    through (the writer's, inside a transaction); None means this thread's reader."""

    # Provided by Database.
    writer: sqlite3.Connection | None
    _local: threading.local

    def reader(self) -> sqlite3.Connection:
        raise NotImplementedError

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
        make = FileRow._make
        return {
            r[1]: make(r)
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
    ) -> list[PendingChunk]:
        """Chunks whose model input has no vector yet, in id order, starting after ``after_id``.

        Pass the last id of the previous batch as ``after_id``: starting from the first chunk
        every time re-checks every embedded chunk per batch, which made the embedding loop
        quadratic (7.7 s of CPU for the 30k chunks of the standard library, ~85 s at 100k).
        """
        return [
            PendingChunk(int(r[0]), bytes(r[1]), str(r[2]), str(r[3]), str(r[4]))
            for r in self._r(conn).execute(
                "SELECT c.id, c.embed_key, f.path, c.header, c.text FROM chunks c"
                " JOIN files f ON f.id = c.file_id"
                " WHERE c.id > ?"
                " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)"
                " ORDER BY c.id LIMIT ?",
                (after_id, limit),
            )
        ]

    def max_chunk_id(self, conn: sqlite3.Connection | None = None) -> int:
        """The highest chunk id (0 for none): chunk ids only grow."""
        return int(self._r(conn).execute("SELECT max(id) FROM chunks").fetchone()[0] or 0)

    def embedding_cache_counts(self, conn: sqlite3.Connection | None = None) -> tuple[int, int]:
        """(cached vectors, distinct model inputs the chunks use): how much of the cache is live."""
        c = self._r(conn)
        cached = int(c.execute("SELECT count(*) FROM embeddings").fetchone()[0])
        live = int(c.execute("SELECT count(DISTINCT embed_key) FROM chunks").fetchone()[0])
        return cached, live

    def files_at(self, paths: Iterable[str], conn: sqlite3.Connection | None = None) -> dict[str, FileRow]:
        """The stored rows of ``paths`` (relative, no trailing slash) and, for each one that is
        no stored file, of the files inside it as a directory: what a scan of just those paths
        compares with. One range query on the unique path index per directory ("dir/" < path <
        "dir0", "0" being the byte after "/"), never a pass over every stored path."""
        c = self._r(conn)
        make = FileRow._make
        columns = "SELECT id, path, size, mtime_ns, content_hash, language, skip_reason FROM files"
        wanted = sorted(set(paths))
        listed = c.execute(f"{columns} WHERE path IN (SELECT value FROM json_each(?))", (json.dumps(wanted),))
        rows = {r[1]: make(r) for r in listed}
        for directory in (p for p in wanted if p not in rows):
            below = c.execute(f"{columns} WHERE path > ? AND path < ?", (directory + "/", directory + "0"))
            rows.update((r[1], make(r)) for r in below)
        return rows

    def has_files(self, conn: sqlite3.Connection | None = None) -> bool:
        return self._r(conn).execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None

    def newest_files(self, limit: int, conn: sqlite3.Connection | None = None) -> list[str]:
        """The indexed (not skipped) files with the newest modification times, newest first."""
        rows = self._r(conn).execute(
            "SELECT path FROM files WHERE skip_reason IS NULL ORDER BY mtime_ns DESC LIMIT ?", (limit,)
        )
        return [str(r[0]) for r in rows]

    def pending_chunks_in(
        self, paths: Sequence[str], limit: int, conn: sqlite3.Connection | None = None
    ) -> list[PendingChunk]:
        """Like ``pending_chunks``, for the given files only: in the order of ``paths``, then
        by id (the files the user works on are embedded first)."""
        if not paths or limit <= 0:
            return []
        return [
            PendingChunk(int(r[0]), bytes(r[1]), str(r[2]), str(r[3]), str(r[4]))
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

    def embedded_ids_digest(self, conn: sqlite3.Connection | None = None) -> tuple[int, int, int]:
        """``ids_digest`` of the embedded chunks' ids, without the join over every chunk.

        Chunks up to the ``EMBEDDED_THROUGH`` mark all have vectors (the indexer's invariant,
        which ``counts`` relies on too): those are summed from the ``chunks_file`` index (ids
        only, ~30 ms at 100k chunks, where the join and the set difference took ~0.5 s); the
        few past the mark are looked up in the embedding cache."""
        c = self._r(conn)
        row = c.execute("SELECT value FROM meta WHERE key=?", (EMBEDDED_THROUGH,)).fetchone()
        through = int(row[0]) if row else 0
        count, total, hashed = c.execute(
            "SELECT count(*), coalesce(sum(id), 0), coalesce(sum((id * ?) % ?), 0)"
            " FROM chunks INDEXED BY chunks_file WHERE id <= ?",
            (DIGEST_MULTIPLIER, DIGEST_MODULUS, through),
        ).fetchone()
        above = [
            int(r[0])
            for r in c.execute(
                "SELECT c.id FROM chunks c WHERE c.id > ?"
                " AND EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)",
                (through,),
            )
        ]
        more = ids_digest(np.asarray(above, dtype=np.uint64))
        return int(count) + more[0], int(total) + more[1], int(hashed) + more[2]

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

    def btree_roots(self, names: Iterable[str], conn: sqlite3.Connection | None = None) -> list[int]:
        """The root page numbers of the named tables and indexes (those that exist)."""
        rows = self._r(conn).execute(
            "SELECT rootpage FROM sqlite_schema WHERE name IN (SELECT value FROM json_each(?))",
            (json.dumps(list(names)),),
        )
        return [int(r[0]) for r in rows if r[0]]

    def symbol_file_paths(self, conn: sqlite3.Connection | None = None) -> dict[int, str]:
        """Every indexed file's id and path, for resolving symbols' paths once per file."""
        return {int(r[0]): str(r[1]) for r in self._r(conn).execute("SELECT id, path FROM files")}

    def symbol_file_paths_of(
        self, file_ids: Iterable[int], conn: sqlite3.Connection | None = None
    ) -> dict[int, str]:
        """``symbol_file_paths`` for the given files only."""
        rows = self._r(conn).execute(
            "SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(?))", (_json_ints(file_ids),)
        )
        return {int(r[0]): str(r[1]) for r in rows}

    def symbol_columns(self, conn: sqlite3.Connection | None = None) -> Iterator[tuple[Any, ...]]:
        """Every symbol as ``(id, file_id, name, kind, container, start_line, end_line,
        name_line, name_col)``, by id: one scan of the symbols table, no join: paths are
        resolved once per file (``symbol_file_paths``), not looked up and handed over once per
        symbol (716,781 times at a million chunks)."""
        return iter(
            self._r(conn).execute(
                "SELECT id, file_id, name, kind, container, start_line, end_line, name_line, name_col"
                " FROM symbols ORDER BY id"
            )
        )

    def symbols_of_files(
        self, paths: Iterable[str], conn: sqlite3.Connection | None = None
    ) -> list[tuple[Any, ...]]:
        """The symbols of the files stored at ``paths``, rows as ``symbol_columns`` gives them."""
        return list(
            self._r(conn).execute(
                "SELECT id, file_id, name, kind, container, start_line, end_line, name_line, name_col"
                " FROM symbols WHERE file_id IN"
                " (SELECT id FROM files WHERE path IN (SELECT value FROM json_each(?))) ORDER BY id",
                (json.dumps(sorted(paths)),),
            )
        )

    def symbols_matching(
        self, pattern: str, prefix: str, limit: int, conn: sqlite3.Connection | None = None
    ) -> list[tuple[Any, ...]]:
        """Up to ``limit`` symbols whose name is ``LIKE pattern`` (escape ``\\``), names that
        are ``LIKE prefix`` first, then shortest: the interim answer while the fuzzy index
        builds. Rows as ``symbol_columns`` gives them."""
        return list(
            self._r(conn).execute(
                "SELECT id, file_id, name, kind, container, start_line, end_line, name_line, name_col"
                " FROM symbols WHERE name LIKE ? ESCAPE '\\'"
                " ORDER BY name LIKE ? ESCAPE '\\' DESC, length(name), name, id LIMIT ?",
                (pattern, prefix, limit),
            )
        )

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


# A multiplicative hash of a chunk id, summed: with the count and the plain sum it tells two id
# sets apart unless an adversary picks them (the full comparison runs whenever they differ).
DIGEST_MULTIPLIER = 2_654_435_761
DIGEST_MODULUS = 4_294_967_291  # the largest prime below 2**32: id * multiplier fits in int64


def ids_digest(ids: np.ndarray) -> tuple[int, int, int]:
    """(count, sum, sum of hashed ids) of a set of chunk ids, as ``embedded_ids_digest``."""
    ids = np.asarray(ids, dtype=np.uint64)
    hashed = (ids * np.uint64(DIGEST_MULTIPLIER)) % np.uint64(DIGEST_MODULUS)
    return len(ids), int(ids.sum(dtype=np.uint64)), int(hashed.sum(dtype=np.uint64))


def _json_ints(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _json_strs(values: Iterable[str]) -> str:
    return json.dumps(list(values))
