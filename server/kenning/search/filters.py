"""The path / language / extension filters: the file ids they leave, cached per engine generation
in the engine's :class:`~kenning.search.hybrid.Searcher`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Protocol, cast

import numpy as np

from kenning.engine import Engine
from kenning.search.types import SearchQuery, path_spec
from kenning.store.rows import FileRow

# The most changed files whose membership is re-judged in the cached sets; past it they are
# computed again (judging every path: ~0.3 s at 100,000 files, after every save).
CHANGED_FILES_MAX = 1_000


class _Row(Protocol):
    """A stored file as a filter judges it (a files row, or ``IndexedFile``)."""

    @property
    def path(self) -> str: ...

    @property
    def language(self) -> str | None: ...


def _selects(key: tuple[object, ...]) -> Callable[[_Row], bool]:
    """Whether a file belongs to the filter ``key`` (paths, languages, extensions)."""
    paths, languages, extensions = cast("tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]", key)
    spec = path_spec(paths) if paths else None
    langs = set(languages) if languages else None
    exts = tuple("." + e.lstrip(".").lower() for e in extensions) if extensions else None

    def selects(r: _Row) -> bool:
        return (
            (langs is None or r.language in langs)
            and (exts is None or r.path.lower().endswith(exts))
            and (spec is None or spec.match_file(r.path))
        )

    return selects


class FilterCache:
    """File-id sets per filter, valid for one engine generation (filters repeat as users type)
    and carried to the next when it names the few files it changed (a save): only those are
    judged again; and, for the few most recent small filters, their chunks' stored vectors,
    valid while the graph is unchanged too (fetching ~1,000 vectors from SQLite took ~4 ms per
    query)."""

    MAX_VECTOR_SETS = 2

    def __init__(self) -> None:
        self.generation = -1
        self.sets: dict[tuple[object, ...], frozenset[int]] = {}
        self.vectors_version = -1
        self.vector_sets: dict[frozenset[int], tuple[list[int], np.ndarray]] = {}

    def get(self, engine: Engine, key: tuple[object, ...], conn: sqlite3.Connection) -> frozenset[int] | None:
        generation = engine.generation
        if self.generation != generation:
            changed = engine.changed_since(self.generation) if self.sets else None
            if changed is not None and len(changed) <= CHANGED_FILES_MAX and engine.db is not None:
                # Ids are never reused, and a file keeps its id while it stays: a deleted file's
                # id may stay in a set, where no chunk has it any more.
                rows = list(engine.db.files_at(changed, conn).values())
                self.sets = {k: _rejudged(k, ids, rows) for k, ids in self.sets.items()}
            else:
                self.sets.clear()
            self.generation = generation
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


def _rejudged(key: tuple[object, ...], ids: frozenset[int], rows: list[FileRow]) -> frozenset[int]:
    """``ids`` with the membership of the files in ``rows`` judged again."""
    selects = _selects(key)
    out = set(ids)
    for r in rows:
        if r.skip_reason is None and selects(r):
            out.add(r.id)
        else:
            out.discard(r.id)
    return frozenset(out)


def filtered_file_ids(engine: Engine, conn: sqlite3.Connection, query: SearchQuery) -> frozenset[int] | None:
    if not (query.paths or query.languages or query.extensions):
        return None
    assert engine.db is not None
    key = (query.paths, query.languages, query.extensions)
    cache = engine.searcher().filters
    cached = cache.get(engine, key, conn)
    if cached is not None:
        return cached
    selects = _selects(key)
    ids = frozenset(r.id for r in engine.db.indexed_files(conn) if selects(r))
    cache.sets[key] = ids
    return ids
