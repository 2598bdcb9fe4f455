"""Names as text: any bytes a file system allows in a name become text that SQLite and JSON can
carry and that converts back to exactly those bytes; a stored path is checked before it is
shown; a path is shown to people with undecodable bytes as ``\\xNN``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

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
