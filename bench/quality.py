"""Retrieval quality on the standard library with its docstrings removed.

Each query is the first sentence of a function's docstring; the indexed copy no longer holds
that docstring, so the query must be matched against the code itself (its name, its calls,
its comments). A result is relevant when it is in the function's file and its lines overlap
the function's (a window of a long function, or the small class that holds it, counts).
Scored as MRR@10, Recall@1 and Recall@10 per mode, through ``kenning.search.search``.

The same candidate lists are then re-fused under other fusion constants (search.py's RRF_K,
DENSE_WEIGHT, LEXICAL_WEIGHT, NAME_BOOST, COMMON_TERM_SHARE) to tune them: on a share of the
queries (``TUNE_QUERIES``, at most half), reported on all the others too, so a tuned value that
only fits its own queries shows.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.corpus import DocQuery

K = 10


@dataclass(frozen=True, slots=True)
class Scores:
    mrr10: float
    recall1: float
    recall10: float
    n: int
    # Per query, the rank of its first relevant hit in the top K (0: none), in query order: the
    # paired comparison of two runs is per query, not of their means.
    ranks: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, float]:
        return {"mrr@10": self.mrr10, "recall@1": self.recall1, "recall@10": self.recall10, "n": self.n}


def _relevant(hit: Any, q: DocQuery) -> bool:
    return any(
        hit.path == path and hit.start_line <= end and hit.end_line >= start
        for path, start, end in ((q.path, q.start_line, q.end_line), *q.also)
    )


def first_relevant(hits: Sequence[Any], q: DocQuery) -> int:
    """The 1-based rank of the first hit in the top K that answers ``q``; 0 when none does."""
    return next((rank for rank, hit in enumerate(hits[:K], 1) if _relevant(hit, q)), 0)


def score(ranked: Sequence[Sequence[Any]], queries: Sequence[DocQuery]) -> Scores:
    ranks = tuple(first_relevant(hits, q) for hits, q in zip(ranked, queries, strict=True))
    n = max(len(queries), 1)
    return Scores(
        sum(1.0 / r for r in ranks if r) / n,
        sum(r == 1 for r in ranks) / n,
        sum(r > 0 for r in ranks) / n,
        len(queries),
        ranks,
    )


def build_index(root: Path, store: Path, variant: str, base_db: Path | None) -> dict[str, Any]:
    """Index ``root`` into ``store`` with the given graph; the embedding cache is first filled
    with the base index's vectors of identical model inputs (the same graph made them, so they
    are what the model would return)."""
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.indexer import embed_pending, scan

    started = time.perf_counter()
    with Engine(root, Config(store=store, model_variant=variant)) as engine:
        scan(engine)
        reused = 0
        if base_db is not None:
            reused = _reuse_vectors(engine, base_db)
        report = embed_pending(engine)
        st = engine.status()
    return {
        "chunks": st.chunks,
        "embedded_now": report.embedded,
        "reused": reused,
        "seconds": time.perf_counter() - started,
        "variant": variant,
    }


def _reuse_vectors(engine: Any, base_db: Path) -> int:
    db = engine.db
    enc = engine.bind_model()
    base = sqlite3.connect(f"file:{base_db}?mode=ro", uri=True)
    try:
        if enc is None or base.execute("SELECT value FROM meta WHERE key='model_id'").fetchone() != (
            enc.model_id,
        ):
            return 0
    finally:
        base.close()
    db.writer.execute("ATTACH DATABASE ? AS base", (str(base_db),))
    try:
        with db.transaction() as conn:
            return int(
                conn.execute(
                    "INSERT OR IGNORE INTO embeddings(key, vector) SELECT e.key, e.vector"
                    " FROM base.embeddings e WHERE e.key IN (SELECT embed_key FROM main.chunks)"
                ).rowcount
            )
    finally:
        db.writer.execute("DETACH DATABASE base")


@contextlib.contextmanager
def open_engine(root: Path, store: Path, variant: str) -> Iterator[Any]:
    from kenning.config import Config
    from kenning.engine import Engine

    with Engine(root, Config(store=store, model_variant=variant)) as engine:
        engine.prepare_vectors()
        yield engine


@contextlib.contextmanager
def query_adapter_off(engine: Any) -> Iterator[None]:
    """Queries get the model's own vectors meanwhile (the before of the adapter's A/B)."""
    encoder = engine.encoder()
    saved = getattr(encoder, "query_adapter", None)
    if saved is not None:
        encoder.query_adapter = None
    try:
        yield
    finally:
        if saved is not None:
            encoder.query_adapter = saved


def evaluate(engine: Any, queries: Sequence[DocQuery], modes: Sequence[str]) -> dict[str, Scores]:
    from kenning.search import SearchQuery, search

    out: dict[str, Scores] = {}
    for mode in modes:
        ranked = [search(engine, SearchQuery(text=q.query, limit=K, mode=mode)).hits for q in queries]
        out[mode] = score(ranked, queries)
    return out


# -- tuning fusion ----------------------------------------------------------------------------

FUSION_KEYS = ("RRF_K", "DENSE_WEIGHT", "LEXICAL_WEIGHT", "NAME_BOOST", "COMMON_TERM_SHARE")


@contextlib.contextmanager
def fusion(**values: float) -> Iterator[None]:
    from kenning.search import tuning as s

    saved = {k: getattr(s, k) for k in values}
    try:
        for k, v in values.items():
            setattr(s, k, v)
        yield
    finally:
        for k, v in saved.items():
            setattr(s, k, v)


def current_fusion() -> dict[str, float]:
    from kenning.search import tuning as s

    return {k: float(getattr(s, k)) for k in FUSION_KEYS}


#: Queries the fusion grid is searched on: every grid point runs each of them, so the search's
#: cost grows with this; the check on the rest is one run per point reported.
TUNE_QUERIES = 150


def tune(
    engine: Any,
    queries: Sequence[DocQuery],
    *,
    seed: int = 21,
    grid: dict[str, Sequence[float]] | None = None,
    tune_count: int = TUNE_QUERIES,
) -> dict[str, Any]:
    """Grid-search the fusion constants on ``tune_count`` of the queries (at most half; hybrid
    MRR@10) and check the defaults and the best point on all the others."""
    from kenning.search import SearchQuery, fuse
    from kenning.search.bm25 import lexical_candidates
    from kenning.search.dense import dense_candidates

    order = list(range(len(queries)))
    random.Random(seed).shuffle(order)
    tuned = min(tune_count, len(order) // 2)
    tune_q = [queries[i] for i in order[:tuned]]
    held_q = [queries[i] for i in order[tuned:]]
    conn = engine.db.reader()
    encoder = engine.encoder()
    n = K * 3
    dense = {
        q: dense_candidates(engine, conn, encoder.embed_query(q.query), None, max(n, 30)) for q in queries
    }
    grid = grid or {
        "COMMON_TERM_SHARE": (0.05, 0.1, 0.2, 0.4),
        "RRF_K": (2, 5, 10, 20, 40),
        "LEXICAL_WEIGHT": (0.3, 0.45, 0.7, 1.0, 1.4),
        "boost": (0.0, 0.5, 1.0, 2.0),
    }
    lexical_cache: dict[tuple[float, DocQuery], list[int]] = {}

    def run(point: dict[str, float], qs: Sequence[DocQuery]) -> float:
        share = point["COMMON_TERM_SHARE"]
        ranked = []
        values = {
            "RRF_K": point["RRF_K"],
            "DENSE_WEIGHT": 1.0,
            "LEXICAL_WEIGHT": point["LEXICAL_WEIGHT"],
            "NAME_BOOST": point["boost"] / (point["RRF_K"] + 1),
            "COMMON_TERM_SHARE": share,
        }
        with fusion(**values):
            for q in qs:
                key = (share, q)
                if key not in lexical_cache:
                    lexical_cache[key] = lexical_candidates(engine, conn, q.query, None, max(n, 30))
                query = SearchQuery(text=q.query, limit=K, mode="hybrid")
                ranked.append(fuse(engine, conn, query, q.query, dense[q], lexical_cache[key]))
        return score(ranked, qs).mrr10

    now = current_fusion()
    default = {
        "COMMON_TERM_SHARE": now["COMMON_TERM_SHARE"],
        "RRF_K": now["RRF_K"],
        "LEXICAL_WEIGHT": now["LEXICAL_WEIGHT"] / now["DENSE_WEIGHT"],
        "boost": now["NAME_BOOST"] * (now["RRF_K"] + 1),
    }
    names = list(grid)
    results = []
    for combo in itertools.product(*(grid[k] for k in names)):
        point = dict(zip(names, combo, strict=True))
        results.append((run(point, tune_q), point))
    results.sort(key=lambda r: -r[0])
    best = results[0][1]
    return {
        "tune_queries": len(tune_q),
        "held_out_queries": len(held_q),
        "points": len(results),
        "default": {**default, "tune_mrr": run(default, tune_q), "held_mrr": run(default, held_q)},
        "best": {**best, "tune_mrr": results[0][0], "held_mrr": run(best, held_q)},
        "top5": [{**p, "tune_mrr": m} for m, p in results[:5]],
    }
