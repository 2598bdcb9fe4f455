"""Reading LSP messages from stdin with a ceiling on what one message may cost.

pygls' stdio loop reads a header line with an unbounded ``readline()`` and then allocates the
body at whatever ``Content-Length`` says, so one bad client message can take the server's
memory. kenning keeps pygls' loop and hands it a reader that

- reads header lines in pieces of at most ``MAX_HEADER_LINE`` bytes (a longer line is junk;
  its pieces match no header and are skipped, as pygls skips any unknown line), and
- for a ``Content-Length`` over ``MAX_MESSAGE_BYTES``, reads the body in 1 MiB blocks and
  throws it away, so the stream stays in step with the client and the next message is read
  normally. The request is answered with -32600 (its id taken from the first bytes of the
  body when they show it, as clients write it before ``params``; else null) and a log line
  says why. A client that declares more than it sends leaves the server waiting for the rest,
  as any wrong ``Content-Length`` does; end of input then ends the server cleanly.

Only the stdio transport (the one editors use) is bounded; ``--tcp`` is for debugging.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

from pygls.io_ import StdinAsyncReader

#: The largest message kenning reads. LSP messages are small; the biggest legitimate ones are
#: whole documents in didOpen/didChange, and kenning indexes no file over a few MiB.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: Header lines are ``Content-Length: N`` and ``Content-Type: ...``; anything longer is junk.
MAX_HEADER_LINE = 8192
#: What pygls' loop is given instead of a refused body; the protocol drops it unhandled.
REFUSED_BODY = b'{"kenning/refused": true}'
_DISCARD_BLOCK = 1 << 20
_HEAD_BYTES = 4096
_ID = re.compile(rb'(?:^|,)\s*"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')

#: Called with (declared length, the body's first bytes) after a body was refused.
OnRefused = Callable[[int, bytes], None]


class BoundedStdinReader(StdinAsyncReader):
    """pygls' stdin reader, bounded per header line and per message body."""

    def __init__(self, stdin: BinaryIO, executor: ThreadPoolExecutor | None, on_refused: OnRefused) -> None:
        super().__init__(stdin, executor)
        self._on_refused = on_refused

    def readline(self) -> Awaitable[bytes]:
        line: Awaitable[bytes] = self.loop.run_in_executor(
            self.executor, self.stdin.readline, MAX_HEADER_LINE
        )
        return line

    def readexactly(self, n: int) -> Awaitable[bytes]:
        if n <= MAX_MESSAGE_BYTES:
            return super().readexactly(n)
        return self._refuse(n)

    async def _refuse(self, n: int) -> bytes:
        head = await self.loop.run_in_executor(self.executor, self._discard, n)
        self._on_refused(n, head)
        return REFUSED_BODY

    def _discard(self, n: int) -> bytes:
        """Read and drop ``n`` bytes (or up to end of input); keep the first few for the id."""
        head = b""
        left = n
        while left > 0:
            block = self.stdin.read(min(left, _DISCARD_BLOCK))
            if not block:
                break
            if len(head) < _HEAD_BYTES:
                head += block[: _HEAD_BYTES - len(head)]
            left -= len(block)
        return head


def request_id_from_head(head: bytes) -> Any:
    """The top-level ``id`` of a JSON object whose first bytes are ``head``, or None.

    Only the part before the first nested object or array is searched, so an ``id`` inside
    ``params`` is never taken for the request's.
    """
    text = head.lstrip()
    if not text.startswith(b"{"):
        return None
    nested = re.search(rb"[{\[]", text[1:])
    top = text[1 : 1 + nested.start()] if nested else text[1:]
    match = _ID.search(top)
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None
