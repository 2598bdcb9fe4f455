"""Workspace symbols: fuzzy search over every definition the chunker found.

The fuzzy index lives in memory and is rebuilt lazily when the store has changed since it was
built, so a burst of saves costs one rebuild at the next query, not one per save.
"""

from __future__ import annotations

import array
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kenning.engine import Engine
from kenning.fuzzy import FuzzyIndex
from kenning.store.rows import SymbolRow
from kenning.workspace import stored_path_is_plain


@dataclass(frozen=True, slots=True)
class SymbolHit:
    symbol: SymbolRow
    score: float


class _Symbols:
    """Every symbol of a store as columns: one list or array per field, repeated strings (paths,
    kinds, containers) shared. At 71k symbols a row object per symbol took 34 MB; this ~6 MB."""

    __slots__ = ("containers", "ids", "kinds", "lines", "names", "paths")

    def __init__(self, rows: Iterable[tuple[Any, ...]]) -> None:
        shared: dict[str, str] = {}
        ids: list[int] = []
        names: list[str] = []
        paths: list[str] = []
        kinds: list[str] = []
        containers: list[str | None] = []
        lines = array.array("q")
        for sid, path, name, kind, container, start, end, name_line, name_col in rows:
            ids.append(sid)
            names.append(name)
            paths.append(shared.setdefault(path, path))
            kinds.append(shared.setdefault(kind, kind))
            containers.append(None if container is None else shared.setdefault(container, container))
            lines.extend((start, end, name_line, name_col))
        self.ids = np.asarray(ids, dtype=np.int64)
        self.names = names
        self.paths = paths
        self.kinds = kinds
        self.containers = containers
        self.lines = np.frombuffer(lines, dtype=np.int64).reshape(-1, 4)

    def tie_order(self) -> list[int]:
        """Per symbol, its place among symbols of the same name: public containers before
        private ones, then shallower (path directories plus container levels) first."""
        cache: dict[tuple[str, str | None], int] = {}
        out: list[int] = []
        for path, container in zip(self.paths, self.containers, strict=True):
            key = (path, container)
            tie = cache.get(key)
            if tie is None:
                parts = [*path.split("/"), *(container.split(".") if container else ())]
                private = any(_is_private(part) for part in parts)
                tie = cache[key] = (4096 if private else 0) + min(len(parts), 4095)
            out.append(tie)
        return out

    def row(self, i: int) -> SymbolRow:
        start, end, name_line, name_col = (int(v) for v in self.lines[i])
        return SymbolRow(
            id=int(self.ids[i]),
            path=self.paths[i],
            name=self.names[i],
            kind=self.kinds[i],
            container=self.containers[i],
            start_line=start,
            end_line=end,
            name_line=name_line,
            name_col=name_col,
        )


def _is_private(part: str) -> bool:
    """``_impl``, ``_pydecimal.py``, Go's ``internal`` directories; not ``__init__.py``."""
    return (part.startswith("_") and not part.startswith("__")) or part == "internal"


class SymbolSearch:
    """Fuzzy symbol lookup for one engine, cached per store generation."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._generation = -1
        self._symbols: _Symbols | None = None
        self._index: FuzzyIndex | None = None

    def _current(self) -> tuple[_Symbols, FuzzyIndex]:
        with self._lock:
            gen = self.engine.generation
            if self._symbols is None or self._index is None or gen != self._generation:
                assert self.engine.db is not None
                symbols = _Symbols(self.engine.db.iter_symbols())
                self._symbols = symbols
                self._index = FuzzyIndex(symbols.names, ties=symbols.tie_order())
                self._generation = gen
            return self._symbols, self._index

    def find(self, query: str, limit: int) -> list[SymbolHit]:
        symbols, index = self._current()
        hits = [SymbolHit(symbols.row(i), score) for i, score in index.search(query, limit)]
        # A path kenning never writes (absolute, "..") can only come from a planted database file.
        return [h for h in hits if stored_path_is_plain(h.symbol.path)]
