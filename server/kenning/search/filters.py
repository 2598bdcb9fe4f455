"""The path / language / extension filters: the file ids they leave, cached per engine generation
in the engine's :class:`~kenning.search.hybrid.Searcher`."""

from __future__ import annotations

import sqlite3

import numpy as np

from kenning.engine import Engine
from kenning.search.types import SearchQuery, path_spec


class FilterCache:
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


def filtered_file_ids(engine: Engine, conn: sqlite3.Connection, query: SearchQuery) -> frozenset[int] | None:
    if not (query.paths or query.languages or query.extensions):
        return None
    assert engine.db is not None
    key = (query.paths, query.languages, query.extensions)
    cache = engine.searcher().filters
    cached = cache.get(engine, key)
    if cached is not None:
        return cached
    rows = engine.db.indexed_files(conn)
    if query.languages:
        langs = set(query.languages)
        rows = [r for r in rows if r.language in langs]
    if query.extensions:
        exts = tuple("." + e.lstrip(".").lower() for e in query.extensions)
        rows = [r for r in rows if r.path.lower().endswith(exts)]
    if query.paths:
        spec = path_spec(query.paths)
        rows = [r for r in rows if spec.match_file(r.path)]
    ids = frozenset(r.id for r in rows)
    cache.sets[key] = ids
    return ids
