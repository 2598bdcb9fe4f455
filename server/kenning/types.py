"""The small types every layer shares, defined once: the index's states and phases (mirrored by
``editors/vscode/src/protocol.ts``), cooperative cancellation, the base of user-facing errors.
Search-query vocabulary (modes, limits) is in ``kenning/query.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

# A folder's index, as ``kenning/indexStatus`` reports it (protocol.ts IndexState): discovering
# and reading files, computing vectors for new chunks, answering fully, or failed (the message
# says why). ``lexicalOnly`` in a search answer is a property of the answer, not a state.
# Held and moved by ``kenning.state.IndexStates``, nowhere else.
IndexState = Literal["scanning", "embedding", "ready", "error"]
INDEX_STATES: tuple[IndexState, ...] = get_args(IndexState)
# What an indexing run is doing, as its progress callbacks say (a state without "error").
Phase = Literal["scanning", "embedding", "ready"]

# Polled by long work (a scan, an embedding pass, a search, a request to an endpoint) between
# steps: True means stop now. Cancellation in kenning is cooperative; nothing is interrupted.
ShouldStop = Callable[[], bool]


class KenningError(Exception):
    """Base of the errors a user can cause and must be told about: a bad query or setting, a
    store that cannot be used, a pack or model that is not what it claims. The message is for
    people (it names the field or the file); no traceback is shown for one of these."""
