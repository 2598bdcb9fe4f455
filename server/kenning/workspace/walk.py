"""The walk: a workspace root (or some of its subtrees) listed without git, applying nested
``.gitignore`` files the way git does, never following a symlinked directory, every directory
opened without following its last component and checked against the inode its parent listed.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import stat
from collections.abc import Sequence

from kenning.workspace.entries import Discovery, FileEntry, SkipReason
from kenning.workspace.files import classify, stat_candidate, too_long
from kenning.workspace.ignore import Chain, Rules, chain_says_ignored, compile_ignore, read_ignore_lines
from kenning.workspace.names import display_path
from kenning.workspace.reading import DIR_FLAGS, NOFOLLOW

log = logging.getLogger("kenning.workspace")


def _open_dir(root: str, rel_dir: str, expect: tuple[int, int] | None) -> int:
    """An fd for a directory of the walk. Opened relative to the root with the last component
    not followed, then checked against the (dev, inode) its parent's listing showed: a
    directory on the way swapped for a link since would lead elsewhere and is refused."""
    if not rel_dir:
        return os.open(root, DIR_FLAGS)
    fd = os.open(root + "/" + rel_dir, DIR_FLAGS | NOFOLLOW)
    st = os.fstat(fd)
    if expect is not None and (st.st_dev, st.st_ino) != expect:
        os.close(fd)
        raise FileNotFoundError(errno.ENOENT, "replaced while walking", rel_dir)
    return fd


# One directory waiting to be listed: (path relative to the root with a trailing "/" or "",
# the (dev, inode) it was seen with, the .gitignore files that apply to it).
_Pending = tuple[str, "tuple[int, int] | None", Chain]


class Walker:
    """A walk of the tree (or of some subtrees) applying nested ``.gitignore`` files as git does.

    Depth-first with an explicit stack: no recursion limit for deep trees, and symlinked
    directories are never entered, so no cycle through links is possible; the (dev, inode) set
    guards against the rest (bind mounts). Each directory is opened with its last component
    not followed and checked against the inode its parent listed, and its entries are looked at
    through that fd: a directory swapped for a link mid-walk is not followed.
    """

    def __init__(
        self, root: str, rules: Rules, max_file_size: int, skipped: dict[str, SkipReason] | None = None
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
            if rel_dir and too_long(self.prefix + rel_dir):
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

    def _list(self, fd: int, rel_dir: str, chain: Chain) -> None:
        """One directory: its files classified, its subdirectories pushed."""
        with os.scandir(fd) as it:
            entries = list(it)
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                lines = read_ignore_lines(self.root, rel_dir + ".gitignore")
                rules_here = compile_ignore(lines, rel_dir + ".gitignore")
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
                if self.rules.dir_excluded(rel) or chain_says_ignored(chain, rel, is_dir=True):
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
            if self.rules.file_excluded(rel) or chain_says_ignored(chain, rel, is_dir=False):
                continue
            abs_path = self.prefix + rel
            # Stat through the listed entry (the directory's descriptor), never the full path.
            found = stat_candidate(abs_path, functools.partial(entry.stat, follow_symlinks=False))
            if found is None:
                continue
            if isinstance(found, SkipReason):
                self.skipped[rel] = found
                continue
            result = classify(self.root, rel, abs_path, found, self.rules, self.max_file_size)
            if isinstance(result, FileEntry):
                self.files.append(result)
            else:
                self.skipped[rel] = result


def walk_paths(root: str, rels: Sequence[str], rules: Rules, max_file_size: int) -> Discovery:
    """A walk restricted to ``rels`` (files or directories): each one is judged by the ignore
    files on its way from the root, exactly as a full walk would judge it, without listing the
    rest of the tree."""
    prefix = root + "/"
    # rel dir -> the .gitignore chain that applies to entries inside it (its own file included);
    # None when the directory is pruned, a link, or not there.
    inner: dict[str, Chain | None] = {}

    def own(rel_dir: str, chain: Chain) -> Chain:
        name = rel_dir + "/.gitignore" if rel_dir else ".gitignore"
        rules_here = compile_ignore(read_ignore_lines(root, name), name)
        base = rel_dir + "/" if rel_dir else ""
        return (*chain, (base, rules_here)) if rules_here is not None else chain

    def inside(rel_dir: str) -> Chain | None:
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

    def _enter(d: str, outer: Chain | None) -> Chain | None:
        if outer is None or d.rpartition("/")[2] == ".git":
            return None
        try:
            st = os.lstat(prefix + d)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None  # a link (never entered, as in a walk), a file, or gone
        if rules.dir_excluded(d) or chain_says_ignored(outer, d, is_dir=True):
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
        st = stat_candidate(abs_path)
        if st is None:
            continue
        if isinstance(st, SkipReason):
            skipped[rel] = st
            continue
        if stat.S_ISDIR(st.st_mode):
            if inside(rel) is not None:  # the walk re-reads its own .gitignore when listing it
                starts.append((rel + "/", (st.st_dev, st.st_ino), chain))
            continue
        if rules.file_excluded(rel) or chain_says_ignored(chain, rel, is_dir=False):
            continue
        result = classify(root, rel, abs_path, st, rules, max_file_size)
        if isinstance(result, FileEntry):
            files.append(result)
        else:
            skipped[rel] = result
    if starts:
        files.extend(Walker(root, rules, max_file_size, skipped).run(starts).files)
    return Discovery(files, skipped, "walk")
