"""The lexical half: FTS5 BM25 over chunk text and split identifiers.

Terms that match nearly every chunk are dropped when the query has others, and past a postings
budget the most common of the rest too, so a long descriptive query costs about the same at 100k
chunks as at 20k.
"""

from __future__ import annotations

import logging
import sqlite3
import weakref
from collections.abc import Sequence

from kenning.engine import Engine
from kenning.lexical import query_terms
from kenning.search import tuning

log = logging.getLogger("kenning.search")


class _DocCounts:
    """Document frequencies of query terms, remembered across queries.

    fts5vocab counts a term's documents by walking its whole doclist (1-5 ms per query at 100k
    chunks); the counts only steer which terms to drop, so they are reused until the index has
    grown or shrunk by a twentieth since they were taken.
    """

    def __init__(self) -> None:
        self.total = 0
        self.counts: dict[str, int] = {}


_doc_counts_cache: weakref.WeakKeyDictionary[Engine, _DocCounts] = weakref.WeakKeyDictionary()


def doc_counts(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> dict[str, int]:
    assert engine.db is not None
    cache = _doc_counts_cache.setdefault(engine, _DocCounts())
    if abs(total - cache.total) > 0.05 * max(cache.total, 1) or len(cache.counts) > 100_000:
        cache.counts = {}
        cache.total = total
    counts = cache.counts
    missing = [t for t in terms if t not in counts]
    if missing:
        found = engine.db.term_doc_counts(missing, conn)
        for t in missing:
            counts[t] = found.get(t, 0)
    return {t: counts[t] for t in terms}


def lexical_candidates(
    engine: Engine, conn: sqlite3.Connection, text: str, file_ids: frozenset[int] | None, n: int
) -> list[int]:
    assert engine.db is not None
    terms = query_terms(text)
    if not terms:
        return []
    total = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    if len(terms) > 1 and total >= tuning.COMMON_TERM_MIN_CHUNKS:
        df = doc_counts(engine, conn, terms, total)
        kept = [t for t in terms if df.get(t, 0) <= tuning.COMMON_TERM_SHARE * total]
        if not kept:
            kept = [min(terms, key=lambda t: df.get(t, 0))]
        if sum(df.get(t, 0) for t in kept) > tuning.LEXICAL_POSTINGS_BUDGET:
            chosen: set[str] = set()
            used = 0
            for t in sorted(kept, key=lambda t: df.get(t, 0)):
                if chosen and used + df.get(t, 0) > tuning.LEXICAL_POSTINGS_BUDGET:
                    break
                chosen.add(t)
                used += df.get(t, 0)
            kept = [t for t in kept if t in chosen]
        terms = kept
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
    args: list[object] = [match]
    if file_ids is not None:
        # "+rowid": without the unary plus SQLite hands the IN list to FTS5 as rowid=?
        # lookups and runs the MATCH once per chunk of the filter (97 ms p50, 377 ms max for
        # `email/**` on the standard library); with it, FTS5 walks the matches once and the
        # list filters them (0.7 ms p50, 2.3 ms max).
        sql += " AND +rowid IN (SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?)))"
        args.append("[" + ",".join(map(str, file_ids)) + "]")
    sql += " ORDER BY bm25(chunks_fts, 1.0, 2.0) LIMIT ?"
    args.append(n)
    try:
        return [int(r[0]) for r in conn.execute(sql, args)]
    except sqlite3.OperationalError as exc:
        log.warning("lexical query %r failed: %s", match, exc)
        return []


def rare_terms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str]) -> set[str]:
    """The terms in at most tuning.COMMON_TERM_SHARE of the chunks: a type named in nearly every
    chunk (``Observable`` in RxJS) tells no owner apart."""
    total = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    if total < tuning.COMMON_TERM_MIN_CHUNKS:
        return set(terms)
    df = doc_counts(engine, conn, terms, total)
    return {t for t in terms if df.get(t, 0) <= tuning.COMMON_TERM_SHARE * total}


def lexical_on_own_connection(
    engine: Engine, text: str, file_ids: frozenset[int] | None, n: int
) -> list[int]:
    db = engine.db
    if db is None:  # closed meanwhile
        return []
    return lexical_candidates(engine, db.reader(), text, file_ids, n)
