"""A query against one workspace's index (filters, both halves side by side, fusion), and Find
Similar (the dense half from a selection), run by the engine's :class:`Searcher`, which owns what
outlives one query: the filter and term-count caches and the threads of the lexical half.
"""

from __future__ import annotations

import concurrent.futures
import threading

import numpy as np

from kenning.engine import Engine
from kenning.search import tuning
from kenning.search.aliases import aliased_chunks, written_operators
from kenning.search.bm25 import DocCounts, lexical_candidates, lexical_on_own_connection
from kenning.search.dense import dense_candidates, dense_half, not_ready
from kenning.search.filters import FilterCache, filtered_file_ids
from kenning.search.fusion import fuse
from kenning.search.markup import reader_text
from kenning.search.types import SearchCancelled, SearchQuery, SearchResponse, validate_query
from kenning.types import ShouldStop


def candidates_per_half(limit: int) -> int:
    """How many candidates each half hands fusion for a list of ``limit`` results: the same for
    every limit up to ``tuning.CANDIDATES``, so a shorter list is the start of a longer one."""
    return max(limit, tuning.CANDIDATES)


class Searcher:
    """One engine's searches, and what they keep between queries: the file ids each filter
    leaves (and a few filters' vectors), the terms' document counts, and the two threads that
    run the lexical half beside the dense half (started on the first hybrid query). Made by
    ``Engine.searcher()`` and closed with the engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.filters = FilterCache()
        self.doc_counts = DocCounts()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _halves(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                # Two at a time: each thread reads through its own SQLite connection, whose
                # page cache counts in the server's memory.
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=2, thread_name_prefix="kenning-lexical"
                )
            return self._pool

    def close(self) -> None:
        """Let the lexical threads go (a query still running finishes first)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def search(self, query: SearchQuery, *, should_stop: ShouldStop | None = None) -> SearchResponse:
        """Run a validated query against this engine's index."""
        engine = self.engine
        validate_query(query)
        response = SearchResponse()
        # `{@link Observable}` is the word `Observable`: neither half should search for "link".
        text = reader_text(query.text).strip()
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

        n = candidates_per_half(query.limit)
        total = engine.db.max_chunk_id(conn)  # once per query: both halves and fusion use it
        lexical: list[int] = []
        dense: list[tuple[int, float]] | None = []
        use_dense = query.mode in ("hybrid", "semantic") and engine.dense_available()
        if query.mode == "hybrid" and use_dense:
            # The two halves overlap: SQLite (bm25) and onnxruntime (the query vector) both release
            # the GIL, so on two cores the lexical half costs little on top of the dense one.
            pending = self._halves().submit(lexical_on_own_connection, engine, text, file_ids, n, total)
            try:
                dense = dense_half(engine, conn, text, file_ids, n, checkpoint, should_stop, response)
            finally:
                lexical = pending.result()
        elif query.mode in ("hybrid", "lexical"):
            lexical = lexical_candidates(engine, conn, text, file_ids, n, total=total)
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
            lexical = lexical or lexical_candidates(engine, conn, text, file_ids, n, total=total)
        checkpoint()
        operators = written_operators(text) if query.mode != "semantic" else frozenset()
        aliased = aliased_chunks(engine, conn, operators, file_ids)
        response.hits = fuse(engine, conn, query, text, dense or [], lexical, total=total, aliased=aliased)
        return response

    def similar(
        self,
        path: str,
        start_line: int,
        end_line: int,
        *,
        limit: int = 20,
        selected_text: str | None = None,
    ) -> SearchResponse:
        """Code like the given lines: the chunks nearest to them, the selection itself excluded."""
        engine = self.engine
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
        dense = dense_candidates(engine, conn, qvec, None, candidates_per_half(limit), exclude)
        # Code like an import block is another import block; code like a function is not one.
        wanted_boilerplate = bool(inside) and all(c.kind in tuning.BOILERPLATE_KINDS for c in inside)
        # The selection's own lines never come back, whatever chunk they sit in.
        rows = db.chunks_by_id([cid for cid, _ in dense], conn)
        dense = [
            (cid, s)
            for cid, s in dense
            if cid in rows
            and not (
                rows[cid].path == path
                and rows[cid].start_line <= end_line
                and start_line <= rows[cid].end_line
            )
        ]
        q = SearchQuery(text="", limit=limit, mode="semantic")
        response.hits = fuse(engine, conn, q, "", dense, [], keep_boilerplate=wanted_boilerplate)
        return response


def search(engine: Engine, query: SearchQuery, *, should_stop: ShouldStop | None = None) -> SearchResponse:
    """Run a validated query against one workspace's index (its engine's searcher)."""
    with engine.query_reads():
        return engine.searcher().search(query, should_stop=should_stop)


def similar(
    engine: Engine,
    path: str,
    start_line: int,
    end_line: int,
    *,
    limit: int = 20,
    selected_text: str | None = None,
) -> SearchResponse:
    """Code like the given lines of ``path`` (1-based, inclusive) in one workspace's index."""
    with engine.query_reads():
        return engine.searcher().similar(path, start_line, end_line, limit=limit, selected_text=selected_text)
