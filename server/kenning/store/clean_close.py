"""The record a writer leaves when it closed the database cleanly, so that the next open can
skip SQLite's ``PRAGMA quick_check``.

The check reads every page: 3.1 s of a million-chunk store's 5.7 s open, paid on every start
although a database that SQLite closed cleanly, and that nobody touched since, cannot have
changed. The record holds a keyed MAC of the file's identity as the close left it (device,
inode, size, mtime and ctime in nanoseconds, with no WAL beside it), so it vouches for exactly
that file: any write since — by kenning, by SQLite, by anyone rewriting or copying the file, or
restoring its mtime (the ctime still moves) — and the check runs as before. A repository cannot
forge it: the key is the user's store key, which never leaves the user's state directory.

It vouches for one open only: the open removes it before it decides, so a process killed
later leaves no record and the next start checks again.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
from pathlib import Path

from kenning.store.trust import same_mac

log = logging.getLogger(__name__)

CLEAN_CLOSE_FILENAME = "clean-close"
_MAX_BYTES = 256  # a record is 64 hex digits; anything longer is not ours


def _file_state(db_path: Path) -> bytes | None:
    """The database file's identity as SQLite left it, or None when it is not checkable now
    (missing, not a regular file, or a WAL with frames beside it)."""
    try:
        st = os.lstat(db_path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        if os.lstat(f"{db_path}-wal").st_size > 0:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode()


def _mac(token: str, state: bytes) -> str:
    return hmac.new(token.encode(), b"kenning-clean-close-v1\0" + state, hashlib.sha256).hexdigest()


def record_clean_close(db_path: Path, token: str) -> bool:
    """After the last connection closed: vouch for the file as it is. Best effort (a full disk
    or a read-only directory only means the next open checks); True when written."""
    state = _file_state(db_path)
    if state is None:
        return False
    record = db_path.parent / CLEAN_CLOSE_FILENAME
    try:
        record.unlink(missing_ok=True)
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, _mac(token, state).encode())
        finally:
            os.close(fd)
    except OSError as exc:
        # A partly written record fails its MAC: the next open checks, as without one.
        log.debug("no clean-close record for %s: %s", db_path.name, exc)
        return False
    return True


def take_clean_close(db_path: Path, token: str) -> bool:
    """Whether the database is exactly as a clean close left it. The record is removed either
    way (before the answer: one that cannot be removed vouches for nothing)."""
    record = db_path.parent / CLEAN_CLOSE_FILENAME
    try:
        fd = os.open(record, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        data = os.read(fd, _MAX_BYTES + 1) if regular else b""
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        record.unlink()
    except OSError:
        return False
    state = _file_state(db_path)
    if state is None or not data or len(data) > _MAX_BYTES:
        return False
    return same_mac(data.decode("ascii", errors="replace"), _mac(token, state))
