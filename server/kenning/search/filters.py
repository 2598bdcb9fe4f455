"""The path / language / extension filters: the file ids they leave, cached per engine generation."""

from __future__ import annotations

import sqlite3
import threading
import weakref

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


# Owned per engine object (weakly: a closed folder's cache goes with its engine). Keyed by
# id(engine) before, a folder reopened at the same address got another folder's file ids.
_caches: weakref.WeakKeyDictionary[Engine, FilterCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def filter_cache(engine: Engine) -> FilterCache:
    with _caches_lock:
        cache = _caches.get(engine)
        if cache is None:
            cache = _caches[engine] = FilterCache()
        return cache


def filtered_file_ids(engine: Engine, conn: sqlite3.Connection, query: SearchQuery) -> frozenset[int] | None:
    if not (query.paths or query.languages or query.extensions):
        return None
    key = (query.paths, query.languages, query.extensions)
    cache = filter_cache(engine)
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
