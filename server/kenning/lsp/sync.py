"""Keeping the index current as files change.

Powers, in the editor: a saved file becoming findable within a fraction of a second
(``textDocument/didSave``), and files changed outside the editor — a branch switch, a
formatter, a rename or delete in the explorer — following (``workspace/didChangeWatchedFiles``,
``didRenameFiles``, ``didDeleteFiles``). Each event only marks paths dirty; the folder worker
re-indexes them in the background.
"""

from __future__ import annotations

import logging

from lsprotocol import types as T

from kenning.folder import FolderIndex
from kenning.lsp.server import KenningServer, server

log = logging.getLogger("kenning")


def _mark(ls: KenningServer, uris: list[str]) -> None:
    by_folder: dict[str, tuple[FolderIndex, list[str]]] = {}
    for uri in uris:
        found = ls.locate(uri)
        if found is None:
            continue
        folder, rel = found
        by_folder.setdefault(folder.uri, (folder, []))[1].append(rel)
    for folder, rels in by_folder.values():
        folder.mark_dirty(rels)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def on_did_save(ls: KenningServer, params: T.DidSaveTextDocumentParams) -> None:
    _mark(ls, [params.text_document.uri])


@server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched_files(ls: KenningServer, params: T.DidChangeWatchedFilesParams) -> None:
    _mark(ls, [c.uri for c in params.changes])


@server.feature(T.WORKSPACE_DID_RENAME_FILES)
def on_did_rename(ls: KenningServer, params: T.RenameFilesParams) -> None:
    _mark(ls, [u for f in params.files for u in (f.old_uri, f.new_uri)])


@server.feature(T.WORKSPACE_DID_DELETE_FILES)
def on_did_delete(ls: KenningServer, params: T.DeleteFilesParams) -> None:
    _mark(ls, [f.uri for f in params.files])
