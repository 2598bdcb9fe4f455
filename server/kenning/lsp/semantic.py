"""Semantic search and Find Similar.

Powers, in the editor: the `Kenning: Semantic Search` palette (``workspace/semanticSearch``: a
query in words or identifiers → ranked locations across every folder) and `Kenning: Find
Similar Code` on a selection (``kenning/similar``). Params are validated in ``protocol``; the
ranking is ``kenning.search``'s.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from kenning.folder import FolderIndex
from kenning.lsp import protocol as P
from kenning.lsp.requests import FolderClosed, parse_params, run_cancellable, unless_closed
from kenning.lsp.server import KenningServer, server
from kenning.search import SearchCancelled, SearchError, SearchResponse, search, similar
from kenning.workspace import (
    path_to_text,
    path_to_uri,
    text_to_path,
)

log = logging.getLogger("kenning")


def _merged(
    ls: KenningServer, responses: list[tuple[FolderIndex, SearchResponse]], limit: int
) -> dict[str, Any]:
    hits: list[tuple[float, P.SearchHit]] = []
    lexical_only = False
    for folder, response in responses:
        lexical_only = lexical_only or response.lexical_only
        for note in response.notes:
            log.info("%s: %s", folder.root.name, note)
        hits.extend(
            (h.score, P.hit_to_wire(h, path_to_uri(folder.root / text_to_path(h.path))))
            for h in response.hits
        )
    hits.sort(key=lambda sh: -sh[0])
    index = ls.index_summary()
    if lexical_only:
        index["lexicalOnly"] = True
    return {"results": [h for _, h in hits[:limit]], "index": index}


@server.feature(P.SEMANTIC_SEARCH)
async def on_semantic_search(ls: KenningServer, params: Any) -> dict[str, Any]:
    query = parse_params(ls, P.parse_search_params, params)
    if not query.text.strip():
        return {"results": [], "index": ls.index_summary()}

    def work(cancel: threading.Event) -> dict[str, Any]:
        responses = []
        for folder in ls.folder_list():
            if not folder.usable:
                continue
            try:
                with unless_closed(folder):
                    responses.append((folder, search(folder.engine, query, should_stop=cancel.is_set)))
            except FolderClosed:
                continue
            except SearchError as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            except SearchCancelled:
                return {"results": [], "index": ls.index_summary()}
        return _merged(ls, responses, query.limit)

    return await run_cancellable(ls, work)


@server.feature(P.SIMILAR)
async def on_similar(ls: KenningServer, params: Any) -> dict[str, Any]:
    req = parse_params(ls, P.parse_similar_params, params)
    found = ls.locate(req.uri)
    if found is None:
        raise JsonRpcInvalidParams("textDocument.uri is not a file inside a workspace folder")
    owner, rel = found
    doc = ls.workspace.text_documents.get(req.uri)
    selected: str | None = None
    if doc is not None and (req.start_line, req.start_character) != (req.end_line, req.end_character):
        lines = doc.source.split("\n")
        part = lines[req.start_line : req.end_line + 1]
        if part:
            part[-1] = (
                part[-1][: req.end_character]
                if len(part) > 1
                else part[-1][req.start_character : req.end_character]
            )
            if len(part) > 1:
                part[0] = part[0][req.start_character :]
        selected = "\n".join(part)

    def work(cancel: threading.Event) -> dict[str, Any]:
        if not owner.usable:
            return {"results": [], "index": ls.index_summary()}
        try:
            with unless_closed(owner):
                response = similar(
                    owner.engine,
                    path_to_text(rel),
                    req.start_line + 1,
                    req.end_line + 1,
                    limit=req.limit,
                    selected_text=selected,
                )
        except FolderClosed:
            return {"results": [], "index": ls.index_summary()}
        return _merged(ls, [(owner, response)], req.limit)

    return await run_cancellable(ls, work)
