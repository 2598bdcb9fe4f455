"""The writer lock: one process writes a store at a time, and everybody can see who it is.

``fcntl.flock`` on ``<store>/lock`` is released by the kernel when the holder dies, so a kill -9
never leaves a stale lock behind; the file's text only names the holder for error messages.
The file is opened without following a symlink, and anything at its place that is not a plain
file of this user's (a link git wrote there, a FIFO) is moved aside, never written through.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import sys
from pathlib import Path

from kenning.store.trust import aside_name, foreign_file

LOCK_FILENAME = "lock"

log = logging.getLogger(__name__)


class LockHeld(Exception):
    """Another process is writing this store."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"the index at {path.parent} is being written by {holder}")
        self.holder = holder


class WriterLock:
    def __init__(self, store_dir: Path) -> None:
        self.path = store_dir / LOCK_FILENAME
        self._fd: int | None = None

    def acquire(self) -> None:
        why = foreign_file(self.path)
        if why is not None:
            aside = aside_name(self.path, "foreign")
            log.warning("%s %s: moving it aside to %s, untouched", self.path, why, aside.name)
            os.rename(self.path, aside)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                holder = text or "another process"
            finally:
                os.close(fd)
            raise LockHeld(self.path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        text = f"pid {os.getpid()} on {socket.gethostname()} ({' '.join(sys.argv[:2])})\n"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text.encode(), 0)
        except OSError as exc:  # a full disk: the lock holds all the same, only unnamed
            log.warning("cannot write the lock holder's name into %s: %s", self.path, exc)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None
