"""Which files belong to a workspace's index, how to read them safely, and which paths are ours.

This module owns three decisions and nothing else:

* **discovery** (:func:`discover`) — the files of a workspace root. Inside a git work tree
  they are what git itself shows (tracked plus untracked-not-ignored, from ``git ls-files``);
  elsewhere a walk that applies nested ``.gitignore`` files the way git does. Both honour
  ``.kenningignore`` and the user's ``exclude`` globs, and both skip ``.git``, the index's own
  store directory and anything that only a symlink makes look local. Files rejected on their
  ``stat`` (too large, not a regular file, a link leading outside) come with a
  :class:`SkipReason`.
* **reading** (:func:`read_source`) — one file's text with content-level rules (binary,
  minified/generated), decoding that never fails, line endings an editor would count, and a hash
  of exactly the bytes that were decoded. Every failure is a reason, never an exception. Files
  are opened beneath the root one component at a time without following any symlink
  (:func:`open_beneath`), then checked with ``fstat``: a directory swapped for a link to
  elsewhere after discovery is refused at read time, not followed.
* **names** (:func:`path_to_text`, :func:`text_to_path`) — any bytes a file system allows in a
  name become text that SQLite can store and that converts back to exactly those bytes.
* **vetting paths** (:func:`resolve_inside`, :func:`uri_to_path`, :func:`path_to_uri`) — every
  path that comes from a client is resolved (symlinks and ``..`` included) and accepted only if
  it lies inside a workspace root.

Nothing here imports pygls: the language server and the CLI both build on it.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

import pathspec

from kenning.config import DEFAULT_MAX_FILE_SIZE, STORE_DIRNAME

log = logging.getLogger(__name__)

__all__ = [
    "IGNORE_FILE",
    "Discovery",
    "FileEntry",
    "SkipReason",
    "SourceText",
    "discover",
    "display_path",
    "open_beneath",
    "path_to_text",
    "path_to_uri",
    "read_source",
    "resolve_inside",
    "text_to_path",
    "uri_to_path",
]

IGNORE_FILE = ".kenningignore"  # gitignore syntax, at the root only

# Content rules (zoekt-style, see docs/reliability): a NUL byte this early means binary; lines
# this long mean minified or generated code nobody searches by describing it.
BINARY_SNIFF_BYTES = 8 * 1024
MAX_AVERAGE_LINE = 1_000
MAX_LINE = 20_000

GIT_TIMEOUT_S = 60.0
# Variables that would point git at another repository or index than the root's own (they are
# set, for instance, when kenning runs from inside a git hook).
_GIT_REDIRECTS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


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
    abs_path: Path
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


# -- ignore rules ------------------------------------------------------------------------------


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
        rules: list[tuple[re.Pattern[str], bool]] = []
        for pattern in patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is not None and regex is not None:
                rules.append((regex, pattern.include))
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


def _matches_itself(regex: re.Pattern[str], path: str, is_dir: bool) -> bool:
    m = regex.search(path)
    if m is not None and (_DIR_MARK not in regex.groupindex or m.start(_DIR_MARK) < 0):
        return True
    if not is_dir or _DIR_MARK not in regex.groupindex:
        return False
    # Directory-only patterns ("build/", "*/") match "path/" with the mark on the final slash.
    as_dir = path + "/"
    m = regex.search(as_dir)
    if m is not None and m.end(_DIR_MARK) == len(as_dir):
        return True
    m = regex.search(as_dir, len(path))  # unanchored ones ("*/") anywhere: try the last slash
    return m is not None and m.end(_DIR_MARK) == len(as_dir)


def _compile_ignore(lines: Iterable[str], origin: str) -> _IgnoreFile | None:
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


def _read_ignore_lines(root: str, rel: str) -> list[str]:
    """The lines of an ignore file beneath ``root``, opened without following links.

    A symlinked ignore file is refused (git refuses symlinked ``.gitignore`` files too): it
    could point anywhere outside the workspace. A UTF-8 BOM is dropped, or it would become part
    of the first pattern and silently disable it.
    """
    try:
        fd = open_beneath(root, rel, _OPEN_FLAGS)
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
        data = _read_fd(fd, _IGNORE_FILE_LIMIT)
    except OSError as exc:
        log.warning("cannot read %s (%s); its patterns are not applied", rel, exc)
        return []
    finally:
        os.close(fd)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return data.decode("utf-8", "replace").splitlines()


# (directory prefix relative to the root, that directory's .gitignore), from the root down.
_Chain = tuple[tuple[str, _IgnoreFile], ...]


def _chain_says_ignored(chain: _Chain, path: str, is_dir: bool) -> bool:
    """Nested .gitignore semantics: the deepest file with a decisive pattern wins.

    ``path`` is relative to the root; each file sees it relative to its own directory.
    """
    for base, rules in reversed(chain):
        verdict = rules.verdict(path[len(base) :], is_dir)
        if verdict is not None:
            return verdict
    return False


class _Rules:
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
            rel = _relative_inside(root, os.path.realpath(store_dir))
            if rel is not None and rel != ".":
                self.stores.add(rel)
        self.stores.update(d.strip("/") for d in exclude_dirs if d.strip("/") not in ("", "."))
        lines = _read_ignore_lines(root, IGNORE_FILE)
        # After .kenningignore, so a setting can re-include ("!name") what the file left out.
        lines.extend(exclude)
        self.spec = _compile_ignore(lines, "exclude settings") if lines else None
        self._dirs: dict[str, bool] = {}

    def in_store(self, rel: str) -> bool:
        return any(rel == s or rel.startswith(s + "/") for s in self.stores)

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


# -- discovery ---------------------------------------------------------------------------------

# Longest absolute path the system's calls accept (4096 on Linux, 1024 on macOS); a file past it
# cannot be opened by an editor either, so it is counted as skipped with a reason.
try:
    PATH_MAX = int(os.pathconf("/", "PC_PATH_MAX"))
except (OSError, ValueError, AttributeError):
    PATH_MAX = 4096


def _too_long(abs_path: str) -> bool:
    return len(os.fsencode(abs_path)) >= PATH_MAX


def _realpath(path: str) -> str | None:
    """``os.path.realpath``, or None when the path changes under it: realpath ``lstat``s a
    component and then ``readlink``s it, and a link swapped for a directory in between raises
    EINVAL (this aborted whole scans)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _relative_inside(root: str, real: str) -> str | None:
    """``real`` relative to ``root`` (both already realpath'd) as POSIX, "." for the root itself."""
    if real == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    if real.startswith(prefix):
        return real[len(prefix) :]
    return None


def _valid_rel(rel: str) -> bool:
    """A plain relative path: no empty, ``.`` or ``..`` component (git's own output never has
    one, but a repository whose ``core.worktree`` points elsewhere makes git print ``../``)."""
    return bool(rel) and not rel.startswith("/") and all(c not in ("", ".", "..") for c in rel.split("/"))


def _classify(
    root: str, rel: str, abs_path: str, lstat: os.stat_result, rules: _Rules, max_file_size: int
) -> FileEntry | SkipReason:
    st = lstat
    target = rel
    if stat.S_ISLNK(st.st_mode):
        real = _realpath(abs_path)
        if real is None:
            return SkipReason.VANISHED
        real_target = _relative_inside(root, real)
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
    return FileEntry(rel, Path(abs_path), st.st_size, st.st_mtime_ns, root, target)


# Configuration a repository can carry that makes git run a program: forced off on the command
# line, which overrides every config file. ``ls-files`` runs no hooks, filters or diff drivers,
# but an fsmonitor hook it does run; the rest are off so a later change of command stays safe.
_GIT_SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "diff.external=",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
)


def _git_env(*, literal: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS and not k.startswith("GIT_CONFIG")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # never take index.lock away from the user's own git
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    if literal:
        env["GIT_LITERAL_PATHSPECS"] = "1"  # a path given to git is a name, never a glob
    return env


def _git_command(git: str, root: str, *args: str) -> list[str]:
    cmd = [git, "--no-pager"]
    for item in _GIT_SAFE_CONFIG:
        cmd += ["-c", item]
    return [*cmd, "-C", root, *args]


def _git_run(
    args: list[str], root: str, feed: bytes | None = None
) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            args,
            input=feed,
            stdin=subprocess.DEVNULL if feed is None else None,
            capture_output=True,
            env=_git_env(literal=feed is None),  # check-ignore takes names as they are
            cwd=root,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("git in %s failed (%s); walking instead", root, exc)
        return None


def _git_ls_files(root: str, paths: Sequence[str] | None = None) -> list[str] | None:
    """What git would show under ``root`` (or under ``paths`` in it), relative to the root;
    None (logged) if git cannot tell."""
    git = shutil.which("git")
    if git is None:
        log.info("git not found on PATH; walking %s", root)
        return None
    base = _git_command(git, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    tail = ["--", *(os.fsencode(p).decode("utf-8", "surrogateescape") for p in paths)] if paths else []
    attempts = [[*base, "--deduplicate", *tail], [*base, *tail]]  # --deduplicate needs git 2.31
    for i, args in enumerate(attempts):
        proc = _git_run(args, root)
        if proc is None:
            return None
        if proc.returncode == 0:
            # Paths are bytes; surrogateescape keeps names that are not UTF-8 usable as paths.
            return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]
        message = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode == 129 and i == 0:
            continue  # usage error: an older git without --deduplicate
        if "not a git repository" in message:
            log.debug("%s is not in a git work tree; walking it", root)
        else:
            log.warning(
                "git ls-files in %s failed (exit %d: %s); walking instead",
                root,
                proc.returncode,
                message[:500],
            )
        return None
    return None


def _git_explain_ignored(root: str) -> str | None:
    """Why git lists nothing under ``root``: the ignore rule that excludes it, if one does."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        with os.scandir(root) as it:
            sample = [e.name for e in it if e.name not in (".git", STORE_DIRNAME)][:20]
    except OSError:
        return None
    if not sample:
        return None
    feed = b"".join(os.fsencode(name) + b"\0" for name in sample)
    proc = _git_run(_git_command(git, root, "check-ignore", "-v", "-z", "--stdin"), root, feed)
    if proc is None or proc.returncode != 0:
        return None
    fields = proc.stdout.split(b"\0")
    if len(fields) < 4:
        return None
    source, line, pattern = (f.decode("utf-8", "backslashreplace") for f in fields[:3])
    return (
        f"git ignores the files of this folder: pattern {pattern!r} at {source}:{line} "
        "(an ignore file of the repository it lives in); add '!' rules there, or index it "
        "outside that repository"
    )


class _DirCheck:
    """Memoised answer to "is every directory on this path a real directory, not a link?".

    git lists paths from its index, which may name ``dir/a.py`` after ``dir`` was replaced by
    a symlink; ``lstat`` of the full path would then follow ``dir`` out of the tree.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._known: dict[str, SkipReason | None] = {"": None}

    def verdict(self, rel_dir: str) -> SkipReason | None:
        """None: a real directory chain; OUTSIDE_ROOT: a link on the way leads out; NOT_A_FILE:
        a link on the way stays inside (not entered, as in a walk) or it is not a directory."""
        known = self._known
        if rel_dir in known:
            return known[rel_dir]
        parent = rel_dir.rpartition("/")[0]
        verdict = self.verdict(parent) if parent not in known else known[parent]
        if verdict is None:
            abs_dir = self.root + "/" + rel_dir
            try:
                st = os.lstat(abs_dir)
            except OSError:
                verdict = SkipReason.VANISHED
            else:
                if stat.S_ISLNK(st.st_mode):
                    real = _realpath(abs_dir)
                    inside = None if real is None else _relative_inside(self.root, real)
                    verdict = (
                        SkipReason.VANISHED
                        if real is None
                        else SkipReason.OUTSIDE_ROOT
                        if inside is None
                        else SkipReason.NOT_A_FILE
                    )
                elif not stat.S_ISDIR(st.st_mode):
                    verdict = SkipReason.VANISHED
        known[rel_dir] = verdict
        return verdict


def _from_git(root: str, names: list[str], rules: _Rules, max_file_size: int) -> Discovery:
    files: list[FileEntry] = []
    skipped: dict[str, SkipReason] = {}
    seen: set[str] = set()
    dirs = _DirCheck(root)
    prefix = root if root.endswith("/") else root + "/"
    for name in names:
        rel = name.rstrip("/")  # a nested repository is listed as "dir/"
        if not _valid_rel(rel) or rel in seen or rules.path_excluded(rel):
            continue
        seen.add(rel)  # unmerged paths appear once per stage without --deduplicate
        abs_path = prefix + rel
        parent = rel.rpartition("/")[0]
        # Iteratively from the top, so a path thousands of levels deep never recurses deeply.
        parts = parent.split("/") if parent else []
        for depth in range(1, len(parts) + 1):
            dirs.verdict("/".join(parts[:depth]))
        why = dirs.verdict(parent)
        if why is SkipReason.OUTSIDE_ROOT:
            skipped[rel] = why
            continue
        if why is not None:
            continue  # gone, or below a link that stays inside: not entered, as in a walk
        if _too_long(abs_path):
            skipped[rel] = SkipReason.PATH_TOO_LONG
            continue
        try:
            st = os.lstat(abs_path)
        except FileNotFoundError:
            continue  # tracked but deleted from disk: simply not there
        except OSError as exc:
            skipped[rel] = (
                SkipReason.PATH_TOO_LONG if exc.errno == errno.ENAMETOOLONG else SkipReason.UNREADABLE
            )
            continue
        result = _classify(root, rel, abs_path, st, rules, max_file_size)
        if isinstance(result, FileEntry):
            files.append(result)
        else:
            skipped[rel] = result
    return Discovery(files, skipped, "git")


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_dir(root: str, rel_dir: str, expect: tuple[int, int] | None) -> int:
    """An fd for a directory of the walk. Opened relative to the root with the last component
    not followed, then checked against the (dev, inode) its parent's listing showed: a
    directory on the way swapped for a link since would lead elsewhere and is refused."""
    if not rel_dir:
        return os.open(root, _DIR_FLAGS)
    fd = os.open(root + "/" + rel_dir, _DIR_FLAGS | _NOFOLLOW)
    st = os.fstat(fd)
    if expect is not None and (st.st_dev, st.st_ino) != expect:
        os.close(fd)
        raise FileNotFoundError(errno.ENOENT, "replaced while walking", rel_dir)
    return fd


# One directory waiting to be listed: (path relative to the root with a trailing "/" or "",
# the (dev, inode) it was seen with, the .gitignore files that apply to it).
_Pending = tuple[str, "tuple[int, int] | None", _Chain]


class _Walker:
    """A walk of the tree (or of some subtrees) applying nested ``.gitignore`` files as git does.

    Depth-first with an explicit stack: no recursion limit for deep trees, and symlinked
    directories are never entered, so no cycle through links is possible; the (dev, inode) set
    guards against the rest (bind mounts). Each directory is opened with its last component
    not followed and checked against the inode its parent listed, and its entries are looked at
    through that fd: a directory swapped for a link mid-walk is not followed.
    """

    def __init__(
        self, root: str, rules: _Rules, max_file_size: int, skipped: dict[str, SkipReason] | None = None
    ) -> None:
        self.root = root
        self.prefix = root if root.endswith("/") else root + "/"
        self.rules = rules
        self.max_file_size = max_file_size
        self.files: list[FileEntry] = []
        self.skipped: dict[str, SkipReason] = {} if skipped is None else skipped
        root_st = os.stat(root)
        self.visited = {(root_st.st_dev, root_st.st_ino)}
        self.stack: list[_Pending] = []

    def run(self, start: Sequence[_Pending] = ()) -> Discovery:
        self.stack = list(start) if start else [("", None, ())]
        while self.stack:
            rel_dir, expect, chain = self.stack.pop()
            if rel_dir and _too_long(self.prefix + rel_dir):
                self.skipped[rel_dir.rstrip("/")] = SkipReason.PATH_TOO_LONG
                continue
            try:
                fd = _open_dir(self.root, rel_dir.rstrip("/"), expect)
            except FileNotFoundError:
                continue  # removed (or swapped for a link) while we walked
            except OSError as exc:
                if not rel_dir:
                    raise
                if exc.errno == errno.ENAMETOOLONG:
                    self.skipped[rel_dir.rstrip("/")] = SkipReason.PATH_TOO_LONG
                elif exc.errno not in (errno.ELOOP, errno.ENOTDIR):  # became a link or a file
                    log.warning("cannot list %s (%s); its files are not indexed", display_path(rel_dir), exc)
                continue
            try:  # the entries stat through fd: it stays open while they are looked at
                self._list(fd, rel_dir, chain)
            except OSError as exc:
                if not rel_dir:
                    raise
                log.warning("cannot list %s (%s); its files are not indexed", display_path(rel_dir), exc)
            finally:
                os.close(fd)
        return Discovery(self.files, self.skipped, "walk")

    def _list(self, fd: int, rel_dir: str, chain: _Chain) -> None:
        """One directory: its files classified, its subdirectories pushed."""
        with os.scandir(fd) as it:
            entries = list(it)
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                lines = _read_ignore_lines(self.root, rel_dir + ".gitignore")
                rules_here = _compile_ignore(lines, rel_dir + ".gitignore")
                if rules_here is not None:
                    chain = (*chain, (rel_dir, rules_here))
                break
        for entry in entries:
            name = entry.name
            if name == ".git":
                continue
            rel = rel_dir + name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if self.rules.dir_excluded(rel) or _chain_says_ignored(chain, rel, is_dir=True):
                    continue  # pruned: nothing below can be re-included, exactly as in git
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key not in self.visited:
                    self.visited.add(key)
                    self.stack.append((rel + "/", key, chain))
                continue
            if self.rules.file_excluded(rel) or _chain_says_ignored(chain, rel, is_dir=False):
                continue
            abs_path = self.prefix + rel
            if _too_long(abs_path):
                self.skipped[rel] = SkipReason.PATH_TOO_LONG
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError:
                self.skipped[rel] = SkipReason.UNREADABLE
                continue
            result = _classify(self.root, rel, abs_path, st, self.rules, self.max_file_size)
            if isinstance(result, FileEntry):
                self.files.append(result)
            else:
                self.skipped[rel] = result


def _walk_paths(root: str, rels: Sequence[str], rules: _Rules, max_file_size: int) -> Discovery:
    """A walk restricted to ``rels`` (files or directories): each one is judged by the ignore
    files on its way from the root, exactly as a full walk would judge it, without listing the
    rest of the tree."""
    prefix = root + "/"
    # rel dir -> the .gitignore chain that applies to entries inside it (its own file included);
    # None when the directory is pruned, a link, or not there.
    inner: dict[str, _Chain | None] = {}

    def own(rel_dir: str, chain: _Chain) -> _Chain:
        name = rel_dir + "/.gitignore" if rel_dir else ".gitignore"
        rules_here = _compile_ignore(_read_ignore_lines(root, name), name)
        base = rel_dir + "/" if rel_dir else ""
        return (*chain, (base, rules_here)) if rules_here is not None else chain

    def inside(rel_dir: str) -> _Chain | None:
        parts = rel_dir.split("/") if rel_dir else []
        if "" not in inner:
            inner[""] = own("", ())
        chain = inner[""]
        for depth in range(1, len(parts) + 1):
            d = "/".join(parts[:depth])
            if d not in inner:
                inner[d] = _enter(d, chain)
            chain = inner[d]
            if chain is None:
                return None
        return chain

    def _enter(d: str, outer: _Chain | None) -> _Chain | None:
        if outer is None or d.rpartition("/")[2] == ".git":
            return None
        try:
            st = os.lstat(prefix + d)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None  # a link (never entered, as in a walk), a file, or gone
        if rules.dir_excluded(d) or _chain_says_ignored(outer, d, is_dir=True):
            return None
        return own(d, outer)

    files: list[FileEntry] = []
    skipped: dict[str, SkipReason] = {}
    starts: list[_Pending] = []
    for rel in rels:
        parent, _, name = rel.rpartition("/")
        chain = inside(parent)
        if chain is None or name == ".git":
            continue
        abs_path = prefix + rel
        if _too_long(abs_path):
            skipped[rel] = SkipReason.PATH_TOO_LONG
            continue
        try:
            st = os.lstat(abs_path)
        except FileNotFoundError:
            continue
        except OSError:
            skipped[rel] = SkipReason.UNREADABLE
            continue
        if stat.S_ISDIR(st.st_mode):
            if inside(rel) is not None:  # the walk re-reads its own .gitignore when listing it
                starts.append((rel + "/", (st.st_dev, st.st_ino), chain))
            continue
        if rules.file_excluded(rel) or _chain_says_ignored(chain, rel, is_dir=False):
            continue
        result = _classify(root, rel, abs_path, st, rules, max_file_size)
        if isinstance(result, FileEntry):
            files.append(result)
        else:
            skipped[rel] = result
    if starts:
        files.extend(_Walker(root, rules, max_file_size, skipped).run(starts).files)
    return Discovery(files, skipped, "walk")


def discover(
    root: Path,
    *,
    store_dir: Path | None = None,
    exclude: Sequence[str] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    exclude_dirs: Sequence[str] = (),
    paths: Sequence[str] | None = None,
) -> Discovery:
    """The files under ``root`` that belong to the index, and the ones rejected on their stat.

    ``exclude`` holds gitignore-style patterns relative to the root, applied after
    ``.kenningignore``; ``exclude_dirs`` are directories (relative to the root) left out whole,
    like the store. With ``paths`` (relative files or directories), only those are judged —
    by the same rules, ignore files on their way included — without listing the whole tree:
    what a save or a watched-file event needs. Raises ``NotADirectoryError`` / ``OSError``
    only for the root itself.
    """
    real_root = os.path.realpath(root)
    if not os.path.isdir(real_root):
        raise NotADirectoryError(f"workspace root is not a directory: {root}")
    rules = _Rules(real_root, store_dir, exclude, exclude_dirs)
    if paths is not None:
        wanted = sorted({p.strip("/") for p in paths if _valid_rel(p.strip("/"))})
        if not wanted:
            return Discovery([], {}, "walk")
        names = _git_ls_files(real_root, wanted)
        if names is not None:
            found = _from_git(real_root, names, rules, max_file_size)
        else:
            found = _walk_paths(real_root, wanted, rules, max_file_size)
        found.files.sort(key=lambda e: e.path)
        return found
    names = _git_ls_files(real_root)
    if names is not None:
        found = _from_git(real_root, names, rules, max_file_size)
        if not names:
            found.note = _git_explain_ignored(real_root)
    else:
        found = _Walker(real_root, rules, max_file_size).run()
    found.files.sort(key=lambda e: e.path)
    return found


# -- reading -----------------------------------------------------------------------------------

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
_LONG_LINE = re.compile(f"[^\\n]{{{MAX_LINE + 1}}}")


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
    return len(text) > MAX_LINE and _LONG_LINE.search(text) is not None


def _read_fd(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a fifo that appeared since the scan must not block us
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_beneath(root: str | Path, rel: str, flags: int = _OPEN_FLAGS) -> int:
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
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOTDIR and _is_link(name, fd):
                    raise OSError(errno.ELOOP, "a symlink on the way", rel) from None
                raise
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], flags | _NOFOLLOW, dir_fd=fd)
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
        fd = os.open(path, _OPEN_FLAGS) if beneath is None else open_beneath(*beneath)
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
        data = _read_fd(fd, max_file_size + 1)
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

    An entry from :func:`discover` is opened beneath its root without following links (a plain
    path, given by a caller that vetted it, is opened as it is). The hash is of exactly the bytes
    decoded; size and mtime come from the open file descriptor
    *before* reading, so a write that lands during the read leaves a newer mtime on disk and the
    next scan reads the file again. A file caught changing mid-read is read again (up to three
    times) to avoid indexing a torn mix of two versions.
    """
    beneath: tuple[str, str] | None = None
    if isinstance(entry_or_path, FileEntry):
        path = entry_or_path.abs_path
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
    if _looks_generated(text):
        return SkipReason.GENERATED
    return SourceText(
        text=text,
        content_hash=hashlib.blake2b(data, digest_size=16).hexdigest(),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        replaced=replaced,
        encoding=encoding,
    )


# -- names as text -----------------------------------------------------------------------------

# A name that is not valid UTF-8 decodes (os.fsdecode) with lone surrogates U+DC80-U+DCFF, which
# SQLite and JSON cannot carry. In stored text each such byte becomes a private-use character
# U+10FC80-U+10FCFF, and a name that really contains one of those (or the escape U+10FD00) gets
# it escaped: the mapping is exact both ways, and every valid UTF-8 name is stored unchanged.
_STORE_ESC = "\U0010fd00"
_TO_TEXT = re.compile("[\udc80-\udcff\U0010fc80-\U0010fd00]")
_FROM_TEXT = re.compile("\U0010fd00(.)|[\U0010fc80-\U0010fcff]", re.DOTALL)


def _to_text(m: re.Match[str]) -> str:
    c = m.group()
    return chr(ord(c) - 0xDC00 + 0x10FC00) if c < "\ue000" else _STORE_ESC + c


def _from_text(m: re.Match[str]) -> str:
    escaped = m.group(1)
    return escaped if escaped is not None else chr(ord(m.group()) - 0x10FC00 + 0xDC00)


def path_to_text(path: str) -> str:
    """A relative path (surrogate-escaped, as discovery gives it) as storable, valid text."""
    return path if path.isascii() else _TO_TEXT.sub(_to_text, path)


def text_to_path(text: str) -> str:
    """The inverse of :func:`path_to_text`: the path, its bytes exactly as on disk."""
    return text if text.isascii() else _FROM_TEXT.sub(_from_text, text)


def stored_path_is_plain(path: str) -> bool:
    """Whether a path read back from the store is what kenning writes: relative, no ``..``, no
    empty or ``.`` part, no NUL. Anything else came from a database kenning did not write (a WAL
    planted beside an authentic one, say) and must never become a location shown to the user."""
    if not path or "\0" in path or path.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def display_path(path: str | Path) -> str:
    """A path for people (terminal, log, message): bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


# -- paths from clients ------------------------------------------------------------------------


def resolve_inside(roots: Sequence[Path], path: str | Path) -> tuple[Path, str] | None:
    """(root, POSIX path relative to it) if ``path`` really lies inside one of ``roots``.

    Both sides are realpath'd first, so ``..`` segments and symlinks are judged by where they
    lead. The innermost root wins when roots nest; the root itself comes back as ".". Relative
    paths (ambiguous) and paths with NUL bytes are refused (None).
    """
    try:
        raw = os.fspath(path)
        if "\0" in raw or not os.path.isabs(raw):
            return None
        real = os.path.realpath(raw)
    except (TypeError, ValueError, OSError):
        return None
    best: tuple[Path, str] | None = None
    best_len = -1
    for root in roots:
        try:
            real_root = os.path.realpath(root)
        except (TypeError, ValueError, OSError):
            continue
        rel = _relative_inside(real_root, real)
        if rel is not None and len(real_root) > best_len:
            best, best_len = (root, rel), len(real_root)
    return best


def uri_to_path(uri: str) -> Path | None:
    """The local path of a ``file:`` URI (percent-decoded), or None for anything else.

    Refused: other schemes (``untitled:``, ``http:``), a host other than localhost, a query or
    fragment, relative or NUL-containing paths. The result is not yet vetted: pass it to
    :func:`resolve_inside`.
    """
    if not isinstance(uri, str):
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    if parts.query or parts.fragment:
        return None
    # Decode to bytes, then to a filesystem name: names that are not UTF-8 survive the trip.
    path = os.fsdecode(unquote_to_bytes(parts.path))
    if not path.startswith("/") or "\0" in path:
        return None
    return Path(path)


def path_to_uri(path: Path | str) -> str:
    """The ``file:`` URI of an absolute path (percent-encoded as VS Code does)."""
    raw = os.fspath(path)
    if not os.path.isabs(raw):
        raise ValueError(f"not an absolute path: {raw!r}")
    return "file://" + quote(os.fsencode(raw), safe="/")
