"""Paths on disk relative to a real root, and the ``stat``-level verdict on one of them
(:func:`stat_candidate`, then :func:`classify`): a regular file within the size cap, or the reason
it is left out — a path too long, a link leading outside the root (or into ``.git`` or a store), a
broken link, not a regular file, too large. Shared by both listings, git's and the walk.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

from kenning.workspace.entries import FileEntry, SkipReason

if TYPE_CHECKING:
    from kenning.workspace.ignore import Rules

# Longest absolute path the system's calls accept (4096 on Linux, 1024 on macOS); a file past it
# cannot be opened by an editor either, so it is counted as skipped with a reason.
try:
    PATH_MAX = int(os.pathconf("/", "PC_PATH_MAX"))
except (OSError, ValueError, AttributeError):
    PATH_MAX = 4096


def too_long(abs_path: str) -> bool:
    # A character encodes to at most 4 bytes: most paths are judged without encoding them.
    return len(abs_path) * 4 >= PATH_MAX and len(os.fsencode(abs_path)) >= PATH_MAX


def stat_candidate(
    abs_path: str, lstat: Callable[[], os.stat_result] | None = None
) -> os.stat_result | SkipReason | None:
    """The first look at a path a listing named, the same for git's and the walk's: too long
    for the system's calls (``PATH_TOO_LONG``), its ``lstat`` (or ``lstat()``: a walk's stat
    through the directory's descriptor), None when it vanished since it was listed (simply not
    there), or why it could not be looked at."""
    if too_long(abs_path):
        return SkipReason.PATH_TOO_LONG
    try:
        return os.lstat(abs_path) if lstat is None else lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return SkipReason.PATH_TOO_LONG if exc.errno == errno.ENAMETOOLONG else SkipReason.UNREADABLE


def realpath(path: str) -> str | None:
    """``os.path.realpath``, or None when the path changes under it: realpath ``lstat``s a
    component and then ``readlink``s it, and a link swapped for a directory in between raises
    EINVAL (this aborted whole scans)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def relative_inside(root: str, real: str) -> str | None:
    """``real`` relative to ``root`` (both already realpath'd) as POSIX, "." for the root itself."""
    if real == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    if real.startswith(prefix):
        return real[len(prefix) :]
    return None


def valid_rel(rel: str) -> bool:
    """A plain relative path: no empty, ``.`` or ``..`` component (git's own output never has
    one, but a repository whose ``core.worktree`` points elsewhere makes git print ``../``)."""
    return bool(rel) and not rel.startswith("/") and all(c not in ("", ".", "..") for c in rel.split("/"))


def classify(
    root: str, rel: str, abs_path: str, lstat: os.stat_result, rules: Rules, max_file_size: int
) -> FileEntry | SkipReason:
    st = lstat
    target = rel
    if stat.S_ISLNK(st.st_mode):
        real = realpath(abs_path)
        if real is None:
            return SkipReason.VANISHED
        real_target = relative_inside(root, real)
        if real_target is None:
            return SkipReason.OUTSIDE_ROOT
        if real_target != "." and (rules.in_store(real_target) or ".git" in real_target.split("/")):
            # Inside the root, but somewhere the index never looks: treat as outside.
            return SkipReason.OUTSIDE_ROOT
        try:
            st = os.stat(abs_path)
        except OSError:
            return SkipReason.BROKEN_LINK  # dangling, or a loop (ELOOP)
        target = real_target  # read through the resolved path, beneath the root, link-free
    if not stat.S_ISREG(st.st_mode):
        return SkipReason.NOT_A_FILE
    if st.st_size > max_file_size:
        return SkipReason.TOO_LARGE
    return FileEntry(rel, abs_path, st.st_size, st.st_mtime_ns, root, target)
