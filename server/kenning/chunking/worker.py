"""The chunk worker: ``chunk_source`` in a child process, under a cap on its memory.

tree-sitter's parsers are C, and some inputs send them far past any budget: 4,000 lines of
``/*`` in a ``.py`` file (12 KB) made tree-sitter-python take 5 GB and 13 s, 8,000 lines
crashed it, and 40,000 lines of a lone ``\\`` took it 30 s, growing with the square. A
repository can hold such a file by accident or on purpose. The indexer therefore parses in
this process (``isolated.py`` starts and talks to it): what runs away here is killed or crashes
alone, and the file is indexed in line windows.

Protocol, over stdin and stdout: each request is a 4-byte little-endian length and a pickle of
``(path, text, language)``; each answer the same framing around a ``ChunkedFile``. Both ends
are kenning's own code in the same installation (the parent starts this module with its own
interpreter), so pickle carries the surrogate-escaped text exactly as it is.
"""

from __future__ import annotations

import logging
import pickle
import struct
import sys
from typing import IO

from kenning.chunking import chunk_source

# The most address space the worker may take. With the largest file it is given (2 MiB of Go,
# C++, TypeScript or Python) it peaked under 100 MB in all, the interpreter included.
MEMORY_LIMIT = 2 * 1024**3

_LENGTH = struct.Struct("<I")


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


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the parent's timeout still applies
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="kenning chunk worker: %(message)s")
    _limit_memory()
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while (request := read_message(requests)) is not None:
        path, text, language = pickle.loads(request)
        write_message(answers, pickle.dumps(chunk_source(path, text, language), pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main()
