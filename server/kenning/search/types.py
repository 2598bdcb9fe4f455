"""What a search is asked and what it answers: the query and its checks, hits, errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pathspec

from kenning.languages import is_known_language
from kenning.query import SearchMode, limit_problem, mode_problem, query_text_problem
from kenning.types import KenningError


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
    # The text of the hit's last line: its range ends at the end of it. Each protocol measures
    # it in its own units (the LSP layer in UTF-16 code units; ``end_column`` in code points).
    last_line: str = ""

    @property
    def end_column(self) -> int:
        """Where the hit's range ends on its last line, in code points."""
        return len(self.last_line)


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
