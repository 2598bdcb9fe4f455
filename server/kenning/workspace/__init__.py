"""The workspace: which files belong to a root's index, how to read them safely, and which
paths are ours. Nothing here imports pygls: the language server, MCP and the CLI build on it.

| module | owns |
|---|---|
| ``entries`` | the data: :class:`FileEntry`, :class:`Discovery`, :class:`SourceText`, :class:`SkipReason` |
| ``discovery`` | :func:`discover`: git's listing (judged path by path) or the walk, under one set of rules |
| ``walk`` | the listing without git: nested ``.gitignore`` files as git applies them, no link followed |
| ``git`` | the hardened git runner (``ls-files``, ``check-ignore``) |
| ``ignore`` | ``.gitignore`` / ``.kenningignore`` / ``exclude`` rules and the directories never indexed |
| ``files`` | paths relative to a real root; the ``stat``-level verdict on one file |
| ``reading`` | :func:`read_source`, :func:`open_beneath`: content rules, decoding, reads beneath the root |
| ``names`` | any-byte names as storable text and back; paths shown to people |
| ``client_paths`` | paths and ``file:`` URIs from clients, vetted against the roots |

The names below are the package's public surface, re-exported so callers need not know which
module holds each one.
"""

from __future__ import annotations

from kenning.workspace.client_paths import path_to_uri, resolve_inside, uri_to_path
from kenning.workspace.discovery import discover
from kenning.workspace.entries import Discovery, FileEntry, SkipReason, SourceText
from kenning.workspace.ignore import IGNORE_FILE
from kenning.workspace.names import display_path, path_to_text, stored_path_is_plain, text_to_path
from kenning.workspace.reading import open_beneath, read_source

__all__ = [
    "IGNORE_FILE",
    "Discovery",
    "FileEntry",
    "SkipReason",
    "SourceText",
    "discover",
    "display_path",
    "open_beneath",
    "path_to_text",
    "path_to_uri",
    "read_source",
    "resolve_inside",
    "stored_path_is_plain",
    "text_to_path",
    "uri_to_path",
]
