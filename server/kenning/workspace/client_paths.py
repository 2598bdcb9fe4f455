"""Paths that come from a client (:func:`resolve_inside`, :func:`uri_to_path`,
:func:`path_to_uri`): every one is resolved (symlinks and ``..`` included) and accepted only if it
lies inside a workspace root; ``file:`` URIs to paths and back.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

from kenning.workspace.files import relative_inside


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
        rel = relative_inside(real_root, real)
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
