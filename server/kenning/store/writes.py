"""The store's writes, each on the writer's connection inside its transaction (the indexer
thread only): files, chunks (an unchanged model input keeps its id), symbols, cached vectors and
the meta counters. Mixed into :class:`~kenning.store.db.Database`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from kenning.store.rows import NewChunk, NewSymbol


class Writes:
    """The write half of :class:`~kenning.store.db.Database`; every method takes the open
    transaction's connection (``Database.transaction()``)."""

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
        edit re-embeds and re-inserts only what really changed. Their lexical words are
        rewritten when they differ: a new chunker version may split names into other words
        without changing what the model reads, and the FTS row must follow it.
        """
        old: dict[bytes, list[tuple[int, str]]] = {}
        for cid, key, idents in conn.execute(
            "SELECT id, embed_key, idents FROM chunks WHERE file_id=?", (file_id,)
        ):
            old.setdefault(bytes(key), []).append((cid, idents))
        added: list[int] = []
        for c in chunks:
            same = old.get(c.embed_key)
            if same:
                cid, idents = same.pop()
                conn.execute(
                    "UPDATE chunks SET start_line=?, end_line=?, kind=?, symbol=? WHERE id=?",
                    (c.start_line, c.end_line, c.kind, c.symbol, cid),
                )
                if idents != c.idents:  # the FTS row follows (trigger chunks_au)
                    conn.execute("UPDATE chunks SET idents=? WHERE id=?", (c.idents, cid))
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
        removed = [cid for rows in old.values() for cid, _ in rows]
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

    def delete_meta(self, conn: sqlite3.Connection, *keys: str, prefix: str | None = None) -> None:
        """Remove meta values: the given keys, and every key starting with ``prefix``."""
        conn.executemany("DELETE FROM meta WHERE key=?", [(k,) for k in keys])
        if prefix:
            conn.execute("DELETE FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix))

    def clear_embeddings(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM embeddings")

    def prune_embeddings(self, conn: sqlite3.Connection) -> int:
        """Drop cached vectors no chunk uses; returns how many went."""
        cur = conn.execute("DELETE FROM embeddings WHERE key NOT IN (SELECT embed_key FROM chunks)")
        return cur.rowcount
