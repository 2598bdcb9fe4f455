"""What a search query may be, checked in one place for every interface.

The CLI, the language server (``lsp/protocol.py``, as ``-32602`` naming the field), MCP tools and
``search.validate_query`` all ask these functions, so a limit or a mode means the same thing
everywhere and its message is written once. ``editors/vscode/src/protocol.ts`` mirrors the
constants (``SEARCH_MODES``, ``MAX_QUERY_CHARS``, ``MAX_LIMIT``); ``editors/neovim`` its own copy
of ``MAX_QUERY_CHARS``.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "SEARCH_MODES",
    "SearchMode",
    "limit_problem",
    "mode_problem",
    "query_text_problem",
]

# How a query is answered: both halves fused, vectors only, BM25 only (protocol.ts SearchMode).
SearchMode = Literal["hybrid", "semantic", "lexical"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
MAX_LIMIT = 200  # results of one search
MAX_QUERY_CHARS = 1000  # code points of a query's text


def query_text_problem(text: str) -> str | None:
    """Why ``text`` cannot be a query's text (too long), or None."""
    if len(text) > MAX_QUERY_CHARS:
        return f"query is {len(text)} characters; the most is {MAX_QUERY_CHARS}"
    return None


def limit_problem(limit: int) -> str | None:
    """Why ``limit`` (an integer) cannot be a search's limit, or None."""
    if not 1 <= limit <= MAX_LIMIT:
        return f"limit must be between 1 and {MAX_LIMIT}, not {limit}"
    return None


def mode_problem(mode: object) -> str | None:
    """Why ``mode`` is not one of :data:`SEARCH_MODES`, or None."""
    if mode not in SEARCH_MODES:
        return f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}"
    return None
