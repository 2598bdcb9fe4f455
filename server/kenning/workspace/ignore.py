"""The ignore rules: gitignore files as git applies them when listing files, ``.kenningignore``,
the user's ``exclude`` globs, and the directories kenning never indexes (its stores, folders
indexed by someone else). Ignore files are read beneath the root without following links.
"""

from __future__ import annotations

import codecs
import errno
import logging
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pathspec
import re2

from kenning.config import STORE_DIRNAME
from kenning.workspace.files import relative_inside
from kenning.workspace.reading import OPEN_FLAGS, open_beneath, read_fd

log = logging.getLogger("kenning.workspace")

IGNORE_FILE = ".kenningignore"  # gitignore syntax, at the root only


class _IgnoreFile:
    """One gitignore file (or list of patterns), answering for one path at a time like git.

    pathspec parses the patterns; the matching loop is ours. pathspec answers for *files* as
    ``git check-ignore`` would, where a pattern that matches a directory also matches everything
    below it. Listing files works differently in git: ignored directories are never entered, and
    a pattern only counts when it matches the path itself. So a match that pathspec only made
    through a parent directory (its "dir mark" group before the end) is not counted here; the
    walk's pruning covers parents. Without this, ``*`` + ``!*/`` + ``!*.md`` would hide every
    subdirectory, and ``dir/**`` + ``!dir/keep.py`` would hide ``dir/keep.py``.
    """

    __slots__ = ("_rules",)

    def __init__(self, patterns: Sequence[pathspec.Pattern]) -> None:
        rules: list[tuple[_Regex, bool]] = []
        for pattern in patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is not None and regex is not None:
                rules.append((_linear(regex), pattern.include))
        rules.reverse()  # the last matching pattern decides
        self._rules = rules

    def __bool__(self) -> bool:
        return bool(self._rules)

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches the path."""
        for regex, ignore in self._rules:
            if _matches_itself(regex, path, is_dir):
                return ignore
        return None


_DIR_MARK = "ps_d"  # pathspec's regex group for "matched because a parent directory matched"


class _Match(Protocol):
    def start(self, group: int, /) -> int: ...
    def end(self, group: int, /) -> int: ...


class _Regex(Protocol):
    """A compiled pattern: Python's, or RE2's for the patterns Python's could take forever on."""

    @property
    def groupindex(self) -> Mapping[str, int]: ...
    def search(self, string: str, pos: int = 0, /) -> _Match | None: ...


# What pathspec writes first for a pattern that matches at any depth.
_ANY_DEPTH = "^(?:.+/)?"


def _linear(regex: re.Pattern[str]) -> _Regex:
    """``regex``, or the same pattern in RE2, whose time is linear in the path, when it repeats
    more than one wildcard: Python's backtracking takes time exponential in them on a name that
    almost matches. A repository's `.gitignore` line `*a*a*a*a*a*a*b` took 1.4 s on one name of
    60 `a`s, and with two more stars did not finish in a minute. RE2 costs 2-3 µs a path, so
    the common patterns (`*.pyc`, `build/`) stay with Python's (0.3 µs)."""
    body = regex.pattern.removeprefix(_ANY_DEPTH)
    if body.count("*") + body.count("+") < 2:
        return regex
    try:
        linear: _Regex = re2.compile(regex.pattern)
    except re2.error:  # not expected of pathspec's output; Python's is right, only slower
        return regex
    return linear


def _matches_itself(regex: _Regex, path: str, is_dir: bool) -> bool:
    mark = regex.groupindex.get(_DIR_MARK)  # by number: RE2's matches take no group names
    m = regex.search(path)
    if m is not None and (mark is None or m.start(mark) < 0):
        return True
    if not is_dir or mark is None:
        return False
    # Directory-only patterns ("build/", "*/") match "path/" with the mark on the final slash.
    as_dir = path + "/"
    m = regex.search(as_dir)
    if m is not None and m.end(mark) == len(as_dir):
        return True
    m = regex.search(as_dir, len(path))  # unanchored ones ("*/") anywhere: try the last slash
    return m is not None and m.end(mark) == len(as_dir)


def compile_ignore(lines: Iterable[str], origin: str) -> _IgnoreFile | None:
    """Compile gitignore lines, dropping (and logging) any line pathspec rejects."""
    patterns: list[pathspec.Pattern] = []
    for line in lines:
        try:
            patterns.extend(pathspec.GitIgnoreSpec.from_lines([line]).patterns)
        except Exception as exc:  # pathspec raises re.error or its own error types
            log.warning("%s: ignoring invalid pattern %r (%s)", origin, line, exc)
    compiled = _IgnoreFile(patterns)
    return compiled if compiled else None


_IGNORE_FILE_LIMIT = 1024 * 1024  # an ignore file is small; a huge one is not read whole


def read_ignore_lines(root: str, rel: str) -> list[str]:
    """The lines of an ignore file beneath ``root``, opened without following links.

    A symlinked ignore file is refused (git refuses symlinked ``.gitignore`` files too): it
    could point anywhere outside the workspace. A UTF-8 BOM is dropped, or it would become part
    of the first pattern and silently disable it.
    """
    try:
        fd = open_beneath(root, rel, OPEN_FLAGS)
    except FileNotFoundError:
        return []
    except OSError as exc:
        why = "it is a symlink" if exc.errno in (errno.ELOOP, errno.EMLINK) else exc.strerror
        log.warning("not reading %s (%s); its patterns are not applied", rel, why)
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            log.warning("not reading %s: not a regular file", rel)
            return []
        data = read_fd(fd, _IGNORE_FILE_LIMIT)
    except OSError as exc:
        log.warning("cannot read %s (%s); its patterns are not applied", rel, exc)
        return []
    finally:
        os.close(fd)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return data.decode("utf-8", "replace").splitlines()


# (directory prefix relative to the root, that directory's .gitignore), from the root down.
Chain = tuple[tuple[str, _IgnoreFile], ...]


def chain_says_ignored(chain: Chain, path: str, is_dir: bool) -> bool:
    """Nested .gitignore semantics: the deepest file with a decisive pattern wins.

    ``path`` is relative to the root; each file sees it relative to its own directory.
    """
    for base, rules in reversed(chain):
        verdict = rules.verdict(path[len(base) :], is_dir)
        if verdict is not None:
            return verdict
    return False


class Rules:
    """The exclusions kenning adds on top of git's: store dirs, .kenningignore, ``exclude``,
    and ``exclude_dirs`` (directories indexed by someone else: nested workspace folders)."""

    def __init__(
        self,
        root: str,
        store_dir: Path | None,
        exclude: Sequence[str],
        exclude_dirs: Sequence[str] = (),
    ) -> None:
        self.stores = {STORE_DIRNAME}
        if store_dir is not None:
            rel = relative_inside(root, os.path.realpath(store_dir))
            if rel is not None and rel != ".":
                self.stores.add(rel)
        self.stores.update(d.strip("/") for d in exclude_dirs if d.strip("/") not in ("", "."))
        self._store_prefixes = tuple(s + "/" for s in self.stores)
        lines = read_ignore_lines(root, IGNORE_FILE)
        # After .kenningignore, so a setting can re-include ("!name") what the file left out.
        lines.extend(exclude)
        self.spec = compile_ignore(lines, "exclude settings") if lines else None
        self._dirs: dict[str, bool] = {}

    def in_store(self, rel: str) -> bool:
        return rel in self.stores or rel.startswith(self._store_prefixes)

    def dir_excluded(self, rel_dir: str) -> bool:
        """The directory itself is excluded (its parents are the walk's business)."""
        return self.in_store(rel_dir) or (
            self.spec is not None and self.spec.verdict(rel_dir, is_dir=True) is True
        )

    def file_excluded(self, rel: str) -> bool:
        # A regular file named like the store (a repository's ``.kenning`` file) is not indexed
        # either: the name is kenning's, whatever lies there.
        return self.in_store(rel) or (self.spec is not None and self.spec.verdict(rel, is_dir=False) is True)

    def path_excluded(self, rel: str) -> bool:
        """For a flat list (git's): the file, or any directory above it, is excluded."""
        parent, _, name = rel.rpartition("/")
        if name == ".git" or (parent and self._tree_excluded(parent)):
            return True
        return self.file_excluded(rel)

    def _tree_excluded(self, rel_dir: str) -> bool:
        # Memoised per directory, so a flat list of N files costs about N lookups, not N × depth;
        # iterative, because git can list paths nested deeper than Python's recursion limit.
        cache = self._dirs
        pending: list[str] = []
        d = rel_dir
        while d and d not in cache:
            pending.append(d)
            d = d.rpartition("/")[0]
        excluded = cache.get(d, False) if d else False
        for d in reversed(pending):  # from the outermost unknown directory inwards
            excluded = excluded or d.rpartition("/")[2] == ".git" or self.dir_excluded(d)
            cache[d] = excluded
        return cache[rel_dir]
