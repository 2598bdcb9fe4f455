"""Giving freed heap memory back to the operating system after a large in-memory build.

Building the symbol index of a large workspace allocates and frees hundreds of MB of
temporaries (sort keys, per-character arrays). glibc keeps freed small and medium blocks in
the process heap, so the server's resident size stayed at the build's high-water mark: at 160k
symbols the index held 57 MiB and the process 107 MiB more than before. ``malloc_trim(0)``
returns those pages (~20 ms). Elsewhere (macOS, musl) there is no such call and nothing to do.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols include libc's: find_library("c") would fork and run
        # ``ldconfig -p`` (a whole-process fork at a million chunks) to find the same library.
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the heap's free pages to the OS; whether the platform could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
