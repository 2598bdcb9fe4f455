"""The lexical half: FTS5 BM25 over chunk text and split identifiers.

A sentence's word the index does not hold is joined by its base forms that it does ("delays"
finds `delay`). Terms that match nearly every chunk are dropped when the query has others, and
past a postings budget the most common of the rest too, so a long descriptive query costs about
the same at 100k chunks as at 20k. The SQL is the store's (``store.search_rows``); this module
chooses the terms.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kenning.engine import Engine
from kenning.lexical import identifier_like, query_terms, word_forms
from kenning.search import tuning
from kenning.store.db import Database


class DocCounts:
    """Document frequencies of query terms, remembered across queries (one per engine, in its
    :class:`~kenning.search.hybrid.Searcher`).

    fts5vocab counts a term's documents by walking its whole doclist (1-5 ms per query at 100k
    chunks); the counts only steer which terms to drop, so they are reused until the index has
    grown or shrunk by a twentieth since they were taken.
    """

    def __init__(self) -> None:
        self.total = 0
        self.counts: dict[str, int] = {}

    def of(self, db: Database, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> dict[str, int]:
        """The number of chunks each term is in; ``total``: the highest chunk id now."""
        if abs(total - self.total) > 0.05 * max(self.total, 1) or len(self.counts) > 100_000:
            self.counts = {}
            self.total = total
        counts = self.counts
        missing = [t for t in terms if t not in counts]
        if missing:
            found = db.term_doc_counts(missing, conn)
            for t in missing:
                counts[t] = found.get(t, 0)
        return {t: counts[t] for t in terms}


def lexical_candidates(
    engine: Engine,
    conn: sqlite3.Connection,
    text: str,
    file_ids: frozenset[int] | None,
    n: int,
    *,
    total: int | None = None,
) -> list[int]:
    """The ``n`` best BM25 matches for ``text``'s terms, best first. ``total``: the highest
    chunk id, read once per query by the caller (read here when not given)."""
    db = engine.db
    assert db is not None
    terms = query_terms(text)
    if not terms:
        return []
    if total is None:
        total = db.max_chunk_id(conn)
    if not identifier_like(text):
        terms = known_forms(engine, conn, terms, total)
    if len(terms) > 1 and total >= tuning.COMMON_TERM_MIN_CHUNKS:
        df = engine.searcher().doc_counts.of(db, conn, terms, total)
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
    return db.bm25_chunk_ids(terms, file_ids, n, conn)


def known_forms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> list[str]:
    """``terms`` plus, for each the index does not hold, its base forms that it does
    (``word_forms``): "Delays the emission" finds `delay`. The unknown term stays, in case
    the counts, which lag the index, missed it."""
    assert engine.db is not None
    counts = engine.searcher().doc_counts
    df = counts.of(engine.db, conn, terms, total)
    forms = {t: word_forms(t) for t in terms if not df.get(t)}
    if not any(forms.values()):
        return list(terms)
    found = counts.of(engine.db, conn, [f for fs in forms.values() for f in fs], total)
    out: dict[str, None] = {}
    for t in terms:
        out.setdefault(t, None)
        for f in forms.get(t, ()):
            if found.get(f):
                out.setdefault(f, None)
    return list(out)


def rare_terms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> set[str]:
    """The terms in at most tuning.COMMON_TERM_SHARE of the chunks: a type named in nearly every
    chunk (``Observable`` in RxJS) tells no owner apart. ``total``: the highest chunk id."""
    if total < tuning.COMMON_TERM_MIN_CHUNKS:
        return set(terms)
    assert engine.db is not None
    df = engine.searcher().doc_counts.of(engine.db, conn, terms, total)
    return {t for t in terms if df.get(t, 0) <= tuning.COMMON_TERM_SHARE * total}


def lexical_on_own_connection(
    engine: Engine, text: str, file_ids: frozenset[int] | None, n: int, total: int
) -> list[int]:
    db = engine.db
    if db is None:  # closed meanwhile
        return []
    return lexical_candidates(engine, db.reader(), text, file_ids, n, total=total)
