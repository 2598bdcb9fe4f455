"""The dense half: the query's vector, then the int8 graph over-fetched and rescored exactly.

The graph is over-fetched and its candidates rescored against the stored float16 vectors (int8
alone caps recall near 0.93); when a filter leaves few chunks they are scanned exactly instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import numpy as np

from kenning.engine import Engine
from kenning.search import tuning
from kenning.search.types import SearchCancelled, SearchResponse
from kenning.store.vectors import EXACT_SEARCH_LIMIT
from kenning.types import ShouldStop


def dense_candidates(
    engine: Engine,
    conn: sqlite3.Connection,
    qvec: np.ndarray,
    file_ids: frozenset[int] | None,
    n: int,
    exclude: frozenset[int] = frozenset(),
) -> list[tuple[int, float]]:
    assert engine.db is not None and engine.vectors is not None
    if file_ids is not None and not exclude:
        cached = engine.searcher().filters.vectors(engine, file_ids)
        if cached is not None:
            return top(qvec, *cached, n)
    if file_ids is not None:
        candidates = [c for c in engine.db.chunk_ids_in_files(file_ids, conn) if c not in exclude]
        if len(candidates) <= EXACT_SEARCH_LIMIT:
            found = engine.db.vectors_for(candidates, conn)
            if not exclude and len(found[0]) == len(candidates):  # all embedded: keep them
                engine.searcher().filters.keep_vectors(file_ids, found)
            return top(qvec, *found, n)
        allowed = set(candidates)
        fetch = min(len(engine.vectors), max(n * 4, 64) * max(1, len(engine.vectors) // len(allowed)))
    else:
        allowed = None
        fetch = max(n * 4, 64)
    keys, _ = engine.vectors.search(qvec, fetch + len(exclude))
    ids = [int(k) for k in keys if (allowed is None or int(k) in allowed) and int(k) not in exclude]
    return exact(engine, conn, qvec, ids, n)


def exact(
    engine: Engine, conn: sqlite3.Connection, qvec: np.ndarray, ids: Sequence[int], n: int
) -> list[tuple[int, float]]:
    assert engine.db is not None
    found, vecs = engine.db.vectors_for(ids, conn)
    return top(qvec, found, vecs, n)


def top(qvec: np.ndarray, found: list[int], vecs: np.ndarray, n: int) -> list[tuple[int, float]]:
    if not found:
        return []
    sims = vecs @ qvec.astype(np.float32)
    order = np.argsort(-sims)[:n]
    return [(found[i], float(sims[i])) for i in order]


def not_ready(engine: Engine) -> str:
    outage = engine.embed_outage
    if outage is not None:
        return f"{outage}: lexical results only (retrying at {outage.retry_text()})"
    return "embeddings are not ready yet: lexical results only"


def dense_half(
    engine: Engine,
    conn: sqlite3.Connection,
    text: str,
    file_ids: frozenset[int] | None,
    n: int,
    checkpoint: Callable[[], None],
    should_stop: ShouldStop | None,
    response: SearchResponse,
) -> list[tuple[int, float]] | None:
    """Dense candidates, or None (with a note) when the query cannot be embedded now."""
    from kenning.embedding import EmbeddingCancelled
    from kenning.embedding.backend import EmbeddingUnavailable, RemoteBackend
    from kenning.embedding.endpoint import EndpointError

    encoder = engine.encoder()
    assert encoder is not None
    try:
        if isinstance(encoder, RemoteBackend):
            qvec = encoder.embed_query(text, should_stop)  # a newer query aborts the request
        else:
            qvec = encoder.embed_query(text)
    except EmbeddingCancelled:
        raise SearchCancelled from None
    except (EmbeddingUnavailable, EndpointError) as exc:
        # An endpoint outage must cost a query its dense half, never its answer.
        retry = f" (retrying at {exc.retry_text()})" if isinstance(exc, EmbeddingUnavailable) else ""
        response.notes.append(f"{exc}: lexical results only{retry}")
        return None
    checkpoint()
    return dense_candidates(engine, conn, away_from_centroid(engine, qvec), file_ids, n)


def away_from_centroid(engine: Engine, qvec: np.ndarray) -> np.ndarray:
    """The query vector less ``tuning.CENTROID_WEIGHT`` times the mean of the workspace's chunk
    vectors: what every chunk of this workspace shares (its language, its library's vocabulary)
    ranks none of them above another, yet the chunks that are little more than that share sit
    near every query. Each chunk's score becomes its cosine less the weight times its cosine
    with the mean."""
    if not tuning.CENTROID_WEIGHT or engine.vectors is None:
        return qvec
    centroid = engine.vectors.centroid()
    if centroid is None:
        return qvec
    return (np.asarray(qvec, dtype=np.float32) - tuning.CENTROID_WEIGHT * centroid).astype(np.float32)
