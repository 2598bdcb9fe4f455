"""The small types every layer shares, defined once."""

from __future__ import annotations

from collections.abc import Callable

# Polled by long work (a scan, an embedding pass, a search, a request to an endpoint) between
# steps: True means stop now. Cancellation in kenning is cooperative; nothing is interrupted.
ShouldStop = Callable[[], bool]
