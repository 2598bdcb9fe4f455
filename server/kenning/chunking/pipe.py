"""What crosses the pipes between the indexer and its chunk worker (``isolated.py`` and
``worker.py``).

Each request is a 4-byte little-endian length and a pickle of ``(path, text, language)``; each
answer, in the order of the requests, the same framing around a ``ChunkedFile``, a
``ChunkerFailure`` where the chunker raised, or a ``str`` saying which limit the file went
past. Both ends are kenning's own code in the same installation (the parent starts the worker
with its own interpreter), so pickle carries the surrogate-escaped text exactly as it is. What
the answers name must live in a module imported by name, not in the worker's ``__main__``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import IO

_LENGTH = struct.Struct("<I")


@dataclass(frozen=True)
class ChunkerFailure:
    """The answer for a file the chunker raised over: a bug costs that file, not the worker."""

    traceback: str


def read_message(stream: IO[bytes]) -> bytes | None:
    """One framed message from ``stream``; None at the end of the stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    body = stream.read(size)
    return body if len(body) == size else None


def write_message(stream: IO[bytes], body: bytes) -> None:
    stream.write(_LENGTH.pack(len(body)) + body)
    stream.flush()
