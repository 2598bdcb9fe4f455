"""Workspace symbols: fuzzy search over every definition the chunker found.

The fuzzy index lives in memory and is rebuilt lazily when the store has changed since it was
built, so a burst of saves costs one rebuild at the next query, not one per save.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kenning.engine import Engine
from kenning.fuzzy import FuzzyIndex
from kenning.store.db import SymbolRow


@dataclass(frozen=True, slots=True)
class SymbolHit:
    symbol: SymbolRow
    score: float


class SymbolSearch:
    """Fuzzy symbol lookup for one engine, cached per store generation."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._generation = -1
        self._rows: list[SymbolRow] = []
        self._index: FuzzyIndex | None = None

    def _current(self) -> tuple[list[SymbolRow], FuzzyIndex]:
        with self._lock:
            gen = self.engine.generation
            if self._index is None or gen != self._generation:
                assert self.engine.db is not None
                rows = self.engine.db.all_symbols()
                self._rows = rows
                self._index = FuzzyIndex([r.name for r in rows])
                self._generation = gen
            return self._rows, self._index

    def find(self, query: str, limit: int) -> list[SymbolHit]:
        rows, index = self._current()
        return [SymbolHit(rows[i], score) for i, score in index.search(query, limit)]
