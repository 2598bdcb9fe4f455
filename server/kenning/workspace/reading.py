"""One file's text, read safely beneath its root (:func:`read_source`, :func:`open_beneath`).

Content-level rules (binary, minified/generated), decoding that never fails, line endings an
editor would count, and a hash of exactly the bytes that were decoded. Every failure is a
:class:`~kenning.workspace.entries.SkipReason`, never an exception. Files are opened beneath the
root one component at a time without following any symlink, then checked with ``fstat``: a
directory swapped for a link to elsewhere after discovery is refused at read time, not followed.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import stat
import sys
import threading
from pathlib import Path

from kenning.config import DEFAULT_MAX_FILE_SIZE
from kenning.languages import LONG_LINED_LANGUAGES, language_for_path
from kenning.workspace.entries import FileEntry, SkipReason, SourceText

# Content rules (zoekt-style, see docs/reliability): a NUL byte this early means binary; lines
# this long mean minified or generated code nobody searches by describing it.
BINARY_SNIFF_BYTES = 8 * 1024
MAX_AVERAGE_LINE = 1_000
MAX_LINE = 20_000

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_counted = threading.local()


def _count_and_replace(exc: UnicodeError) -> tuple[str, int]:
    # Same output as errors="replace", plus a per-thread tally of the bytes given up.
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _counted.n += exc.end - exc.start
    return "\ufffd", exc.end


_COUNTING_ERRORS = "kenning.count-replace"
codecs.register_error(_COUNTING_ERRORS, _count_and_replace)

_BOMS = (  # longest first: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _decode(data: bytes) -> tuple[str, str, int] | SkipReason:
    """(text, encoding, replaced bytes), or BINARY."""
    encoding, body = "utf-8", data
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding, body = name, data[len(bom) :]
            break
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    if codec == "utf-8" and b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY
    try:
        text, replaced = body.decode(codec), 0
    except UnicodeDecodeError:
        _counted.n = 0
        text, replaced = body.decode(codec, _COUNTING_ERRORS), _counted.n
        encoding += " (replaced)"
    if codec != "utf-8" and "\0" in text[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY  # a BOM-like start on a binary file
    return text, encoding, replaced


def _looks_generated(text: str) -> bool:
    if not text:
        return False
    breaks = text.count("\n")
    lines = breaks + (0 if text.endswith("\n") else 1)
    if (len(text) - breaks) / lines > MAX_AVERAGE_LINE:
        return True
    # Line by line, not by a `[^\n]{20001}` search: that restarts at every character of a line
    # just under the limit, and 20 lines of 19,999 characters took it 3.7 s (2 MB of typical
    # code: 0.09 s by the search, 0.01 s split).
    return len(text) > MAX_LINE and max(map(len, text.split("\n"))) > MAX_LINE


def read_fd(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a fifo that appeared since the scan must not block us
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_beneath(root: str | Path, rel: str, flags: int = OPEN_FLAGS) -> int:
    """Open ``rel`` beneath ``root`` without following a symlink anywhere on the way.

    Each directory component is opened relative to the previous one with ``O_NOFOLLOW |
    O_DIRECTORY``, and the last with ``O_NOFOLLOW``, so neither a link planted in the tree nor a
    directory swapped for a link after discovery can lead the read outside the root. The path
    never passes through a string longer than one name, so PATH_MAX does not apply either.
    Raises ``OSError``: ELOOP when a component is a symlink (ENOTDIR is turned into ELOOP when
    the directory component is one), EXDEV for ``..``, ``.``, empty or absolute paths.
    """
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise OSError(errno.EXDEV, "not a plain path beneath the root", rel)
    # The opens below name one component relative to a directory fd, which audit hooks cannot
    # place; this event says what is being opened, for hooks that watch file access.
    sys.audit("kenning.open_beneath", os.fspath(root), rel)
    fd = os.open(root, DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOTDIR and _is_link(name, fd):
                    raise OSError(errno.ELOOP, "a symlink on the way", rel) from None
                raise
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], flags | NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_once(
    path: Path, max_file_size: int, beneath: tuple[str, str] | None = None
) -> tuple[bytes, os.stat_result, bool] | SkipReason:
    """(bytes, fstat before reading, unchanged while reading?) or a reason.

    With ``beneath`` (root, relative path) the file is opened by :func:`open_beneath`; a
    symlink met on the way then means the tree changed since discovery, and is refused.
    """
    try:
        fd = os.open(path, OPEN_FLAGS) if beneath is None else open_beneath(*beneath)
    except FileNotFoundError:
        return SkipReason.VANISHED
    except PermissionError:
        return SkipReason.UNREADABLE
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: O_NOFOLLOW on some BSDs
            return SkipReason.BROKEN_LINK if beneath is None else SkipReason.OUTSIDE_ROOT
        if exc.errno == errno.EXDEV:
            return SkipReason.OUTSIDE_ROOT
        if exc.errno == errno.ENAMETOOLONG:
            return SkipReason.PATH_TOO_LONG
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EISDIR):
            return SkipReason.NOT_A_FILE  # sockets answer ENXIO
        if exc.errno == errno.ENOTDIR:
            return SkipReason.VANISHED  # a parent directory was replaced by a file
        return SkipReason.UNREADABLE
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            return SkipReason.NOT_A_FILE
        if before.st_size > max_file_size:
            return SkipReason.TOO_LARGE
        data = read_fd(fd, max_file_size + 1)
        after = os.fstat(fd)
    except OSError:
        return SkipReason.UNREADABLE
    finally:
        os.close(fd)
    if len(data) > max_file_size:
        return SkipReason.TOO_LARGE  # it grew after the fstat
    steady = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
    return data, before, steady


def read_source(
    entry_or_path: FileEntry | Path, *, max_file_size: int = DEFAULT_MAX_FILE_SIZE
) -> SourceText | SkipReason:
    """Read and decode one file, or say why it is left out. Never raises for file problems.

    A file of very long lines is skipped as generated, unless its language keeps on them only
    what its chunker leaves out (``LONG_LINED_LANGUAGES``: a notebook's outputs).

    An entry from :func:`discover` is opened beneath its root without following links (a plain
    path, given by a caller that vetted it, is opened as it is). The hash is of exactly the bytes
    decoded; size and mtime come from the open file descriptor
    *before* reading, so a write that lands during the read leaves a newer mtime on disk and the
    next scan reads the file again. A file caught changing mid-read is read again (up to three
    times) to avoid indexing a torn mix of two versions.
    """
    beneath: tuple[str, str] | None = None
    if isinstance(entry_or_path, FileEntry):
        path = Path(entry_or_path.abs_path)
        if entry_or_path.root:
            beneath = (entry_or_path.root, entry_or_path.target or entry_or_path.path)
    else:
        path = Path(entry_or_path)
    for _attempt in range(3):
        got = _read_once(path, max_file_size, beneath)
        if isinstance(got, SkipReason):
            return got
        data, st, steady = got
        if steady:
            break
    decoded = _decode(data)
    if isinstance(decoded, SkipReason):
        return decoded
    text, encoding, replaced = decoded
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _looks_generated(text) and language_for_path(path.name) not in LONG_LINED_LANGUAGES:
        return SkipReason.GENERATED
    return SourceText(
        text=text,
        content_hash=hashlib.blake2b(data, digest_size=16).hexdigest(),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        replaced=replaced,
        encoding=encoding,
    )
