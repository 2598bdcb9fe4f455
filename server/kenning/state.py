"""The state of one folder's index, and the only place it changes.

An index is ``scanning``, ``embedding``, ``ready`` or in ``error`` (``types.IndexState``, what
``kenning/indexStatus`` reports), with a message that says why when there is something to say.
``IndexStates`` holds both, allows only the transitions below, and tells its listeners about each
one. The engine holds one; ``indexer.update`` moves it through a run's phases; the folder worker
moves it at open, on failure and for a read-only index, and listens to it to report each phase's
start. Everything else reads ``engine.state``. Pure logic: no I/O, no pygls.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Final, NamedTuple

from kenning.types import IndexState

# Where each state may go. A run (update) always starts with a scan, from any state (a new job
# retries after a failure); embedding only follows a scan; any state may fail, or become ready
# (a read-only index another process keeps current is ready from the moment it opens).
ALLOWED: Final[dict[IndexState, frozenset[IndexState]]] = {
    "scanning": frozenset({"scanning", "embedding", "ready", "error"}),
    "embedding": frozenset({"scanning", "embedding", "ready", "error"}),
    "ready": frozenset({"scanning", "ready", "error"}),
    "error": frozenset({"scanning", "ready", "error"}),
}


class IllegalTransition(RuntimeError):
    """A move the table above does not allow: a bug in the caller, never the user's doing."""


class Transition(NamedTuple):
    """One move: from, to, the message after it, and whether it began a run's phase (a scan or
    an embedding pass starting) rather than ended one (ready, embedding left pending, failed)."""

    old: IndexState
    new: IndexState
    message: str | None
    began: bool


StateListener = Callable[[Transition], None]


class _Keep:
    """The message is left as it is."""


KEEP: Final = _Keep()


class IndexStates:
    """The current state and message of one index; its transitions; who hears about them.

    Reads are plain attribute reads (any thread). Moves are checked and made under a lock, and
    listeners are called after it, on the moving thread, in the order they were added; every move
    is told, a move to the same state included (a new job's scan after the first)."""

    def __init__(self, state: IndexState = "scanning") -> None:
        self._state: IndexState = state
        self._message: str | None = None
        self._lock = threading.Lock()
        self._listeners: list[StateListener] = []

    @property
    def state(self) -> IndexState:
        return self._state

    @property
    def message(self) -> str | None:
        return self._message

    # -- moves -------------------------------------------------------------------------------

    def begin_scan(self) -> None:
        """A run starts: its scan. What the last run had to say no longer holds."""
        self._move("scanning", None, began=True)

    def begin_embedding(self) -> None:
        """The run's scan is done and its embedding pass starts (the scan's note stays)."""
        self._move("embedding", KEEP, began=True)

    def finish(self, *, pending: bool, message: str | _Keep | None = KEEP) -> None:
        """A run ended: ``ready``, or ``embedding`` while chunks still wait for vectors (the pass
        was cancelled, or the model or endpoint is unavailable)."""
        self._move("embedding" if pending else "ready", message, began=False)

    def ready(self, message: str | None = None) -> None:
        """Ready without a run: a read-only index (``message`` says who writes it)."""
        self._move("ready", message, began=False)

    def fail(self, message: str) -> None:
        self._move("error", message, began=False)

    def note(self, message: str | None) -> None:
        """Say something about the current state without moving (an empty index says why)."""
        with self._lock:
            self._message = message

    # -- listeners ---------------------------------------------------------------------------

    def add_listener(self, listener: StateListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: StateListener) -> None:
        with self._lock:
            self._listeners.remove(listener)

    @contextlib.contextmanager
    def listening(self, listener: StateListener) -> Iterator[None]:
        """``listener`` hears every move made inside the ``with`` block (one job's, say)."""
        self.add_listener(listener)
        try:
            yield
        finally:
            self.remove_listener(listener)

    def _move(self, new: IndexState, message: str | _Keep | None, *, began: bool) -> None:
        with self._lock:
            old = self._state
            if new not in ALLOWED[old]:
                raise IllegalTransition(f"index state {old!r} cannot become {new!r}")
            self._state = new
            if not isinstance(message, _Keep):
                self._message = message
            move = Transition(old, new, self._message, began)
            listeners = tuple(self._listeners)
        for listener in listeners:
            listener(move)
