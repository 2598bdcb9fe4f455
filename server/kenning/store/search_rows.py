"""The store's reads that only a search makes: the indexed files a filter chooses from, the chunks
of chosen files, how many chunks hold a term, and the chunks that FTS5 ranks for a set of terms
(BM25). Mixed into :class:`~kenning.store.db.Database`, beside ``Queries`` (whose
``max_chunk_id``, ``chunks_by_id`` and ``vectors_for`` a search uses too).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection, Sequence
from typing import NamedTuple

log = logging.getLogger(__name__)


class IndexedFile(NamedTuple):
    """A file the index holds chunks of (not skipped): what the path / language / extension
    filters choose from."""

    id: int
    path: str
    language: str | None


def _json_ids(ids: Collection[int]) -> str:
    return "[" + ",".join(map(str, ids)) + "]"


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``, each quoted as one string (no FTS5 syntax)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SearchReads:
    """The search half of :class:`~kenning.store.db.Database`'s reads. ``conn`` as in
    ``Queries``: a connection to read through, None for this thread's reader."""

    # Provided by Queries, which Database mixes in before this class.
    def _r(self, conn: sqlite3.Connection | None) -> sqlite3.Connection:
        raise NotImplementedError

    def indexed_files(self, conn: sqlite3.Connection | None = None) -> list[IndexedFile]:
        return [
            IndexedFile(int(r[0]), str(r[1]), r[2])
            for r in self._r(conn).execute("SELECT id, path, language FROM files WHERE skip_reason IS NULL")
        ]

    def chunk_ids_in_files(
        self, file_ids: Collection[int], conn: sqlite3.Connection | None = None
    ) -> list[int]:
        """The ids of the chunks of the given files (in the order SQLite finds them)."""
        return [
            int(r[0])
            for r in self._r(conn).execute(
                "SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
                (_json_ids(file_ids),),
            )
        ]

    def name_lines(
        self, file_ids: Collection[int], name: str, conn: sqlite3.Connection | None = None
    ) -> dict[int, list[tuple[int, str | None]]]:
        """Where the given files define a symbol called ``name``: ``(name line, container)``
        pairs by file id (the container is the enclosing type or receiver, None at top level)."""
        out: dict[int, list[tuple[int, str | None]]] = {}
        for file_id, line, container in self._r(conn).execute(
            "SELECT file_id, name_line, container FROM symbols"
            " WHERE file_id IN (SELECT value FROM json_each(?)) AND name = ?",
            (_json_ids(file_ids), name),
        ):
            out.setdefault(int(file_id), []).append((int(line), container))
        return out

    def definitions(
        self, file_id: int, conn: sqlite3.Connection | None = None
    ) -> list[tuple[str, int, int, int]]:
        """``(name, first line, last line, name line)`` of each definition in a file that a
        chunk can be a piece of or hold (``search.fusion.piece_of``): not fields, which lie in
        bodies without cutting them (a Python method's ``self.timeout = …``)."""
        return [
            (str(name), int(start), int(end), int(line))
            for name, start, end, line in self._r(conn).execute(
                "SELECT name, start_line, end_line, name_line FROM symbols"
                " WHERE file_id = ? AND kind != 'field'",
                (file_id,),
            )
        ]

    def term_doc_counts(
        self, terms: Sequence[str], cap: int, conn: sqlite3.Connection | None = None
    ) -> dict[str, int]:
        """The number of chunks holding each term, counted up to ``cap``: FTS5 walks a term's
        doclist to count it (about 80 ns a chunk), and a million-chunk index holds words in half
        its chunks; the caller asks only as far as its decision needs."""
        c = self._r(conn)
        return {
            t: int(
                c.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                    (fts_match([t]), cap),
                ).fetchone()[0]
            )
            for t in dict.fromkeys(terms)
        }

    def bm25_chunk_ids(
        self,
        terms: Sequence[str],
        file_ids: Collection[int] | None,
        limit: int,
        conn: sqlite3.Connection | None = None,
    ) -> list[int]:
        """The ``limit`` chunks that best match any of ``terms`` by BM25 (the text column weighs
        1, the split identifiers 2), best first; only chunks of ``file_ids`` unless None. An
        FTS5 error (a term it cannot parse) is logged and answers nothing."""
        match = fts_match(terms)
        sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
        args: list[object] = [match]
        if file_ids is not None:
            # "+rowid": without the unary plus SQLite hands the IN list to FTS5 as rowid=?
            # lookups and runs the MATCH once per chunk of the filter (97 ms p50, 377 ms max for
            # `email/**` on the standard library); with it, FTS5 walks the matches once and the
            # list filters them (0.7 ms p50, 2.3 ms max).
            sql += " AND +rowid IN (SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?)))"
            args.append(_json_ids(file_ids))
        sql += " ORDER BY bm25(chunks_fts, 1.0, 2.0) LIMIT ?"
        args.append(limit)
        try:
            return [int(r[0]) for r in self._r(conn).execute(sql, args)]
        except sqlite3.OperationalError as exc:
            log.warning("lexical query %r failed: %s", match, exc)
            return []
