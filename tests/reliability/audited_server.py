"""``kenning serve`` with a Python audit hook that records every file the server opens or lists
under ``$KENNING_TEST_WATCH_DIR`` into ``$KENNING_TEST_AUDIT_LOG``.

Observation only (the product code is untouched): ``sys.addaudithook`` sees ``open`` for
``open()``/``os.open()`` and ``os.listdir``/``os.scandir``, which is every way kenning reads a
file or a directory. Run as ``python -m tests.reliability.audited_server``.
"""

from __future__ import annotations

import os
import sys
import threading

_WATCH = os.path.realpath(os.environ["KENNING_TEST_WATCH_DIR"])
_LOG = os.environ["KENNING_TEST_AUDIT_LOG"]
# kenning.open_beneath: kenning opens workspace files one component at a time through
# directory fds (the plain "open" events then carry bare names); this event names root + path.
_EVENTS = ("open", "os.listdir", "os.scandir", "kenning.open_beneath")
_busy = threading.local()


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event not in _EVENTS or not args or getattr(_busy, "on", False):
        return
    target = args[0]
    if not isinstance(target, str | bytes | os.PathLike):
        return  # a file descriptor
    _busy.on = True  # the realpath and the write below must not audit themselves
    try:
        if event == "kenning.open_beneath":
            # What is opened is the path as written below the real root: a link on the way
            # makes the open fail rather than lead elsewhere.
            path = os.path.join(os.path.realpath(os.fsdecode(target)), os.fsdecode(args[1]))  # type: ignore[arg-type]
            event = "open"
        else:
            path = os.path.realpath(os.fsdecode(os.fspath(target)))
        if path == _WATCH or path.startswith(_WATCH + os.sep):
            fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, f"{event} {path}\n".encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
    finally:
        _busy.on = False


sys.addaudithook(_hook)

if __name__ == "__main__":
    from kenning.cli import main

    sys.exit(main(["serve"]))
