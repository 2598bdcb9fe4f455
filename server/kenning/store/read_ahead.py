"""Reading the store's database into the page cache when a server opens it.

A store the operating system has not read lately is on disk only, and SQLite reads it one page
at a time, waiting for each, wherever its b-trees lead: ~0.6 ms a page here. On a million-chunk
store (a 1.8 GB file) an unchanged start read ~10,000 scattered pages before it was ready
(counting chunks and symbols walks two indexes, the graph's check a third, the scan reads every
file row), and a hybrid query touches hundreds more (posting lists, chunk rows, the stored
vectors that rescore the graph's candidates): with its pages dropped, the first 40 queries after
ready had a median of ~100 ms (~15 ms cached), still ~90 ms when sent 5 s later.

So a thread of its own, when the store opens:

1. names to the kernel, all at once, every page of the b-trees the start reads whole
   (``first``): it reads only their interior pages (~1 % of them) to find the leaves, and the
   disk then serves hundreds of requests together instead of SQLite's one at a time;
2. once the saved graph, which the server needs to be ready, has been read (``after``: the two
   files competing for the disk delayed ready ~0.4 s), reads the whole file in order in 4 MiB
   blocks at the disk's speed (~500 MB/s here; ``readinto`` releases the GIL and the copy costs
   ~0.1 s of CPU a GB), stopping early if the store closes;
3. reads no block while a query runs (``query``; at most ``QUERY_PAUSE_S`` a block): a query
   sent at ready otherwise waited behind the read for the disk (the first took ~1.1 s against
   ~0.4 s with no read at all).

Measured on that store, old and new code alternated, the store's pages dropped before each
start: queries sent 5 s after ready, median ~110 → ~19 ms, the first ~420 → ~100 ms; 40 sent
back to back from ready, median ~130 → ~95 ms, the first ~440 → ~400 ms (a burst holds the read
back); ready a little sooner (medians 3.72 → 3.55 s; the disk serves the start's b-trees at
once). The file is read only if it fits comfortably in the memory the system has free (half of
Linux's ``MemAvailable``, ``UNKNOWN_MEMORY_LIMIT`` where that is not known): a larger store
would push the rest of the page cache out for pages that would not stay. Short-lived commands
(``kenning index``, ``kenning search``) do not read ahead: they exit first.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

BLOCK_BYTES = 4 << 20
# Where the system's free memory is unknown, read files up to this size.
UNKNOWN_MEMORY_LIMIT = 1 << 30
# How long to wait for the thread named ``after`` before reading anyway.
AFTER_WAIT_S = 30.0
# The longest the pass waits for running queries before it reads its next block anyway.
QUERY_PAUSE_S = 0.5
# The share of available memory one store's file may take in the page cache.
AVAILABLE_SHARE = 0.5


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Linux's estimate of memory available without swapping (``MemAvailable``), in bytes;
    None where it cannot be read."""
    try:
        text = meminfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "MemAvailable":
            fields = value.split()
            if fields and fields[0].isdigit():
                return int(fields[0]) * 1024
    return None


def read_limit(available: int | None) -> int:
    """The largest file read ahead, given the available memory in bytes (None: unknown)."""
    return UNKNOWN_MEMORY_LIMIT if available is None else int(available * AVAILABLE_SHARE)


# SQLite b-tree page types (the first byte of a page's header).
_INTERIOR_TYPES = (0x02, 0x05)  # index interior, table interior
# At most this many pages are named to the kernel in one hint: Linux reads at most the device's
# readahead window per ``posix_fadvise(WILLNEED)`` call (128 KiB by default; 32 pages of 4 KiB).
_HINT_RUN_PAGES = 32


def page_size_of(header: bytes) -> int:
    """The page size a database file's 100-byte header gives (1 means 65536)."""
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def child_pages(page: bytes, pgno: int) -> list[int] | None:
    """The child page numbers of a b-tree interior page; None for a leaf or anything else."""
    hdr = 100 if pgno == 1 else 0
    if len(page) < hdr + 12 or page[hdr] not in _INTERIOR_TYPES:
        return None
    cells = int.from_bytes(page[hdr + 3 : hdr + 5], "big")
    children = [int.from_bytes(page[hdr + 8 : hdr + 12], "big")]
    for i in range(cells):
        at = hdr + 12 + 2 * i
        if at + 2 > len(page):
            break  # a damaged page: what it names is only ever a hint
        offset = int.from_bytes(page[at : at + 2], "big")
        if offset + 4 > len(page):
            break
        children.append(int.from_bytes(page[offset : offset + 4], "big"))
    return children


def btree_pages(fd: int, page_size: int, page_count: int, roots: Iterable[int]) -> list[int]:
    """Every page of the b-trees rooted at ``roots`` (interior and leaf; overflow pages are not
    reachable this way), reading only the interior pages: a b-tree's leaves are all at one
    depth, so one page of a level says whether the whole level is leaves. Page numbers outside
    the file and pages seen before are skipped, so a damaged file ends the walk, never loops."""
    seen: set[int] = set()
    level = sorted({r for r in roots if 1 <= r <= page_count})
    while level:
        seen.update(level)
        hint_pages(fd, page_size, level)
        first = os.pread(fd, page_size, (level[0] - 1) * page_size)
        if child_pages(first, level[0]) is None:  # a level of leaves: named, not read
            break
        below: set[int] = set()
        for pgno in level:
            page = first if pgno == level[0] else os.pread(fd, page_size, (pgno - 1) * page_size)
            for child in child_pages(page, pgno) or ():
                if 1 <= child <= page_count and child not in seen:
                    below.add(child)
        level = sorted(below)
    return sorted(seen)


def hint_pages(fd: int, page_size: int, pages: list[int]) -> None:
    """Ask the kernel to start reading ``pages`` (sorted), runs of neighbours in one request
    each: many requests in flight at once, where SQLite waits for one page at a time."""
    if not pages or not hasattr(os, "posix_fadvise"):
        return
    start = prev = pages[0]
    for pgno in [*pages[1:], 0]:
        if pgno == prev + 1 and pgno - start < _HINT_RUN_PAGES:
            prev = pgno
            continue
        os.posix_fadvise(fd, (start - 1) * page_size, (prev - start + 1) * page_size, os.POSIX_FADV_WILLNEED)
        start = prev = pgno


class ReadAhead:
    """One pass over one database file on a daemon thread; ``stop`` ends it at the next block.

    ``first``: root pages of the b-trees the open reads at once (the files table, the indexes
    that counting chunks and symbols walks): their pages are asked for right away, together.
    ``after``: a thread to let finish before the sequential pass (the saved graph's load)."""

    def __init__(
        self, path: Path, *, first: Iterable[int] = (), after: threading.Thread | None = None
    ) -> None:
        self.path = path
        self._first = tuple(first)
        self._after = after
        self.hinted_pages = 0
        self.bytes_read = 0
        self.seconds = 0.0
        self.skipped: str | None = None  # why the file was not read, when it was not
        self._stop = threading.Event()
        self.done = threading.Event()
        self._queries = 0  # queries running now: the pass waits for them between blocks
        self._queries_lock = threading.Lock()
        self._no_queries = threading.Event()
        self._no_queries.set()
        self._thread = threading.Thread(target=self._run, name="kenning-read-ahead", daemon=True)

    def start(self) -> ReadAhead:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop reading (at the next block); returns at once."""
        self._stop.set()

    @contextmanager
    def query(self) -> Iterator[None]:
        """Around a query: the pass reads no further block while one runs (up to
        ``QUERY_PAUSE_S`` a block), so the query's own reads have the disk."""
        if self.done.is_set():
            yield
            return
        with self._queries_lock:
            self._queries += 1
            self._no_queries.clear()
        try:
            yield
        finally:
            with self._queries_lock:
                self._queries -= 1
                if not self._queries:
                    self._no_queries.set()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._read()
        except OSError as exc:  # a store moved or removed under us: nothing lost but speed
            self.skipped = f"read failed: {exc}"
        finally:
            self.seconds = time.monotonic() - started
            self.done.set()
        if self.skipped is not None:
            log.info("store read-ahead skipped: %s", self.skipped)
        else:
            log.info(
                "store read-ahead: %d pages hinted, %.0f MB read in %.1f s%s",
                self.hinted_pages,
                self.bytes_read / 1e6,
                self.seconds,
                " (stopped early)" if self._stop.is_set() else "",
            )

    def _read(self) -> None:
        # No symlink followed, and no FIFO waited on: a regular file or nothing.
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags)
        with open(fd, "rb", buffering=0) as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self.skipped = "not a regular file"
                return
            limit = read_limit(available_memory())
            if st.st_size > limit:
                self.skipped = f"{st.st_size / 1e6:.0f} MB, over the {limit / 1e6:.0f} MB free memory allows"
                return
            header = os.pread(fd, 100, 0)
            if len(header) == 100 and header.startswith(b"SQLite format 3\0") and self._first:
                page_size = page_size_of(header)
                if page_size >= 512:
                    pages = btree_pages(fd, page_size, st.st_size // page_size, self._first)
                    self.hinted_pages = len(pages)
            if self._after is not None:
                self._after.join(AFTER_WAIT_S)
            buf = bytearray(BLOCK_BYTES)
            view = memoryview(buf)
            while not self._stop.is_set():
                self._no_queries.wait(QUERY_PAUSE_S)
                n = f.readinto(view)
                if not n:
                    break
                self.bytes_read += n
