"""kenning's own LSP messages: method names, parameter validation and result shapes.

The one place that defines the wire format of ``workspace/semanticSearch``, ``kenning/similar``,
``kenning/indexStatus`` and the commands; ``docs/protocol.md`` documents it for client authors and
``editors/vscode/src/protocol.ts`` mirrors it. Params arrive as plain JSON values (kenning's
protocol class keeps them untyped) and are validated here, so a bad request always gets a
``-32602`` reply that names the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from kenning.languages import is_known_language
from kenning.lsp.positions import utf16_len
from kenning.query import MAX_QUERY_CHARS, SearchMode, limit_problem, mode_problem, query_text_problem
from kenning.search import Hit, SearchError, SearchQuery, path_spec
from kenning.types import IndexState, KenningError

__all__ = ["MAX_QUERY_CHARS"]  # re-exported: the LSP layer's one limit on query length

SEMANTIC_SEARCH = "workspace/semanticSearch"
SIMILAR = "kenning/similar"
INDEX_STATUS = "kenning/indexStatus"
CMD_REINDEX = "kenning.reindex"
CMD_STATUS = "kenning.status"
CUSTOM_REQUESTS = frozenset({SEMANTIC_SEARCH, SIMILAR})

STATES = ("scanning", "embedding", "ready", "error")


class InvalidParams(KenningError, ValueError):
    """A request's params are wrong; the message names the field (sent as -32602)."""


@dataclass(frozen=True, slots=True)
class SimilarRequest:
    uri: str
    start_line: int  # 0-based, as on the wire
    start_character: int
    end_line: int
    end_character: int
    limit: int


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParams(f"{name} must be an object, not {_type_name(value)}")
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _limit(params: dict[str, Any], default: int) -> int:
    limit = params.get("limit", default)
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidParams(f"limit must be an integer, not {_type_name(limit)}")
    problem = limit_problem(limit)
    if problem is not None:
        raise InvalidParams(problem)
    return limit


def _string_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidParams(f"{name} must be an array of strings")
    if len(value) > 100:
        raise InvalidParams(f"{name} has {len(value)} entries; the most is 100")
    return tuple(v for v in value if v.strip())


def clean_text(text: str) -> str:
    """Replace lone surrogates (legal in JSON, illegal in UTF-8) so nothing downstream trips."""
    return text.encode("utf-8", "replace").decode("utf-8")


def parse_search_params(params: Any, default_limit: int) -> SearchQuery:
    p = _object(params, "params")
    if "query" not in p:
        raise InvalidParams("query is required")
    query = p["query"]
    if not isinstance(query, str):
        raise InvalidParams(f"query must be a string, not {_type_name(query)}")
    mode = p.get("mode", "hybrid")
    if mode is None:
        mode = "hybrid"
    problem = query_text_problem(query) or mode_problem(mode)
    if problem is not None:
        raise InvalidParams(problem)
    filters = p.get("filters")
    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    if filters is not None:
        f = _object(filters, "filters")
        paths = _string_list(f.get("paths"), "filters.paths")
        for i, glob in enumerate(paths):
            try:
                path_spec([glob])
            except SearchError as exc:
                raise InvalidParams(f"filters.paths[{i}]: {exc}") from None
        languages = _string_list(f.get("languages"), "filters.languages")
        extensions = _string_list(f.get("extensions"), "filters.extensions")
        for lang in languages:
            if not is_known_language(lang):
                raise InvalidParams(f"filters.languages: unknown language {lang!r}")
    return SearchQuery(
        text=clean_text(query),
        limit=_limit(p, default_limit),
        mode=cast(SearchMode, mode),  # mode_problem accepted it
        paths=paths,
        languages=languages,
        extensions=extensions,
    )


def _position(value: Any, name: str) -> tuple[int, int]:
    pos = _object(value, name)
    line, char = pos.get("line"), pos.get("character")
    for field_name, v in (("line", line), ("character", char)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidParams(f"{name}.{field_name} must be a non-negative integer")
    return int(line), int(char)  # type: ignore[arg-type]


def parse_similar_params(params: Any, default_limit: int) -> SimilarRequest:
    p = _object(params, "params")
    doc = _object(p.get("textDocument"), "textDocument")
    uri = doc.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams("textDocument.uri must be a string")
    rng = _object(p.get("range"), "range")
    start = _position(rng.get("start"), "range.start")
    end = _position(rng.get("end"), "range.end")
    if end < start:
        raise InvalidParams("range.end is before range.start")
    return SimilarRequest(uri, start[0], start[1], end[0], end[1], _limit(p, default_limit))


# -- wire payloads, named like the interfaces of protocol.ts (optional keys in a total=False half:
# NotRequired needs Python 3.11) ---------------------------------------------------------------


class Position(TypedDict):
    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class _SearchSymbolRequired(TypedDict):
    name: str
    kind: str


class SearchSymbol(_SearchSymbolRequired, total=False):
    containerName: str


class MatchRanks(TypedDict):
    denseRank: int | None
    lexicalRank: int | None


class _SearchHitRequired(TypedDict):
    uri: str
    range: Range
    score: float
    preview: str
    language: str
    match: MatchRanks


class SearchHit(_SearchHitRequired, total=False):
    symbol: SearchSymbol


class VectorOrigin(TypedDict):
    computed: int
    store: int
    sharedCache: int
    pack: int


class SharedCacheInfo(TypedDict):
    enabled: bool
    bytes: int
    maxBytes: int


class _IndexStatusRequired(TypedDict):
    folder: str
    state: IndexState
    files: int
    chunks: int
    embedded: int
    pending: int
    skipped: int


class IndexStatus(_IndexStatusRequired, total=False):
    message: str
    embeddingEndpoint: str  # the host that receives the folder's code, when not local
    origin: VectorOrigin
    sharedCache: SharedCacheInfo


class IndexStatusReport(IndexStatus):
    """One folder in the answer of ``kenning.status``."""

    reindexJobs: int


def hit_to_wire(hit: Hit, uri: str) -> SearchHit:
    last_line = hit.end_line - 1
    result: SearchHit = {
        "uri": uri,
        "range": {
            "start": {"line": hit.start_line - 1, "character": 0},
            "end": {"line": last_line, "character": utf16_len(hit.last_line)},
        },
        "score": hit.score,
        "preview": hit.preview,
        "language": hit.language,
        "match": {"denseRank": hit.dense_rank, "lexicalRank": hit.lexical_rank},
    }
    if hit.symbol:
        container, _, name = hit.symbol.rpartition(".")
        symbol: SearchSymbol = {"name": name, "kind": hit.kind}
        if container:
            symbol["containerName"] = container
        result["symbol"] = symbol
    return result


def status_to_wire(folder_uri: str, status: Any) -> IndexStatus:
    out: IndexStatus = {
        "folder": folder_uri,
        "state": status.state,
        "files": status.files,
        "chunks": status.chunks,
        "embedded": status.embedded,
        "pending": status.pending,
        "skipped": status.skipped,
    }
    if status.message:
        out["message"] = status.message
    if getattr(status, "embedder", None):
        out["embeddingEndpoint"] = status.embedder  # the host that receives code
    origin = getattr(status, "origin", None)
    if origin is not None:
        # Where the folder's vectors came from (additive fields: older clients ignore them).
        out["origin"] = {
            "computed": origin.get("computed", 0),
            "store": origin.get("store", 0),
            "sharedCache": origin.get("shared_cache", 0),
            "pack": origin.get("pack", 0),
        }
    shared = getattr(status, "shared_cache", None)
    if shared is not None:
        out["sharedCache"] = {
            "enabled": bool(shared.get("enabled")),
            "bytes": shared.get("bytes", 0),
            "maxBytes": shared.get("max_bytes", 0),
        }
    return out
