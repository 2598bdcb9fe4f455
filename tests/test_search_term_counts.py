"""The lexical half counts a term's chunks only as far as its choice of terms needs (a real store):
capped counts agree with FTS5's own vocabulary, are remembered as lower bounds, and the terms
chosen are the ones exact counts would choose."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import update
from kenning.search import tuning
from kenning.search.bm25 import affordable_terms

# Function i holds a word when i is a multiple of its number: 120, 60, 40, 24, ... chunks.
WORDS = {"alpha": 1, "beta": 2, "gamma": 3, "delta": 5, "epsilon": 7, "zeta": 11, "theta": 13, "omega": 97}
FUNCTIONS = 120


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("counts")
    body = []
    for i in range(1, FUNCTIONS + 1):
        words = " ".join(w for w, k in WORDS.items() if i % k == 0)
        body.append(
            f'def handler_{i}(request, payload):\n    """{words}"""\n    values = [request, payload, {i}]\n'
        )
        body.append(f"    total = sum(len(str(v)) for v in values)\n    return total * {i}\n\n\n")
    (root / "handlers.py").write_text("".join(body))
    with Engine(root, Config()).open() as eng:
        update(eng, embed=False)
        yield eng


def exact_counts(engine: Engine, terms: Sequence[str]) -> dict[str, int]:
    """FTS5's own count (its vocabulary table walks every doclist), the reference."""
    assert engine.db is not None
    conn = engine.db.reader()
    rows = conn.execute(
        "SELECT term, doc FROM chunks_vocab WHERE term IN (SELECT value FROM json_each(?))",
        (json.dumps(terms),),
    )
    found = {str(t): int(n) for t, n in rows}
    return {t: found.get(t, 0) for t in terms}


def chosen_with_exact_counts(terms: Sequence[str], df: dict[str, int], total: int) -> list[str]:
    """The rule as it read before counts were capped: drop terms in more than the common share,
    then past the postings budget the most common of the rest; the rarest always stays."""
    kept = [t for t in terms if df[t] <= tuning.COMMON_TERM_SHARE * total] or [min(terms, key=df.__getitem__)]
    if sum(df[t] for t in kept) > tuning.LEXICAL_POSTINGS_BUDGET:
        chosen: set[str] = set()
        used = 0
        for t in sorted(kept, key=df.__getitem__):
            if chosen and used + df[t] > tuning.LEXICAL_POSTINGS_BUDGET:
                break
            chosen.add(t)
            used += df[t]
        kept = [t for t in kept if t in chosen]
    return kept


def test_capped_counts_agree_with_fts5s_vocabulary(engine: Engine) -> None:
    assert engine.db is not None
    terms = [*WORDS, "handler", "request", "missing"]
    exact = exact_counts(engine, terms)
    assert exact["alpha"] >= 100 and exact["omega"] >= 1 and exact["missing"] == 0
    for cap in (1, 7, 30, 1_000):
        assert engine.db.term_doc_counts(terms, cap) == {t: min(n, cap) for t, n in exact.items()}


def test_a_count_that_reached_its_cap_is_recounted_only_when_asked_further(engine: Engine) -> None:
    assert engine.db is not None
    conn = engine.db.reader()
    total = engine.db.max_chunk_id(conn)
    exact = exact_counts(engine, ["beta", "theta"])
    counts = engine.searcher().doc_counts
    assert counts.of(engine.db, conn, ["beta", "theta"], total, 5) == {"beta": 5, "theta": 5}
    assert counts.counts["beta"] == (5, False)
    assert counts.of(engine.db, conn, ["beta"], total, 3) == {"beta": 3}  # known to be past 3
    assert counts.of(engine.db, conn, ["beta", "theta"], total, 10_000) == exact
    assert counts.counts["theta"] == (exact["theta"], True)
    assert counts.rarest(engine.db, conn, ["alpha", "gamma", "beta"], total, 2) == "gamma"


@pytest.mark.parametrize(
    ("budget", "share"), [(7_500, 0.2), (60, 0.2), (30, 0.5), (25, 0.1), (5, 0.9), (1, 0.2)]
)
@pytest.mark.parametrize(
    "terms",
    [
        ["alpha", "beta", "gamma", "delta"],
        ["beta", "alpha"],
        ["alpha", "handler", "request"],
        ["gamma", "zeta", "theta", "omega", "missing"],
        ["delta", "epsilon", "beta", "gamma"],
    ],
)
def test_the_terms_chosen_are_those_exact_counts_choose(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, budget: int, share: float, terms: list[str]
) -> None:
    assert engine.db is not None
    monkeypatch.setattr(tuning, "LEXICAL_POSTINGS_BUDGET", budget)
    monkeypatch.setattr(tuning, "COMMON_TERM_SHARE", share)
    conn = engine.db.reader()
    total = engine.db.max_chunk_id(conn)
    engine.searcher().doc_counts.counts.clear()  # each case from nothing, as a new term would be
    exact = exact_counts(engine, terms)
    assert affordable_terms(engine, conn, terms, total) == chosen_with_exact_counts(terms, exact, total)
    # No count went past what the choice needed: the budget, or while finding the rarest of
    # terms all past it, twice the budget or twice the rarest's count.
    highest = max(n for n, _ in engine.searcher().doc_counts.counts.values())
    assert highest <= max(2 * (budget + 1), 2 * min(exact.values()))
