"""Hybrid search: query → dense and lexical candidates (filters inside both) → fusion → hits.

The dense half over-fetches from the int8 graph and rescores exactly against the stored float16
vectors (int8 alone caps recall near 0.93); when a filter leaves few chunks it scans them exactly
instead. The lexical half is FTS5 BM25 over chunk text plus split identifiers, with terms that
match nearly every chunk dropped when the query has others. Ranks are fused with weighted
reciprocal rank fusion plus a boost for query words that name the chunk's definition.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pathspec

from kenning.engine import Engine
from kenning.languages import is_known_language
from kenning.lexical import name_parts, query_terms
from kenning.query import SearchMode, limit_problem, mode_problem, query_text_problem
from kenning.store.rows import ChunkRow
from kenning.store.vectors import EXACT_SEARCH_LIMIT
from kenning.types import KenningError, ShouldStop
from kenning.workspace import stored_path_is_plain

log = logging.getLogger(__name__)

PREVIEW_CHARS = 300
# Tuned with `python -m bench` (docstring-first-sentence queries against the docstring-free
# standard library, 27k chunks): RRF_K 20 -> 5 raised hybrid MRR@10 from 0.463 to 0.478 on 300
# queries and by 0.015-0.018 on held-out halves; the other constants were already at their best.
RRF_K = 5
DENSE_WEIGHT = 1.0
LEXICAL_WEIGHT = 0.7
NAME_BOOST = 1.0 / (RRF_K + 1)
# Tuned with `python -m bench.multilang` (Go, Rust and TypeScript standard-library-sized
# samples, held-out halves; docs/performance.md): for queries shaped like identifiers (see
# _identifier_like) the lexical half weighs 1.4 (identifier MRR@10 on held-out halves: Go
# 0.916 -> 0.924, Rust 0.748 -> 0.771, TypeScript 0.812 -> 0.872 with the owner boost below).
IDENTIFIER_LEXICAL_WEIGHT = 1.4
# Added to the name boost when the query names the definition's owner (type, class, receiver)
# by a term that is not in most chunks: Rust descriptive held-out 0.331 -> 0.356, no language
# lower by more than 0.003.
OWNER_BOOST = 0.1
# A name part at least this long also spells a query word it begins: code abbreviates what a
# sentence spells out (`uninit` / "uninitialized", `alloc` / "allocator", `buf` / "buffer").
# Descriptive MRR@10 (tune/held-out halves, bench.multilang): Python 0.527/0.649 ->
# 0.535/0.660, Go 0.635/0.542 -> 0.651/0.554, Rust 0.415/0.343 -> 0.431/0.389; identifiers equal.
NAME_PREFIX_MIN = 3
# Chunk kinds the chunker gives import-only windows and licence/preamble comments: left out of
# the dense half and of Find Similar (unless the selection is one), still found lexically.
BOILERPLATE_KINDS = frozenset({"imports", "preamble"})
# A term in more than this share of chunks ranks nothing and makes bm25 score every chunk.
COMMON_TERM_SHARE = 0.2
COMMON_TERM_MIN_CHUNKS = 500  # in a small index every term is cheap, and dropping one hurts
# bm25 scores every chunk that matches any term, so the lexical half costs about half a
# microsecond per posting. Past this many postings the most common of the remaining terms are
# dropped too (the rarest always stays): a long descriptive query against 100k chunks stays
# near what it costs against 20k.
LEXICAL_POSTINGS_BUDGET = 7_500


class SearchError(KenningError, ValueError):
    """The query cannot be run as given (e.g. an unknown language); the message says why."""


class SearchCancelled(Exception):
    """The caller asked to stop between stages."""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str
    limit: int = 20
    mode: SearchMode = "hybrid"
    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: int
    path: str
    start_line: int
    end_line: int
    score: float
    preview: str
    symbol: str | None
    kind: str
    language: str
    dense_rank: int | None
    lexical_rank: int | None
    end_character: int = 0  # length of the last line in UTF-16 units (LSP columns)


@dataclass(slots=True)
class SearchResponse:
    hits: list[Hit] = field(default_factory=list)
    lexical_only: bool = False
    notes: list[str] = field(default_factory=list)


def validate_query(query: SearchQuery) -> None:
    problem = mode_problem(query.mode) or limit_problem(query.limit) or query_text_problem(query.text)
    if problem is not None:
        raise SearchError(problem)
    unknown = [lang for lang in query.languages if not is_known_language(lang)]
    if unknown:
        raise SearchError(f"unknown language {unknown[0]!r} (see `kenning languages` for the list)")
    path_spec(query.paths)


def path_spec(paths: Sequence[str]) -> pathspec.GitIgnoreSpec:
    """The ``paths`` filter compiled, or a SearchError naming the glob that cannot be one."""
    for glob in paths:
        if not isinstance(glob, str) or "\0" in glob:
            raise SearchError(f"path filter {glob!r} is not a glob")
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except Exception as exc:  # pathspec raises its own error types and re.error
            raise SearchError(f"path filter {glob!r} is not a valid glob ({exc})") from None
    return pathspec.GitIgnoreSpec.from_lines(list(paths))


class _FilterCache:
    """File-id sets per filter, valid for one engine generation (filters repeat as users type);
    and, for the few most recent small filters, their chunks' stored vectors, valid while the
    graph is unchanged too (fetching ~1,000 vectors from SQLite took ~4 ms per query)."""

    MAX_VECTOR_SETS = 2

    def __init__(self) -> None:
        self.generation = -1
        self.sets: dict[tuple[object, ...], frozenset[int]] = {}
        self.vectors_version = -1
        self.vector_sets: dict[frozenset[int], tuple[list[int], np.ndarray]] = {}

    def get(self, engine: Engine, key: tuple[object, ...]) -> frozenset[int] | None:
        if self.generation != engine.generation:
            self.generation = engine.generation
            self.sets.clear()
            self.vector_sets.clear()
        return self.sets.get(key)

    def vectors(self, engine: Engine, file_ids: frozenset[int]) -> tuple[list[int], np.ndarray] | None:
        version = engine.vectors.version if engine.vectors is not None else -1
        if self.vectors_version != version or self.generation != engine.generation:
            self.vectors_version = version
            self.vector_sets.clear()
            return None
        return self.vector_sets.get(file_ids)

    def keep_vectors(self, file_ids: frozenset[int], found: tuple[list[int], np.ndarray]) -> None:
        if len(self.vector_sets) >= self.MAX_VECTOR_SETS:
            self.vector_sets.pop(next(iter(self.vector_sets)))
        self.vector_sets[file_ids] = found


# Owned per engine object (weakly: a closed folder's cache goes with its engine). Keyed by
# id(engine) before, a folder reopened at the same address got another folder's file ids.
_filter_caches: weakref.WeakKeyDictionary[Engine, _FilterCache] = weakref.WeakKeyDictionary()
_filter_caches_lock = threading.Lock()


def _filter_cache(engine: Engine) -> _FilterCache:
    with _filter_caches_lock:
        cache = _filter_caches.get(engine)
        if cache is None:
            cache = _filter_caches[engine] = _FilterCache()
        return cache


def _filtered_file_ids(engine: Engine, conn: sqlite3.Connection, query: SearchQuery) -> frozenset[int] | None:
    if not (query.paths or query.languages or query.extensions):
        return None
    key = (query.paths, query.languages, query.extensions)
    cache = _filter_cache(engine)
    cached = cache.get(engine, key)
    if cached is not None:
        return cached
    rows = conn.execute("SELECT id, path, language FROM files WHERE skip_reason IS NULL").fetchall()
    if query.languages:
        langs = set(query.languages)
        rows = [r for r in rows if r[2] in langs]
    if query.extensions:
        exts = tuple("." + e.lstrip(".").lower() for e in query.extensions)
        rows = [r for r in rows if r[1].lower().endswith(exts)]
    if query.paths:
        spec = path_spec(query.paths)
        rows = [r for r in rows if spec.match_file(r[1])]
    ids = frozenset(int(r[0]) for r in rows)
    cache.sets[key] = ids
    return ids


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


def _doc_counts(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str], total: int) -> dict[str, int]:
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


def _lexical(
    engine: Engine, conn: sqlite3.Connection, text: str, file_ids: frozenset[int] | None, n: int
) -> list[int]:
    assert engine.db is not None
    terms = query_terms(text)
    if not terms:
        return []
    total = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    if len(terms) > 1 and total >= COMMON_TERM_MIN_CHUNKS:
        df = _doc_counts(engine, conn, terms, total)
        kept = [t for t in terms if df.get(t, 0) <= COMMON_TERM_SHARE * total]
        if not kept:
            kept = [min(terms, key=lambda t: df.get(t, 0))]
        if sum(df.get(t, 0) for t in kept) > LEXICAL_POSTINGS_BUDGET:
            chosen: set[str] = set()
            used = 0
            for t in sorted(kept, key=lambda t: df.get(t, 0)):
                if chosen and used + df.get(t, 0) > LEXICAL_POSTINGS_BUDGET:
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


def _dense(
    engine: Engine,
    conn: sqlite3.Connection,
    qvec: np.ndarray,
    file_ids: frozenset[int] | None,
    n: int,
    exclude: frozenset[int] = frozenset(),
) -> list[tuple[int, float]]:
    assert engine.db is not None and engine.vectors is not None
    if file_ids is not None and not exclude:
        cached = _filter_cache(engine).vectors(engine, file_ids)
        if cached is not None:
            return _top(qvec, *cached, n)
    if file_ids is not None:
        candidates = [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
                ("[" + ",".join(map(str, file_ids)) + "]",),
            )
        ]
        candidates = [c for c in candidates if c not in exclude]
        if len(candidates) <= EXACT_SEARCH_LIMIT:
            found = engine.db.vectors_for(candidates, conn)
            if not exclude and len(found[0]) == len(candidates):  # all embedded: keep them
                _filter_cache(engine).keep_vectors(file_ids, found)
            return _top(qvec, *found, n)
        allowed = set(candidates)
        fetch = min(len(engine.vectors), max(n * 4, 64) * max(1, len(engine.vectors) // len(allowed)))
    else:
        allowed = None
        fetch = max(n * 4, 64)
    keys, _ = engine.vectors.search(qvec, fetch + len(exclude))
    ids = [int(k) for k in keys if (allowed is None or int(k) in allowed) and int(k) not in exclude]
    return _exact(engine, conn, qvec, ids, n)


def _exact(
    engine: Engine, conn: sqlite3.Connection, qvec: np.ndarray, ids: Sequence[int], n: int
) -> list[tuple[int, float]]:
    assert engine.db is not None
    found, vecs = engine.db.vectors_for(ids, conn)
    return _top(qvec, found, vecs, n)


def _top(qvec: np.ndarray, found: list[int], vecs: np.ndarray, n: int) -> list[tuple[int, float]]:
    if not found:
        return []
    sims = vecs @ qvec.astype(np.float32)
    order = np.argsort(-sims)[:n]
    return [(found[i], float(sims[i])) for i in order]


def _preview(text: str, terms: Sequence[str]) -> str:
    lines = text.split("\n")
    best, best_hits = 0, 0
    lowered = [t.lower() for t in terms if len(t) > 1]
    if lowered:
        for i, line in enumerate(lines):
            low = line.lower()
            hits = sum(1 for t in lowered if t in low)
            if hits > best_hits:
                best, best_hits = i, hits
    out: list[str] = []
    size = 0
    for line in lines[best:]:
        stripped = line.strip()
        if not stripped:
            continue
        if size + len(stripped) > PREVIEW_CHARS:
            if not out:
                out.append(_window(stripped, lowered))
            break
        out.append(stripped)
        size += len(stripped) + 1
        if len(out) == 3:
            break
    return "\n".join(out)


def _window(line: str, terms: Sequence[str]) -> str:
    """A preview-sized slice of a long line, around the first query term it contains."""
    low = line.lower()
    at = min((i for i in (low.find(t) for t in terms) if i >= 0), default=0)
    start = max(0, min(at - PREVIEW_CHARS // 3, len(line) - (PREVIEW_CHARS - 2)))
    piece = line[start : start + PREVIEW_CHARS - 2]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(line) else "")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_CODE_WORD = re.compile(r"_*[A-Za-z]\w*?(?:(?:_|\.|::)\w+|[a-z0-9][A-Z]\w*)")


def _identifier_like(text: str) -> bool:
    """One word, or at most three with one shaped like code (``snake_case``, ``camelCase``,
    ``a.b``, ``A::b``)."""
    words = text.split()
    if len(words) == 1:
        return True
    return 0 < len(words) <= 3 and any(_CODE_WORD.fullmatch(w.strip("`()")) for w in words)


def _rare_terms(engine: Engine, conn: sqlite3.Connection, terms: Sequence[str]) -> set[str]:
    """The terms in at most COMMON_TERM_SHARE of the chunks: a type named in nearly every
    chunk (``Observable`` in RxJS) tells no owner apart."""
    total = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    if total < COMMON_TERM_MIN_CHUNKS:
        return set(terms)
    df = _doc_counts(engine, conn, terms, total)
    return {t for t in terms if df.get(t, 0) <= COMMON_TERM_SHARE * total}


def _is_boilerplate(row: ChunkRow) -> bool:
    return row.kind in BOILERPLATE_KINDS


def _spelled(part: str, terms: set[str]) -> bool:
    if part in terms:
        return True
    return len(part) >= NAME_PREFIX_MIN and any(term.startswith(part) for term in terms)


def _name_boost(terms: set[str], symbol: str | None, owner_terms: set[str] | None = None) -> float:
    """Query words that spell the definition's name; ``owner_terms`` (default ``terms``): the
    words that may name its owner."""
    if not symbol or not terms:
        return 0.0
    owner, _, leaf = symbol.rpartition(".")
    parts = set(name_parts(leaf))
    if not parts:
        return 0.0
    common = sum(1 for part in parts if _spelled(part, terms))
    # Half the name at least: "marker" alone must not lift `bom_marker_fn` over the chunk that
    # holds the exact identifier the user typed.
    if common * 2 < len(parts):
        return 0.0
    boost: float = NAME_BOOST * (common / len(parts)) * math.sqrt(common / len(terms))
    if owner and OWNER_BOOST:
        # `Filter next_back`: the owner's name tells same-named methods of sibling types apart.
        owner_parts = set(name_parts(owner.rsplit(".", 1)[-1]))
        if owner_parts and owner_parts <= (terms if owner_terms is None else owner_terms):
            boost += OWNER_BOOST
    return boost


def search(engine: Engine, query: SearchQuery, *, should_stop: ShouldStop | None = None) -> SearchResponse:
    """Run a validated query against one workspace's index."""
    validate_query(query)
    response = SearchResponse()
    text = query.text.strip()
    if not text or engine.db is None:
        return response
    conn = engine.db.reader()
    file_ids = _filtered_file_ids(engine, conn, query)
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
        pending = _HALVES.submit(_lexical_on_own_connection, engine, text, file_ids, n)
        try:
            dense = _dense_half(engine, conn, text, file_ids, n, checkpoint, should_stop, response)
        finally:
            lexical = pending.result()
    elif query.mode in ("hybrid", "lexical"):
        lexical = _lexical(engine, conn, text, file_ids, n)
    checkpoint()
    if query.mode == "semantic" and use_dense:
        dense = _dense_half(engine, conn, text, file_ids, n, checkpoint, should_stop, response)
    if query.mode in ("hybrid", "semantic") and (not use_dense or dense is None):
        # No query vector (embeddings not ready, or the endpoint is down): lexical results.
        dense = []
        response.lexical_only = True
        if not use_dense:
            response.notes.append(engine.model_error or _not_ready(engine))
        if query.mode == "semantic":
            return response
        lexical = lexical or _lexical(engine, conn, text, file_ids, n)
    checkpoint()
    response.hits = fuse(engine, conn, query, text, dense or [], lexical)
    return response


# Runs the lexical half of hybrid queries next to the dense half (two at a time: each thread
# reads through its own SQLite connection, whose page cache counts in the server's memory).
_HALVES = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-lexical")


def _lexical_on_own_connection(
    engine: Engine, text: str, file_ids: frozenset[int] | None, n: int
) -> list[int]:
    db = engine.db
    if db is None:  # closed meanwhile
        return []
    return _lexical(engine, db.reader(), text, file_ids, n)


def _not_ready(engine: Engine) -> str:
    outage = engine.embed_outage
    if outage is not None:
        return f"{outage}: lexical results only (retrying at {outage.retry_text()})"
    return "embeddings are not ready yet: lexical results only"


def _dense_half(
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
    return _dense(engine, conn, qvec, file_ids, n)


def fuse(
    engine: Engine,
    conn: sqlite3.Connection,
    query: SearchQuery,
    text: str,
    dense: Sequence[tuple[int, float]],
    lexical: Sequence[int],
    *,
    keep_boilerplate: bool = False,
) -> list[Hit]:
    assert engine.db is not None
    ids = list(dict.fromkeys([*(cid for cid, _ in dense), *lexical]))
    rows = engine.db.chunks_by_id(ids, conn)
    if not keep_boilerplate:
        # Import blocks and licence headers stay lexically findable, but their vectors sit
        # close to many descriptive queries while saying nothing about what the code does.
        dense = [(cid, sim) for cid, sim in dense if cid in rows and not _is_boilerplate(rows[cid])]
        ids = list(dict.fromkeys([*(cid for cid, _ in dense), *lexical]))
    dense_rank = {cid: i + 1 for i, (cid, _) in enumerate(dense)}
    dense_sim = dict(dense)
    lexical_rank = {cid: i + 1 for i, cid in enumerate(lexical)}
    terms = query_terms(text)
    term_set = set(terms)
    # A typed identifier (`parseHttpHeader`, `Filter next_back`) is what BM25 over split
    # identifiers finds best; a sentence is where the dense half leads.
    lexical_weight = IDENTIFIER_LEXICAL_WEIGHT if _identifier_like(text) else LEXICAL_WEIGHT
    owner_terms = _rare_terms(engine, conn, terms) if OWNER_BOOST and terms else set()
    scored: list[tuple[float, ChunkRow]] = []
    for cid in ids:
        row = rows.get(cid)
        if row is None:  # deleted since the candidate lists were made
            continue
        if query.mode == "semantic":
            score = dense_sim[cid]
        else:
            score = 0.0
            if cid in dense_rank:
                score += DENSE_WEIGHT / (RRF_K + dense_rank[cid])
            if cid in lexical_rank:
                score += lexical_weight / (RRF_K + lexical_rank[cid])
            score += _name_boost(term_set, row.symbol, owner_terms)
        scored.append((score, row))
    scored.sort(key=lambda sr: (-sr[0], sr[1].path, sr[1].start_line))
    hits: list[Hit] = []
    seen_text: set[int] = set()
    spans: dict[str, list[tuple[int, int]]] = {}
    for score, row in scored:
        if not stored_path_is_plain(row.path):
            log.warning("a stored chunk names the path %r, which kenning never writes; left out", row.path)
            continue
        digest = hash(row.text)
        if digest in seen_text:
            continue
        if any(s <= row.end_line and row.start_line <= e for s, e in spans.get(row.path, [])):
            continue
        seen_text.add(digest)
        spans.setdefault(row.path, []).append((row.start_line, row.end_line))
        hits.append(
            Hit(
                chunk_id=row.id,
                path=row.path,
                start_line=row.start_line,
                end_line=row.end_line,
                score=round(score, 6),
                preview=_preview(row.text, terms),
                symbol=row.symbol,
                kind=row.kind,
                language=row.language,
                dense_rank=dense_rank.get(row.id),
                lexical_rank=lexical_rank.get(row.id),
                end_character=_utf16_len(row.text.rsplit("\n", 1)[-1]),
            )
        )
        if len(hits) == query.limit:
            break
    return hits


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
    dense = _dense(engine, conn, qvec, None, max(limit * 3, 30), exclude)
    # Code like an import block is another import block; code like a function is not one.
    wanted_boilerplate = bool(inside) and all(c.kind in BOILERPLATE_KINDS for c in inside)
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
