"""Positions on the wire: LSP counts a line's characters in UTF-16 code units, kenning's engine
in code points (what Python's ``len`` counts); the two differ for characters past U+FFFF."""

from __future__ import annotations


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units: an LSP ``character`` at its end."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
