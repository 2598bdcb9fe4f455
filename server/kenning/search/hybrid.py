"""A query against one workspace's index (filters, both halves side by side, fusion), and Find
Similar (the dense half from a selection).
"""

from __future__ import annotations

import concurrent.futures

import numpy as np

from kenning.engine import Engine
from kenning.search import tuning
from kenning.search.bm25 import lexical_candidates, lexical_on_own_connection
from kenning.search.dense import dense_candidates, dense_half, not_ready
from kenning.search.filters import filtered_file_ids
from kenning.search.fusion import fuse
from kenning.search.types import SearchCancelled, SearchQuery, SearchResponse, validate_query
from kenning.types import ShouldStop


def search(engine: Engine, query: SearchQuery, *, should_stop: ShouldStop | None = None) -> SearchResponse:
    """Run a validated query against one workspace's index."""
    validate_query(query)
    response = SearchResponse()
    text = query.text.strip()
    if not text or engine.db is None:
        return response
    conn = engine.db.reader()
    file_ids = filtered_file_ids(engine, conn, query)
    if file_ids is not None and not file_ids:
        response.notes.append("no indexed file matches the filters")
        return response

    def checkpoint() -> None:
        if should_stop is not None and should_stop():
            raise SearchCancelled

    n = max(query.limit * 3, 30)
    lexical: list[int] = []
    dense: list[tuple[int, float]] | None = []
    use_dense = query.mode in ("hybrid", "semantic") and engine.dense_available()
    if query.mode == "hybrid" and use_dense:
        # The two halves overlap: SQLite (bm25) and onnxruntime (the query vector) both release
        # the GIL, so on two cores the lexical half costs little on top of the dense one.
        pending = _HALVES.submit(lexical_on_own_connection, engine, text, file_ids, n)
        try:
            dense = dense_half(engine, conn, text, file_ids, n, checkpoint, should_stop, response)
        finally:
            lexical = pending.result()
    elif query.mode in ("hybrid", "lexical"):
        lexical = lexical_candidates(engine, conn, text, file_ids, n)
    checkpoint()
    if query.mode == "semantic" and use_dense:
        dense = dense_half(engine, conn, text, file_ids, n, checkpoint, should_stop, response)
    if query.mode in ("hybrid", "semantic") and (not use_dense or dense is None):
        # No query vector (embeddings not ready, or the endpoint is down): lexical results.
        dense = []
        response.lexical_only = True
        if not use_dense:
            response.notes.append(engine.model_error or not_ready(engine))
        if query.mode == "semantic":
            return response
        lexical = lexical or lexical_candidates(engine, conn, text, file_ids, n)
    checkpoint()
    response.hits = fuse(engine, conn, query, text, dense or [], lexical)
    return response


# Runs the lexical half of hybrid queries next to the dense half (two at a time: each thread
# reads through its own SQLite connection, whose page cache counts in the server's memory).
_HALVES = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-lexical")


def similar(
    engine: Engine,
    path: str,
    start_line: int,
    end_line: int,
    *,
    limit: int = 20,
    selected_text: str | None = None,
) -> SearchResponse:
    """Code like the given lines: the chunks nearest to them, the selection itself excluded."""
    response = SearchResponse()
    db = engine.db
    if db is None:
        return response
    if not engine.dense_available():
        response.lexical_only = True
        response.notes.append(engine.model_error or "embeddings are not ready yet")
        return response
    conn = db.reader()
    row = db.file_by_path(path, conn)
    own = db.chunks_of_file(row.id, conn) if row else []
    inside = [c for c in own if c.start_line <= end_line and start_line <= c.end_line]
    encoder = engine.encoder()
    assert encoder is not None
    from kenning.embedding.backend import EmbeddingUnavailable
    from kenning.embedding.endpoint import EndpointError

    try:
        if selected_text and selected_text.strip():
            qvec = encoder.embed_documents([f"{path}\n{selected_text}"])[0]
        elif inside:
            _, vecs = db.vectors_for([c.id for c in inside], conn)
            if len(vecs) == 0:
                qvec = encoder.embed_documents([f"{path}\n" + "\n".join(c.text for c in inside)])[0]
            else:
                qvec = vecs.mean(axis=0)
                qvec /= max(float(np.linalg.norm(qvec)), 1e-9)
        else:
            return response
    except (EmbeddingUnavailable, EndpointError) as exc:
        response.lexical_only = True
        response.notes.append(str(exc))
        return response
    exclude = frozenset(c.id for c in inside)
    dense = dense_candidates(engine, conn, qvec, None, max(limit * 3, 30), exclude)
    # Code like an import block is another import block; code like a function is not one.
    wanted_boilerplate = bool(inside) and all(c.kind in tuning.BOILERPLATE_KINDS for c in inside)
    # The selection's own lines never come back, whatever chunk they sit in.
    rows = db.chunks_by_id([cid for cid, _ in dense], conn)
    dense = [
        (cid, s)
        for cid, s in dense
        if cid in rows
        and not (
            rows[cid].path == path and rows[cid].start_line <= end_line and start_line <= rows[cid].end_line
        )
    ]
    q = SearchQuery(text="", limit=limit, mode="semantic")
    response.hits = fuse(engine, conn, q, "", dense, [], keep_boilerplate=wanted_boilerplate)
    return response
