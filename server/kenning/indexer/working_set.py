"""The embedding pass's detour: the pending chunks of the files the user works on (the editor's
open files, the recently modified ones; see ``kenning.workset``), taken before the id walk."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kenning.store.db import Database
from kenning.store.rows import PendingChunk

# The files whose chunks are embedded before the rest, most wanted first (kenning.workset).
FirstPaths = Callable[[], Sequence[str]]
# Working-set files looked up per batch: a bounded, indexed query whatever the set's size.
FIRST_PATHS_PER_QUERY = 64
# With ``only_first`` (the editor's open files, which the user is waiting for) a batch holds at
# most this many chunks: each file becomes searchable once its own chunks are in, not when the
# whole set's are. The long pass keeps full batches (the model's best rate).
FIRST_BATCH = 32


class FirstChunks:
    """The pending chunks of the working set's files, a batch at a time.

    Files found with nothing pending are not asked about again in this pass, until the list
    changes (a file opened meanwhile): each batch costs one indexed query on a few paths.
    """

    def __init__(self, db: Database, first: FirstPaths | None, limit: int) -> None:
        self._db = db
        self._first = first
        self._limit = limit
        self._wanted: tuple[str, ...] = ()
        self._settled: set[str] = set()

    def take(self, in_flight: set[bytes]) -> list[PendingChunk]:
        if self._first is None:
            return []
        wanted = tuple(self._first())
        if wanted != self._wanted:
            self._wanted = wanted
            self._settled.clear()
        candidates = [p for p in wanted if p not in self._settled][:FIRST_PATHS_PER_QUERY]
        if not candidates:
            return []
        rows = self._db.pending_chunks_in(candidates, self._limit)
        seen = {r[2] for r in rows}
        # Every candidate before the last one returned is complete (rows come in path order).
        last = rows[-1][2] if len(rows) >= self._limit else None
        for path in candidates:
            if path == last:
                break
            if path not in seen:
                self._settled.add(path)
        # Chunks whose input is already on its way are written by that batch.
        return [r for r in rows if r[1] not in in_flight]
