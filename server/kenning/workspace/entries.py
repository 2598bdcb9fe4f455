"""What discovery and reading produce: a file that belongs to the index, a file's text, and the
reason a file is left out. Plain data, shared by every module of the package and its callers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class SkipReason(str, Enum):
    """Why a file is left out. The values are stable: ``kenning stats`` shows them."""

    TOO_LARGE = "too-large"
    BINARY = "binary"
    GENERATED = "generated"  # minified / very long lines
    UNREADABLE = "unreadable"  # permissions, I/O errors
    OUTSIDE_ROOT = "outside-root"  # a symlink leading outside the root (or into .git, the store)
    NOT_A_FILE = "not-a-file"  # fifo, socket, device; a directory git lists (submodule …)
    BROKEN_LINK = "broken-link"  # a symlink to nothing, or a symlink loop
    VANISHED = "vanished"  # deleted (or replaced by something unopenable) between scan and read
    PATH_TOO_LONG = "path-too-long"  # the absolute path is longer than the system's PATH_MAX

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file that belongs to the index, with the ``stat`` it was discovered with."""

    path: str  # POSIX path relative to the root ("src/a.py"); surrogate-escaped if not UTF-8
    abs_path: str  # a str, not a Path: a scan builds one entry per file and reads few of them
    size: int
    mtime_ns: int
    root: str = ""  # the real root; when set, reads open ``target`` beneath it (no links)
    target: str = ""  # what to open, relative to the root: ``path``, or a link's resolved target


@dataclass(slots=True)
class Discovery:
    files: list[FileEntry]  # sorted by path
    skipped: dict[str, SkipReason]  # rel path -> reason, for files rejected by stat-level rules
    method: str = "walk"  # "git" (git ls-files) or "walk" — for logs and stats
    # Why nothing (or much less than expected) was found, when kenning can tell: an ignore rule
    # in a parent repository that excludes the root itself, for instance.
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's text as the index sees it."""

    # Decoded, BOM stripped, "\r\n" and lone "\r" turned into "\n" — split on "\n" (not
    # str.splitlines, which also breaks at \x0b, \x1c, U+2028 …) to get the editor's lines.
    text: str
    content_hash: str  # hex blake2b (16 bytes) of the raw bytes that were decoded
    size: int  # from fstat of the open file, before reading
    mtime_ns: int
    replaced: int  # number of undecodable bytes replaced with U+FFFD
    encoding: str  # "utf-8", "utf-8-sig", "utf-16-le/be", "utf-32-le/be"; "… (replaced)" if lossy
