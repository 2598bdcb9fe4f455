"""Workspace symbols: fuzzy search over every definition the chunker found.

The fuzzy index lives in memory. It is built on a background thread: when a folder's scan ends
(``warm``), and again when a query finds the store changed since the last build, so a burst of
saves costs one rebuild, not one per save. When the store can say which files changed since the
build (``Engine.changed_since``: a save, a few files from a branch switch), only those files are
read again: the built index stays, its rows for them are hidden, and a small index of their
symbols now answers beside it — at 200,000 symbols a full rebuild took ~0.9 s of CPU after every
save (a second of a core, competing with the save's own indexing and the user's searches; at a
million, seconds), the changed files' index a few milliseconds. Past ``CHANGED_FILES_MAX`` files
the whole index is built again. A query never waits for a build longer than it is
told to: past that it is answered from SQL (names containing the query's characters in order,
ranked by the same fuzzy rules over those candidates), which is current but may miss a
word-boundary match the full ranking would have put above the candidates' cap. At a million
chunks the build is seconds of CPU; the editor's symbol box should not freeze for it.
"""

from __future__ import annotations

import array
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kenning.chunking.model import CALLABLE_KINDS, TYPE_KINDS
from kenning.engine import Engine
from kenning.fuzzy import FuzzyIndex
from kenning.memory import release_free_memory
from kenning.store.rows import SymbolRow
from kenning.workspace import stored_path_is_plain

log = logging.getLogger(__name__)

# How long a query waits for a build under way before answering from SQL: a small workspace's
# build ends well within it, so its answers never change; a monorepo's does not.
QUERY_WAIT_S = 0.3
# The most candidates the interim SQL answer ranks: prefix matches first, then shortest names.
INTERIM_CANDIDATES = 2_000
# The most changed files answered beside the built index before it is built again.
CHANGED_FILES_MAX = 1_000


@dataclass(frozen=True, slots=True)
class SymbolHit:
    symbol: SymbolRow
    score: float


class _Symbols:
    """Every symbol of a store as columns: one list or array per field, repeated strings (names,
    paths, kinds, containers) shared. At 71k symbols a row object per symbol took 34 MB; this ~6 MB."""

    __slots__ = ("containers", "ids", "kinds", "lines", "names", "paths")

    def __init__(self, rows: Iterable[tuple[Any, ...]], file_paths: Mapping[int, str]) -> None:
        """``rows`` as ``Database.symbol_columns`` gives them; ``file_paths`` by file id."""
        shared: dict[str, str] = {}
        ids: list[int] = []
        names: list[str] = []
        paths: list[str] = []
        kinds: list[str] = []
        containers: list[str | None] = []
        lines = array.array("q")
        last_file, path = -1, ""
        for sid, file_id, name, kind, container, start, end, name_line, name_col in rows:
            if file_id != last_file:  # a file's symbols are written together: ids run by file
                last_file, path = file_id, file_paths.get(file_id, "")
            ids.append(sid)
            names.append(shared.setdefault(name, name))  # __init__, get, run: one string each
            paths.append(path)
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
        """Per symbol, its place among symbols of the same name (see ``_tie``)."""
        cache: dict[tuple[str, str | None, str], int] = {}
        out: list[int] = []
        for path, container, kind in zip(self.paths, self.containers, self.kinds, strict=True):
            key = (path, container, kind)
            tie = cache.get(key)
            if tie is None:
                tie = cache[key] = _tie(path, container, kind)
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


# Among equally named and equally deep symbols: types, then functions, then values, then a
# type's members (a field named ``name`` after the ``name()`` functions). Unknown kinds last.
_KIND_TIE: Final[dict[str, int]] = {
    **dict.fromkeys(TYPE_KINDS | {"module", "namespace"}, 0),
    **dict.fromkeys(CALLABLE_KINDS | {"macro"}, 1),
    **dict.fromkeys(("constant", "variable"), 2),
    **dict.fromkeys(("field", "property", "event", "enum_member"), 3),
}
_UNKNOWN_KIND_TIE: Final = max(_KIND_TIE.values()) + 1


def _tie(path: str, container: str | None, kind: str) -> int:
    """A symbol's place among symbols of the same name: public containers before private ones,
    then shallower (path directories plus container levels) first, then by kind (``_KIND_TIE``)."""
    parts = [*path.split("/"), *(container.split(".") if container else ())]
    private = any(_is_private(part) for part in parts)
    depth = min(len(parts), 4095)
    kind_tie = _KIND_TIE.get(kind, _UNKNOWN_KIND_TIE)
    return ((4096 if private else 0) + depth) * (_UNKNOWN_KIND_TIE + 1) + kind_tie


@dataclass(frozen=True, slots=True)
class _Changed:
    """The files changed since the built index was: their rows there hidden, their symbols now."""

    paths: frozenset[str]
    symbols: _Symbols
    index: FuzzyIndex


@dataclass(frozen=True, slots=True)
class _View:
    """What answers queries for one store generation: the index built from every symbol at
    ``built_at``, and the files changed since, when any."""

    symbols: _Symbols
    index: FuzzyIndex
    built_at: int
    generation: int
    changed: _Changed | None = None

    def search(
        self, query: str, limit: int, keep: Callable[[_Symbols, int], bool] | None = None
    ) -> list[SymbolHit]:
        """The best ``limit`` matches of ``query``; ``keep``: only the symbols it accepts (a
        qualified query's containers), the matches read deeper until enough are accepted."""
        cap = None if keep is None else QUALIFIED_SCAN_MAX
        if self.changed is None:
            kept = _deeper(self.index, query, limit, lambda i: keep is None or keep(self.symbols, i), cap)
            return [SymbolHit(self.symbols.row(i), score) for i, score in kept]
        hidden, paths = self.changed.paths, self.symbols.paths
        changed = self.changed.symbols
        # The hidden rows may crowd the top: they are read past like the ones `keep` refuses.
        kept = _deeper(
            self.index,
            query,
            limit,
            lambda i: paths[i] not in hidden and (keep is None or keep(self.symbols, i)),
            cap,
        )
        # Both lists are in display order: score (class, case, length), then length (for an
        # empty query, all 0.0), name and tie. Merged by that key; a stable sort keeps each
        # list's own order among equals.
        ranked = [(self.symbols, i, score) for i, score in kept]
        ranked += [
            (changed, i, score)
            for i, score in _deeper(
                self.changed.index, query, limit, lambda i: keep is None or keep(changed, i), cap
            )
        ]

        def display_order(hit: tuple[_Symbols, int, float]) -> tuple[float, int, str, int]:
            symbols, i, score = hit
            name = symbols.names[i]
            return -score, len(name), name, _tie(symbols.paths[i], symbols.containers[i], symbols.kinds[i])

        ranked.sort(key=display_order)
        return [SymbolHit(symbols.row(i), score) for symbols, i, score in ranked[:limit]]


def _deeper(
    index: FuzzyIndex, query: str, limit: int, wanted: Callable[[int], bool], cap: int | None
) -> list[tuple[int, float]]:
    """The best ``limit`` matches of ``query`` that ``wanted`` accepts, in display order: the
    index is read four times deeper each round until enough are accepted, it runs out, or
    ``cap`` matches were read."""
    want = limit if cap is None else min(max(4 * limit, 256), cap)
    while True:
        found = index.search(query, want)
        kept = [(i, score) for i, score in found if wanted(i)]
        if len(kept) >= limit or len(found) < want or (cap is not None and want >= cap):
            return kept[:limit]
        want = 4 * want if cap is None else min(4 * want, cap)


def _is_private(part: str) -> bool:
    """``_impl``, ``_pydecimal.py``, Go's ``internal`` directories; not ``__init__.py``."""
    return (part.startswith("_") and not part.startswith("__")) or part == "internal"


class SymbolSearch:
    """Fuzzy symbol lookup for one engine, its index kept current by one builder thread."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._cond = threading.Condition()
        self._view: _View | None = None  # None until the first build
        # One long-lived builder thread (started on first need): it keeps one reader
        # connection for all its builds, and two builds never run at once (at 1M symbols a
        # build holds ~2x the index's memory, and two would chase the same generation).
        self._builder: threading.Thread | None = None
        self._wanted = False  # a build was asked for since the builder last looked
        self._failed = -1  # the generation whose build last failed: not retried by one query
        self.builds = 0  # finished builds, whole or of the changed files (tests and the bench read it)
        self.full_builds = 0  # builds from every symbol
        self.interim_answers = 0  # queries answered from SQL while a build ran

    def warm(self) -> None:
        """Make the index current in the background (a no-op if it is, or a build is running)."""
        with self._cond:
            self._start_build()

    def _start_build(self) -> None:
        # Caller holds self._cond.
        if self._view is not None and self._view.generation == self.engine.generation:
            return
        self._wanted = True
        if self._builder is None:
            self._builder = threading.Thread(target=self._build_loop, name="kenning-symbols", daemon=True)
            self._builder.start()
        self._cond.notify_all()

    def _build_loop(self) -> None:
        """Wait for a request, build from the store as it is, and again while it keeps changing."""
        while True:
            with self._cond:
                while not self._wanted:
                    self._cond.wait()
                self._wanted = False
            self._build_once()

    def _build_once(self) -> None:
        gen = self.engine.generation
        with self._cond:
            view = self._view
            if view is not None and view.generation == gen:
                return
        db = self.engine.db
        if db is None:  # closed or reopening: the next query or scan asks again
            return
        started = time.monotonic()
        changed = None if view is None else self.engine.changed_since(view.built_at)
        full = view is None or changed is None or len(changed) > CHANGED_FILES_MAX
        try:
            # in_use: the database is not closed under the build (a folder's close waits).
            if not full:
                assert view is not None and changed is not None
                with db.in_use():
                    rows = db.symbols_of_files(changed)
                    symbols = _Symbols(rows, db.symbol_file_paths_of({int(r[1]) for r in rows}))
                index = FuzzyIndex(symbols.names, ties=symbols.tie_order())
                new = _View(view.symbols, view.index, view.built_at, gen, _Changed(changed, symbols, index))
            else:
                with db.in_use():
                    symbols = _Symbols(db.symbol_columns(), db.symbol_file_paths())
                index = FuzzyIndex(symbols.names, ties=symbols.tie_order())
                new = _View(symbols, index, gen, gen)
        except Exception as exc:  # a closed or replaced store: queries fall back to SQL
            log.info("building the symbol index of %s failed: %s", self.engine.root, exc)
            with self._cond:
                self._failed = gen
                self._cond.notify_all()
            return
        finally:
            if full:
                # The build's temporaries are ~1.5x the index; without this the process keeps
                # them (at 1M symbols, hundreds of MB) for as long as it runs.
                release_free_memory()
        with self._cond:
            self._view = new
            self.builds += 1
            self.full_builds += full
            self._cond.notify_all()
            # Changed during the build: build again (a query would ask anyway).
            if gen != self.engine.generation:
                self._wanted = True
        if new.changed is None:
            log.info("symbol index: %d symbols in %.1fs", len(index), time.monotonic() - started)
        else:
            log.debug(
                "symbol index: %d symbols of %d changed files in %.3fs",
                len(index),
                len(new.changed.paths),
                time.monotonic() - started,
            )

    def _current(self, wait: float | None) -> _View | None:
        """The index if it is current, waiting up to ``wait`` seconds (None: as long as it
        takes) for a build; None if it is not current by then."""
        deadline = None if wait is None else time.monotonic() + wait
        waited = False
        with self._cond:
            while True:
                gen = self.engine.generation
                if self._view is not None and self._view.generation == gen:
                    return self._view
                if self.engine.db is None:  # closed: nothing to build from
                    return None
                if self._failed == gen and waited:
                    return None  # this query's build failed: answer from SQL, not in a loop
                self._start_build()
                waited = True
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                # Woken by a finished build; re-checked at least every 0.1 s, since a build
                # that fails (a closed store) ends without a result.
                self._cond.wait(0.1 if left is None else min(left, 0.1))

    def find(self, query: str, limit: int, *, wait: float | None = None) -> list[SymbolHit]:
        """The best ``limit`` symbols for ``query``. ``wait``: how long to wait for the index
        to be current before answering from SQL (None: always from the index, as the CLI does).

        A qualified query (``Client.request``, ``format.Opts``, ``Vec::push``, ``Client:send``)
        finds the names its last part matches in the containers its other parts name, as an
        editor's symbol box does for its own language's server; those come first, then what the
        whole query matches as a name (an Objective-C selector is ``initWithName:count:``)."""
        view = self._current(wait)
        if view is None:
            self.interim_answers += 1
            search = self._interim
        else:
            search = view.search
        qualified = split_qualified(query)
        if qualified is None:
            return _plain(search(query, limit))
        within, name = qualified
        if view is None:  # a few thousand candidates from SQL: filtered as rows
            hits = [h for h in self._interim(name, limit) if contained_in(h.symbol.container, within)]
        else:
            named: dict[str | None, bool] = {}  # per container string: few, and shared

            def keep(symbols: _Symbols, i: int) -> bool:
                container = symbols.containers[i]
                if container not in named:
                    named[container] = contained_in(container, within)
                return named[container]

            hits = view.search(name, limit, keep)
        seen = {hit.symbol.id for hit in hits}
        hits += [hit for hit in search(query, limit) if hit.symbol.id not in seen]
        return _plain(hits[:limit])

    def _interim(self, query: str, limit: int) -> list[SymbolHit]:
        """Candidates from SQL (the query's characters in order, any case for ASCII), ranked
        by a small fuzzy index over them: current, and the full ranking's order among them."""
        db = self.engine.db
        if db is None or limit <= 0:
            return []
        chars = "".join(query.split())
        pattern = "%" + "%".join(_like_escape(c) for c in chars) + "%" if chars else "%"
        prefix = _like_escape(" ".join(query.split())) + "%"
        rows = db.symbols_matching(pattern, prefix, max(INTERIM_CANDIDATES, limit))
        paths = db.symbol_file_paths_of({int(r[1]) for r in rows})
        symbols = _Symbols(rows, paths)
        index = FuzzyIndex(symbols.names, ties=symbols.tie_order())
        return _plain([SymbolHit(symbols.row(i), score) for i, score in index.search(query, limit)])


# What separates a container from a name as languages write it: `Client.request`, `Vec::push`,
# Lua's `Client:send`, Ruby's `Foo#bar`.
_QUALIFIER = re.compile(r"::|[.:#]")
# The most name matches a qualified query looks through for those in the containers it names:
# "x.y" reads 20,000 matches of "y" in ~40 ms (40,000 symbols of the JDK's java.base, this
# machine); a name that matches more before the container's own is too short to mean one.
QUALIFIED_SCAN_MAX = 20_000


def split_qualified(query: str) -> tuple[tuple[str, ...], str] | None:
    """The containers a query names and the name it asks for (``format.Opts`` → ``(("format",),
    "Opts")``; ``Client.`` → every name in ``Client``); None for a plain name."""
    parts = [part.strip() for part in _QUALIFIER.split(query.strip())]
    within = tuple(part for part in parts[:-1] if part)
    if not within:
        return None
    return within, parts[-1]


def contained_in(container: str | None, within: tuple[str, ...]) -> bool:
    """Whether ``container`` is named by ``within``: each part starts one of its segments, in
    order, ignoring case (``lsp.format`` names ``vim.lsp.buf.format``; ``Client`` names
    ``Client`` and ``lsp.Client``)."""
    if not container:
        return False
    segments = iter(segment.lower() for segment in _QUALIFIER.split(container))
    return all(any(segment.startswith(part.lower()) for segment in segments) for part in within)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _plain(hits: list[SymbolHit]) -> list[SymbolHit]:
    # A path kenning never writes (absolute, "..") can only come from a planted database file.
    return [h for h in hits if stored_path_is_plain(h.symbol.path)]
