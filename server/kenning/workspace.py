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
  of exactly the bytes that were decoded. Every failure is a reason, never an exception.
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
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

import pathspec

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "IGNORE_FILE",
    "STORE_DIR_NAME",
    "Discovery",
    "FileEntry",
    "SkipReason",
    "SourceText",
    "discover",
    "path_to_uri",
    "read_source",
    "resolve_inside",
    "uri_to_path",
]

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
STORE_DIR_NAME = ".kenning"  # the default store, <root>/.kenning/, is never indexed
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

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file that belongs to the index, with the ``stat`` it was discovered with."""

    path: str  # POSIX path relative to the root ("src/a.py")
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass(slots=True)
class Discovery:
    files: list[FileEntry]  # sorted by path
    skipped: dict[str, SkipReason]  # rel path -> reason, for files rejected by stat-level rules
    method: str = "walk"  # "git" (git ls-files) or "walk" — for logs and stats


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


def _read_ignore_lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = f.read(1024 * 1024)  # an ignore file is small; a huge one is not read whole
    except OSError as exc:
        log.warning("cannot read %s (%s); its patterns are not applied", path, exc)
        return []
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
    """The exclusions kenning adds on top of git's: store dirs, .kenningignore, ``exclude``."""

    def __init__(self, root: str, store_dir: Path | None, exclude: Sequence[str]) -> None:
        self.stores = {STORE_DIR_NAME}
        if store_dir is not None:
            rel = _relative_inside(root, os.path.realpath(store_dir))
            if rel is not None and rel != ".":
                self.stores.add(rel)
        lines: list[str] = []
        ignore_file = os.path.join(root, IGNORE_FILE)
        if os.path.isfile(ignore_file):
            lines.extend(_read_ignore_lines(ignore_file))
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


def _relative_inside(root: str, real: str) -> str | None:
    """``real`` relative to ``root`` (both already realpath'd) as POSIX, "." for the root itself."""
    if real == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    if real.startswith(prefix):
        return real[len(prefix) :]
    return None


def _classify(
    root: str, rel: str, abs_path: str, lstat: os.stat_result, rules: _Rules, max_file_size: int
) -> FileEntry | SkipReason:
    st = lstat
    if stat.S_ISLNK(st.st_mode):
        target = _relative_inside(root, os.path.realpath(abs_path))
        if target is None:
            return SkipReason.OUTSIDE_ROOT
        if target != "." and (rules.in_store(target) or ".git" in target.split("/")):
            # Inside the root, but somewhere the index never looks: treat as outside.
            return SkipReason.OUTSIDE_ROOT
        try:
            st = os.stat(abs_path)
        except OSError:
            return SkipReason.BROKEN_LINK  # dangling, or a loop (ELOOP)
    if not stat.S_ISREG(st.st_mode):
        return SkipReason.NOT_A_FILE
    if st.st_size > max_file_size:
        return SkipReason.TOO_LARGE
    return FileEntry(rel, Path(abs_path), st.st_size, st.st_mtime_ns)


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # never take index.lock away from the user's own git
    return env


def _git_ls_files(root: str) -> list[str] | None:
    """What git would show under ``root``, relative to it; None (logged) if git cannot tell."""
    git = shutil.which("git")
    if git is None:
        log.info("git not found on PATH; walking %s", root)
        return None
    base = [git, "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    attempts = [[*base, "--deduplicate"], base]  # --deduplicate needs git 2.31
    for i, args in enumerate(attempts):
        try:
            proc = subprocess.run(
                args,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=_git_env(),
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("git ls-files in %s failed (%s); walking instead", root, exc)
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


def _from_git(root: str, names: list[str], rules: _Rules, max_file_size: int) -> Discovery:
    files: list[FileEntry] = []
    skipped: dict[str, SkipReason] = {}
    seen: set[str] = set()
    prefix = root if root.endswith("/") else root + "/"
    for name in names:
        rel = name.rstrip("/")  # a nested repository is listed as "dir/"
        if not rel or rel in seen or rules.path_excluded(rel):
            continue
        seen.add(rel)  # unmerged paths appear once per stage without --deduplicate
        abs_path = prefix + rel
        try:
            st = os.lstat(abs_path)
        except FileNotFoundError:
            continue  # tracked but deleted from disk: simply not there
        except OSError:
            skipped[rel] = SkipReason.UNREADABLE
            continue
        result = _classify(root, rel, abs_path, st, rules, max_file_size)
        if isinstance(result, FileEntry):
            files.append(result)
        else:
            skipped[rel] = result
    return Discovery(files, skipped, "git")


def _walk(root: str, rules: _Rules, max_file_size: int) -> Discovery:
    files: list[FileEntry] = []
    skipped: dict[str, SkipReason] = {}
    root_st = os.stat(root)
    visited = {(root_st.st_dev, root_st.st_ino)}
    # Depth-first with an explicit stack: no recursion limit for deep trees, and symlinked
    # directories are never entered, so no cycle through links is possible; the (dev, inode) set
    # guards against the rest (bind mounts).
    stack: list[tuple[str, str, _Chain]] = [("", root, ())]
    while stack:
        rel_dir, abs_dir, chain = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except FileNotFoundError:
            continue  # removed while we walked
        except OSError as exc:
            if not rel_dir:
                raise
            log.warning("cannot list %s (%s); its files are not indexed", abs_dir, exc)
            continue
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                rules_here = _compile_ignore(_read_ignore_lines(entry.path), entry.path)
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
                if rules.dir_excluded(rel) or _chain_says_ignored(chain, rel, is_dir=True):
                    continue  # pruned: nothing below can be re-included, exactly as in git
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key not in visited:
                    visited.add(key)
                    stack.append((rel + "/", entry.path, chain))
                continue
            if rules.file_excluded(rel) or _chain_says_ignored(chain, rel, is_dir=False):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError:
                skipped[rel] = SkipReason.UNREADABLE
                continue
            result = _classify(root, rel, entry.path, st, rules, max_file_size)
            if isinstance(result, FileEntry):
                files.append(result)
            else:
                skipped[rel] = result
    return Discovery(files, skipped, "walk")


def discover(
    root: Path,
    *,
    store_dir: Path | None = None,
    exclude: Sequence[str] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
) -> Discovery:
    """The files under ``root`` that belong to the index, and the ones rejected on their stat.

    ``exclude`` holds gitignore-style patterns relative to the root, applied after
    ``.kenningignore``. Raises ``NotADirectoryError`` / ``OSError`` only for the root itself.
    """
    real_root = os.path.realpath(root)
    if not os.path.isdir(real_root):
        raise NotADirectoryError(f"workspace root is not a directory: {root}")
    rules = _Rules(real_root, store_dir, exclude)
    names = _git_ls_files(real_root)
    if names is not None:
        found = _from_git(real_root, names, rules, max_file_size)
    else:
        found = _walk(real_root, rules, max_file_size)
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


def _read_once(path: Path, max_file_size: int) -> tuple[bytes, os.stat_result, bool] | SkipReason:
    """(bytes, fstat before reading, unchanged while reading?) or a reason."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return SkipReason.VANISHED
    except PermissionError:
        return SkipReason.UNREADABLE
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return SkipReason.BROKEN_LINK
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

    The hash is of exactly the bytes decoded; size and mtime come from the open file descriptor
    *before* reading, so a write that lands during the read leaves a newer mtime on disk and the
    next scan reads the file again. A file caught changing mid-read is read again (up to three
    times) to avoid indexing a torn mix of two versions.
    """
    path = entry_or_path.abs_path if isinstance(entry_or_path, FileEntry) else Path(entry_or_path)
    for _attempt in range(3):
        got = _read_once(path, max_file_size)
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
