"""The workspace roots an MCP server answers for: one index per root, kept fresh, shared safely.

Each root is a ``FolderIndex`` (the language server's folder worker, which imports no pygls): it
opens the store as the writer when nobody else writes it, and then indexes on its own thread,
lexical rows first and embeddings behind. When another process (the editor's language server,
``kenning index``) holds the writer lock, the engine opens read-only and follows that writer's
commits. ``Roots`` adds what an agent's calls need on top:

- before answering, a cheap incremental rescan (a stat per file; ~1 s on the standard library when
  nothing changed), at most every ``RESCAN_EVERY_S`` and waited for at most ``RESCAN_WAIT_S``, so
  a file the agent just edited is found by its next search;
- a root whose index could not be opened at all is tried again (a reader whose writer has gone
  takes over writing by itself, as ``FolderIndex`` does in the language server too);
- ``stop`` closes every engine, which saves the graph and releases the lock for whoever is next.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kenning.config import Config
from kenning.engine import EncoderFactory, default_encoder_factory
from kenning.folder import FolderIndex
from kenning.types import ShouldStop
from kenning.workspace import path_to_uri, resolve_inside

log = logging.getLogger(__name__)

# A quiet rescan before answering at most this often per root: agents call in bursts, and a
# burst should pay for one stat pass, not one per call.
RESCAN_EVERY_S = 5.0
# How long a call waits for that rescan's lexical phase; past it the call answers from what the
# index holds (the rescan goes on behind it).
RESCAN_WAIT_S = 2.0
# The first call after start waits this long for the first scan's lexical rows.
FIRST_SCAN_WAIT_S = 10.0
# A root that could not be opened is tried again at most this often (at call time).
REOPEN_EVERY_S = 2.0
# A replaced folder (one that could not open) is stopped this long after, so calls already
# using it finish first.
RETIRE_AFTER_S = 30.0


class _Reporter:
    """Counts finished scans per folder (a call waits on them); no progress UI over MCP."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._last_state: dict[int, str] = {}
        self._scans: dict[int, int] = {}

    def status(self, folder: FolderIndex) -> None:
        key = id(folder)
        state = folder.engine.state
        with self._cond:
            before = self._last_state.get(key)
            self._last_state[key] = state
            if before == "scanning" and state != "scanning":
                self._scans[key] = self._scans.get(key, 0) + 1
                self._cond.notify_all()

    def scans_done(self, folder: FolderIndex) -> int:
        with self._cond:
            return self._scans.get(id(folder), 0)

    def wait_for_scan(self, folder: FolderIndex, after: int, timeout: float, should_stop: ShouldStop) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._scans.get(id(folder), 0) <= after:
                left = deadline - time.monotonic()
                if left <= 0 or should_stop():
                    return False
                self._cond.wait(min(left, 0.1))
            return True

    def progress_begin(self, folder: FolderIndex, title: str) -> str | None:
        return None

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        pass

    def progress_end(self, token: str, message: str) -> None:
        pass

    def progress_cancelled(self, token: str) -> bool:
        return False


@dataclass(slots=True)
class Root:
    """One workspace root and the folder worker that currently serves it."""

    path: Path
    folder: FolderIndex
    last_rescan: float = 0.0
    last_reopen: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return self.path.name or str(self.path)


class Roots:
    """Every root of one MCP server; the tools ask it for a root's index, fresh enough to answer."""

    def __init__(
        self,
        paths: Sequence[Path],
        config_for: Callable[[Path], Config],
        *,
        encoder_factory: EncoderFactory = default_encoder_factory,
    ) -> None:
        self._config_for = config_for
        self._encoder_factory = encoder_factory
        self._reporter = _Reporter()
        self._retired: list[threading.Timer] = []
        self.roots: list[Root] = []
        seen: set[Path] = set()
        for p in paths:
            real = Path(os.path.realpath(p))
            if real not in seen:
                seen.add(real)
                self.roots.append(Root(real, self._new_folder(real)))

    def _new_folder(self, root: Path) -> FolderIndex:
        return FolderIndex(
            path_to_uri(root),
            root,
            self._config_for(root),
            self._reporter,
            encoder_factory=self._encoder_factory,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        for root in self.roots:
            root.folder.start(index_now=True)
            root.last_rescan = time.monotonic()

    def stop(self) -> None:
        """Stop indexing and close every engine: the graph is saved and the lock released."""
        for timer in self._retired:
            timer.cancel()
        folders = [r.folder for r in self.roots]
        threads = [threading.Thread(target=f.stop, daemon=True) for f in folders]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)

    # -- before answering --------------------------------------------------------------------

    def ready(self, root: Root, should_stop: ShouldStop) -> FolderIndex:
        """The root's folder, opened, and rescanned first if it is ours to write and due."""
        self._maybe_reopen(root)
        folder = root.folder
        deadline = time.monotonic() + FIRST_SCAN_WAIT_S
        while not folder.opened.wait(0.1):
            if should_stop() or time.monotonic() > deadline:
                return folder
        if not folder.usable or folder.engine.read_only:
            return folder  # the writer (another process) keeps it fresh; we follow its commits
        if self._reporter.scans_done(folder) == 0:
            self._reporter.wait_for_scan(folder, 0, max(deadline - time.monotonic(), 0.0), should_stop)
            return folder
        now = time.monotonic()
        with root.lock:
            due = now - root.last_rescan >= RESCAN_EVERY_S and folder.engine.state == "ready"
            if due:
                root.last_rescan = now
        if due:
            seen = self._reporter.scans_done(folder)
            folder.request_full_scan()
            self._reporter.wait_for_scan(folder, seen, RESCAN_WAIT_S, should_stop)
        return folder

    def _maybe_reopen(self, root: Root) -> None:
        """A root whose index could not be opened is tried again. (A reader whose writer has
        gone takes over by itself: see ``FolderIndex``.)"""
        folder = root.folder
        if not folder.opened.is_set() or not folder.open_error:
            return
        now = time.monotonic()
        with root.lock:
            if root.folder is not folder or now - root.last_reopen < REOPEN_EVERY_S:
                return
            root.last_reopen = now
            log.info("%s: opening the index again (%s)", root.path, folder.open_error)
            fresh = self._new_folder(root.path)
            fresh.start(index_now=True)
            root.folder = fresh
            root.last_rescan = now
        # Calls still running on the old engine finish on it; it is closed a little later.
        timer = threading.Timer(RETIRE_AFTER_S, folder.stop)
        timer.daemon = True
        timer.start()
        self._retired.append(timer)
        fresh.opened.wait(5.0)

    # -- paths from the agent ----------------------------------------------------------------

    def locate(self, path: str) -> tuple[Root, str] | None:
        """The root and root-relative path of an absolute or root-relative ``path``, or None
        when it leads outside every root (``..``, symlinks and absolute paths all judged by
        where they really lead)."""
        candidates = [path] if os.path.isabs(path) else [os.path.join(r.path, path) for r in self.roots]
        inside: list[tuple[Root, str, bool]] = []
        for cand in candidates:
            found = resolve_inside([r.path for r in self.roots], cand)
            if found is not None:
                base, rel = found
                owner = next(r for r in self.roots if r.path == base)
                inside.append((owner, rel, os.path.exists(cand)))
        # A relative path with several roots: the root where it exists, else the first.
        for owner, rel, exists in inside:
            if exists:
                return owner, rel
        return (inside[0][0], inside[0][1]) if inside else None
