"""Which files belong to a workspace root's index (:func:`discover`).

Inside a git work tree they are what git itself shows (tracked plus untracked-not-ignored, from
``git ls-files``); elsewhere a walk that applies nested ``.gitignore`` files the way git does.
Both honour ``.kenningignore`` and the user's ``exclude`` globs, and both skip ``.git``, the
index's own store directory and anything that only a symlink makes look local. Files rejected on
their ``stat`` (too large, not a regular file, a link leading outside) come with a
:class:`~kenning.workspace.entries.SkipReason`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from kenning.config import DEFAULT_MAX_FILE_SIZE
from kenning.workspace.entries import Discovery, FileEntry, SkipReason
from kenning.workspace.files import classify, realpath, relative_inside, stat_candidate, valid_rel
from kenning.workspace.git import git_explain_ignored, git_ls_files
from kenning.workspace.ignore import Rules
from kenning.workspace.walk import Walker, walk_paths


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
                    real = realpath(abs_dir)
                    inside = None if real is None else relative_inside(self.root, real)
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


def _from_git(root: str, names: list[str], rules: Rules, max_file_size: int) -> Discovery:
    files: list[FileEntry] = []
    skipped: dict[str, SkipReason] = {}
    seen: set[str] = set()
    dirs = _DirCheck(root)
    prefix = root if root.endswith("/") else root + "/"
    for name in names:
        rel = name.rstrip("/")  # a nested repository is listed as "dir/"
        if not valid_rel(rel) or rel in seen or rules.path_excluded(rel):
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
        st = stat_candidate(abs_path)
        if st is None:
            continue  # tracked but deleted from disk: simply not there
        if isinstance(st, SkipReason):
            skipped[rel] = st
            continue
        result = classify(root, rel, abs_path, st, rules, max_file_size)
        if isinstance(result, FileEntry):
            files.append(result)
        else:
            skipped[rel] = result
    return Discovery(files, skipped, "git")


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
    rules = Rules(real_root, store_dir, exclude, exclude_dirs)
    if paths is not None:
        wanted = sorted({p.strip("/") for p in paths if valid_rel(p.strip("/"))})
        if not wanted:
            return Discovery([], {}, "walk")
        names = git_ls_files(real_root, wanted)
        if names is not None:
            found = _from_git(real_root, names, rules, max_file_size)
        else:
            found = walk_paths(real_root, wanted, rules, max_file_size)
        found.files.sort(key=lambda e: e.path)
        return found
    names = git_ls_files(real_root)
    if names is not None:
        found = _from_git(real_root, names, rules, max_file_size)
        if not names:
            found.note = git_explain_ignored(real_root)
    else:
        found = Walker(real_root, rules, max_file_size).run()
    found.files.sort(key=lambda e: e.path)
    return found
