"""Go to Symbol in Workspace.

Powers, in the editor: `Go to Symbol in Workspace` (Ctrl+T in VS Code, ``vim.lsp.buf.workspace_symbol``
in Neovim): ``workspace/symbol``, fuzzy search over every folder's definitions.
"""

from __future__ import annotations

import logging
import threading

from lsprotocol import types as T

from kenning.lsp import protocol as P
from kenning.lsp.requests import FolderClosed, run_cancellable, unless_closed
from kenning.lsp.server import KenningServer, server
from kenning.symbols import QUERY_WAIT_S
from kenning.workspace import (
    path_to_uri,
    text_to_path,
)

log = logging.getLogger("kenning")


SYMBOL_KINDS: dict[str, T.SymbolKind] = {
    "class": T.SymbolKind.Class,
    "interface": T.SymbolKind.Interface,
    "struct": T.SymbolKind.Struct,
    "enum": T.SymbolKind.Enum,
    "trait": T.SymbolKind.Interface,
    "type": T.SymbolKind.TypeParameter,
    "function": T.SymbolKind.Function,
    "method": T.SymbolKind.Method,
    "constructor": T.SymbolKind.Constructor,
    "module": T.SymbolKind.Module,
    "namespace": T.SymbolKind.Namespace,
    "constant": T.SymbolKind.Constant,
    "variable": T.SymbolKind.Variable,
    "field": T.SymbolKind.Field,
    "property": T.SymbolKind.Property,
    "event": T.SymbolKind.Event,
    "enum_member": T.SymbolKind.EnumMember,
    "macro": T.SymbolKind.Function,
}


@server.feature(T.WORKSPACE_SYMBOL)
async def on_workspace_symbol(ls: KenningServer, params: T.WorkspaceSymbolParams) -> list[T.WorkspaceSymbol]:
    query = P.clean_text(params.query or "")[: P.MAX_QUERY_CHARS]
    limit = ls.options.symbol_limit

    def work(cancel: threading.Event) -> list[T.WorkspaceSymbol]:
        scored: list[tuple[float, T.WorkspaceSymbol]] = []
        for folder in ls.folder_list():
            if not folder.usable or cancel.is_set():
                continue
            try:
                with unless_closed(folder):
                    found = folder.symbols.find(query, limit, wait=QUERY_WAIT_S)
            except FolderClosed:
                continue
            for hit in found:
                s = hit.symbol
                scored.append(
                    (
                        hit.score,
                        T.WorkspaceSymbol(
                            name=s.name,
                            kind=SYMBOL_KINDS.get(s.kind, T.SymbolKind.Variable),
                            container_name=s.container,
                            location=T.Location(
                                uri=path_to_uri(folder.root / text_to_path(s.path)),
                                range=T.Range(
                                    start=T.Position(line=s.start_line - 1, character=0),
                                    end=T.Position(line=s.end_line, character=0),
                                ),
                            ),
                        ),
                    )
                )
        scored.sort(key=lambda x: -x[0])
        return [w for _, w in scored[:limit]]

    return await run_cancellable(ls, work)
