"""The user's working set: which files get their vectors first while a large index embeds.

Embedding a fresh monorepo takes minutes to hours; the files the user works on should be
semantically searchable within seconds. The order is: the files the editor has open (the most
recently opened first), then the indexed files by most recent modification time (edits, new
files, a checkout's changed files), then everything else in the order it was scanned.

``git status`` is deliberately not asked: it re-reads modified files through the repository's
clean filters (``filter.<driver>.clean`` / ``.process``), which are programs the repository
configures, and kenning never runs those (docs/security.md). A file edited but not yet
committed has a recent modification time anyway.

Nothing here imports pygls: the language server feeds ``opened`` from ``textDocument/didOpen``,
and every long-running interface (LSP, MCP) gets the modification-time order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kenning.engine import Engine

# The editor's open files kept (most recent ones); more than this is not a working set.
MAX_OPENED = 64
# Indexed files taken by most recent modification time: enough for a feature branch's changes,
# few enough that the ordering query stays cheap at a million files.
RECENT_FILES = 200


class WorkingSet:
    """The files the editor has open, most recently opened first; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._opened: dict[str, None] = {}  # insertion order: the most recent last

    def opened(self, path: str) -> None:
        """The editor opened ``path`` (relative to the folder, as the store spells it)."""
        with self._lock:
            self._opened.pop(path, None)
            self._opened[path] = None
            while len(self._opened) > MAX_OPENED:
                del self._opened[next(iter(self._opened))]

    def paths(self) -> list[str]:
        with self._lock:
            return list(reversed(self._opened))


def recently_modified(engine: Engine, limit: int = RECENT_FILES) -> list[str]:
    """The indexed files with the newest modification times, newest first."""
    db = engine.db
    if db is None or limit <= 0:
        return []
    return db.newest_files(limit)


def embed_order(opened: Sequence[str], recent: Sequence[str]) -> list[str]:
    """Open files first, then recently modified ones, each path once."""
    return list(dict.fromkeys([*opened, *recent]))
