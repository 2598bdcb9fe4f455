"""The chunk worker: ``chunk_source`` in a child process, under a cap on its memory.

tree-sitter's parsers are C, and some inputs send them far past any budget: 4,000 lines of
``/*`` in a ``.py`` file (12 KB) made tree-sitter-python take 5 GB and 13 s, 8,000 lines
crashed it, and 40,000 lines of a lone ``\\`` took it 30 s, growing with the square. A
repository can hold such a file by accident or on purpose. The indexer therefore parses in
this process (``isolated.py`` starts and talks to it): what runs away here is killed or crashes
alone, and the file is indexed in line windows.

What crosses the pipes, and how, is in ``pipe.py``.
"""

from __future__ import annotations

import logging
import pickle
import sys
import traceback

from kenning.chunking import chunk_source
from kenning.chunking.model import ChunkedFile
from kenning.chunking.pipe import ChunkerFailure, read_message, write_message

# The most address space the worker may take. With the largest file it is given (2 MiB of Go,
# C++, TypeScript or Python) it peaked under 100 MB in all, the interpreter included.
MEMORY_LIMIT = 2 * 1024**3


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
        answer: ChunkedFile | ChunkerFailure | str
        try:
            answer = chunk_source(path, text, language)
        except MemoryError:  # under MEMORY_LIMIT; what was taken is given back with the frames
            answer = "it ran out of memory"
        except Exception:
            answer = ChunkerFailure(traceback.format_exc())
        write_message(answers, pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main()
