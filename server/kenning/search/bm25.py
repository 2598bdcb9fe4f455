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
    """Document frequencies of query terms, counted only as far as a decision needs and
    remembered across queries (one per engine, in its :class:`~kenning.search.hybrid.Searcher`).

    FTS5 counts a term's chunks by walking its doclist: at a million chunks a common word is
    tens of milliseconds, the tail of a sentence query's latency. The counts only steer which
    terms to drop, so each is taken up to a cap, kept as a lower bound when it reached it, and
    reused until the index has grown or shrunk by a twentieth.
    """

    def __init__(self) -> None:
        self.total = 0
        # term -> (chunks counted, whether that is all of them)
        self.counts: dict[str, tuple[int, bool]] = {}

    def of(
        self, db: Database, conn: sqlite3.Connection, terms: Sequence[str], total: int, cap: int
    ) -> dict[str, int]:
        """The number of chunks each term is in, or ``cap`` if at least that many; ``total``:
        the highest chunk id now."""
        if abs(total - self.total) > 0.05 * max(self.total, 1) or len(self.counts) > 100_000:
            self.counts = {}
            self.total = total
        counts = self.counts
        missing = [t for t in terms if t not in counts or (not counts[t][1] and counts[t][0] < cap)]
        if missing:
            for t, n in db.term_doc_counts(missing, cap, conn).items():
                counts[t] = (n, n < cap)
        return {t: min(counts[t][0], cap) for t in terms}

    def rarest(
        self, db: Database, conn: sqlite3.Connection, terms: Sequence[str], total: int, floor: int
    ) -> str:
        """The term in the fewest chunks (the first of equals), when each is in at least
        ``floor``: counted to a cap that doubles until one term falls short of it, which walks
        about twice the rarest's postings per term rather than every term's."""
        cap = floor
        while True:
            cap *= 2
            df = self.of(db, conn, terms, total, cap)
            if cap > total or any(n < cap for n in df.values()):
                return min(terms, key=df.__getitem__)


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
        terms = affordable_terms(engine, conn, terms, total)
    return db.bm25_chunk_ids(terms, file_ids, n, conn)


def affordable_terms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> list[str]:
    """The terms the lexical half walks, in query order: those in at most COMMON_TERM_SHARE of
    the chunks, rarest first while their postings fit LEXICAL_POSTINGS_BUDGET, the rarest
    always. A term past the budget is walked only when every term is, and then only the
    rarest of all (common or not: nothing rarer is left to rank by), so counts stop there."""
    assert engine.db is not None
    budget = tuning.LEXICAL_POSTINGS_BUDGET
    counts = engine.searcher().doc_counts
    df = counts.of(engine.db, conn, terms, total, budget + 1)
    affordable = min(budget, tuning.COMMON_TERM_SHARE * total)
    cheap = sorted((t for t in terms if df[t] <= affordable), key=df.__getitem__)
    if not cheap:
        return [counts.rarest(engine.db, conn, terms, total, budget + 1)]
    chosen: set[str] = set()
    used = 0
    for t in cheap:
        if chosen and used + df[t] > budget:
            break
        chosen.add(t)
        used += df[t]
    return [t for t in terms if t in chosen]


def known_forms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> list[str]:
    """``terms`` plus, for each the index does not hold, its base forms that it does
    (``word_forms``): "Delays the emission" finds `delay`. The unknown term stays, in case
    the counts, which lag the index, missed it."""
    assert engine.db is not None
    counts = engine.searcher().doc_counts
    # Counted as far as affordable_terms will ask next, so that it finds them remembered.
    cap = tuning.LEXICAL_POSTINGS_BUDGET + 1
    df = counts.of(engine.db, conn, terms, total, cap)
    forms = {t: word_forms(t) for t in terms if not df[t]}
    if not any(forms.values()):
        return list(terms)
    found = counts.of(engine.db, conn, [f for fs in forms.values() for f in fs], total, cap)
    out: dict[str, None] = {}
    for t in terms:
        out.setdefault(t, None)
        for f in forms.get(t, ()):
            if found.get(f):
                out.setdefault(f, None)
    return list(out)


def rare_terms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> set[str]:
    """The terms in at most tuning.OWNER_TERM_SHARE of the chunks: a type named in nearly every
    chunk (``Observable`` in RxJS) tells no owner apart. ``total``: the highest chunk id."""
    if total < tuning.COMMON_TERM_MIN_CHUNKS:
        return set(terms)
    assert engine.db is not None
    common = int(tuning.OWNER_TERM_SHARE * total)
    df = engine.searcher().doc_counts.of(engine.db, conn, terms, total, common + 1)
    return {t for t in terms if df[t] <= common}


def lexical_on_own_connection(
    engine: Engine, text: str, file_ids: frozenset[int] | None, n: int, total: int
) -> list[int]:
    db = engine.db
    if db is None:  # closed meanwhile
        return []
    return lexical_candidates(engine, db.reader(), text, file_ids, n, total=total)
