"""Hybrid search: query → dense and lexical candidates (filters inside both) → fusion → hits.

The dense half over-fetches from the int8 graph and rescores exactly against the stored float16
vectors (int8 alone caps recall near 0.93); when a filter leaves few chunks it scans them exactly
instead. The lexical half is FTS5 BM25 over chunk text plus split identifiers, with terms that
match nearly every chunk dropped when the query has others. Ranks are fused with weighted
reciprocal rank fusion plus a boost for query words that name the chunk's definition.

One module per stage: ``types`` (the query, its checks, hits), ``filters``, ``bm25`` (the
lexical half), ``dense`` (the dense half), ``fusion`` and ``preview``, ``hybrid`` (the
:class:`Searcher` each engine owns, holding the caches and threads that outlive one query, and
``search`` / ``similar``, which run through it); the ranking's constants live in ``tuning``. The
SQL is the store's; positions are lines and code points (the LSP layer converts to UTF-16).
"""

from __future__ import annotations

from kenning.search.fusion import fuse
from kenning.search.hybrid import Searcher, search, similar
from kenning.search.types import (
    Hit,
    SearchCancelled,
    SearchError,
    SearchQuery,
    SearchResponse,
    path_spec,
    validate_query,
)

__all__ = [
    "Hit",
    "SearchCancelled",
    "SearchError",
    "SearchQuery",
    "SearchResponse",
    "Searcher",
    "fuse",
    "path_spec",
    "search",
    "similar",
    "validate_query",
]
