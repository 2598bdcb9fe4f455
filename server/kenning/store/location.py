"""Which directory is a workspace's store, and the rule that kenning only ever uses its own.

A store directory is one kenning created (or found empty and owned by this user) and marked with
an authenticated ``kenning-store`` file (see ``trust``). Anything else at the requested place — a
symlink, a regular file, a directory of someone else's files, a ``.kenning/`` the repository
shipped — is never written into, chmodded or cleaned:

- at the default place, ``<root>/.kenning``, the index moves to a private store in the user's
  cache directory (``stores/<folder name>-<hash of the root path>``), so a hostile repository
  cannot stop its own indexing; the foreign ``.kenning`` is left exactly as it was;
- at a place the user named (``--store``, ``KENNING_STORE``, ``storePath``) kenning refuses
  with an error that says why, since using another place silently would surprise them.

A relative store path must stay inside the workspace once resolved (a repository's symlink must
not carry the store elsewhere). The chosen directory gets mode 0700 and a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kenning.config import STORE_DIRNAME, Config
from kenning.store.trust import (
    StoreRefused,
    cache_dir,
    is_marker_temp,
    read_marker,
    write_marker,
)

log = logging.getLogger(__name__)

GITIGNORE_TEXT = "# kenning's index: never commit it\n*\n"


@dataclass(frozen=True, slots=True)
class StoreDir:
    path: Path
    store_id: str
    dev: int
    ino: int
    fallback_from: Path | None = None  # the foreign default store this one stands in for


def requested_store(root: Path, config: Config) -> tuple[Path, bool]:
    """(where the store should be, whether that is the default ``<root>/.kenning``)."""
    path = config.store_dir(root)
    return path, path == root / STORE_DIRNAME


def fallback_store(root: Path) -> Path:
    """The private store used when ``<root>/.kenning`` is not kenning's."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", root.name)[:40] or "root"
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return cache_dir() / "stores" / f"{name}-{digest}"


def open_store_dir(root: Path, config: Config, key: bytes) -> StoreDir:
    """Find or make the workspace's store directory; raise ``StoreRefused`` with a reason."""
    path, default = requested_store(root, config)
    explicit_relative = not default and not _named_absolute(config)
    target = _resolve_parent(path)
    if explicit_relative and not _inside(target, root):
        raise StoreRefused(
            f"the store path {path} resolves to {target}, outside the workspace {root}:"
            " a relative store path must stay inside it (use an absolute path to put it elsewhere)"
        )
    try:
        return _claim(target, key)
    except StoreRefused as exc:
        if not default:
            raise
        other = fallback_store(root)
        log.warning(
            "%s; it is left untouched and the index of %s lives in %s instead"
            " (delete %s to have it there again)",
            exc,
            root,
            other,
            target,
        )
        claimed = _claim(_resolve_parent(other, make_parents=True), key)
        return StoreDir(claimed.path, claimed.store_id, claimed.dev, claimed.ino, fallback_from=target)


def _named_absolute(config: Config) -> bool:
    if config.store is not None:
        return config.store.is_absolute()
    env = os.environ.get("KENNING_STORE")
    return env is not None and env != "" and Path(env).expanduser().is_absolute()


def _resolve_parent(path: Path, *, make_parents: bool = False) -> Path:
    """``path`` with its parent resolved (symlinks there are the user's) and its last
    component kept as it is, so that a symlink there is seen, never followed."""
    if path.name in ("", ".", ".."):
        return Path(os.path.realpath(path))
    if make_parents:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreRefused(f"cannot create {path.parent} for the index: {exc}") from exc
    return Path(os.path.realpath(path.parent)) / path.name


def _inside(path: Path, root: Path) -> bool:
    try:
        return os.path.commonpath([path, root]) == str(root)
    except ValueError:
        return False


def _claim(target: Path, key: bytes) -> StoreDir:
    """Use ``target`` as the store if it is kenning's, new, or an empty directory of ours."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.mkdir(target, 0o700)
        except FileExistsError:
            pass  # another process made it first: judged below like any existing directory
        except OSError as exc:
            raise StoreRefused(f"cannot create the index directory {target}: {exc}") from exc
        st = os.lstat(target)
    except OSError as exc:
        raise StoreRefused(f"cannot use {target} for the index: {exc}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise StoreRefused(f"{target} is a symbolic link, not an index directory kenning made")
    if not stat.S_ISDIR(st.st_mode):
        raise StoreRefused(f"{target} is a file, not an index directory kenning made")
    store_id = read_marker(target, key)
    if store_id is None:
        try:
            entries = [n for n in os.listdir(target) if not is_marker_temp(n)]
        except OSError as exc:
            raise StoreRefused(f"cannot list {target}: {exc}") from exc
        if entries:
            raise StoreRefused(
                f"{target} holds files kenning did not write (no valid {target.name}/kenning-store"
                " marker): it is not used as an index"
            )
        if st.st_uid != os.getuid():
            raise StoreRefused(f"{target} belongs to another user: it is not used as an index")
        try:
            store_id = write_marker(target, key)
        except OSError as exc:
            raise StoreRefused(f"cannot mark {target} as kenning's index: {exc}") from exc
    _make_private(target)
    return StoreDir(target, store_id, st.st_dev, st.st_ino)


def _make_private(store: Path) -> None:
    with contextlib.suppress(OSError):  # a store on a filesystem without modes still works
        fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    ignore = store / ".gitignore"
    try:
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        log.warning("cannot write %s: %s", ignore, exc)
        return
    try:
        os.write(fd, GITIGNORE_TEXT.encode())
    finally:
        os.close(fd)
