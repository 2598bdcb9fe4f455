"""``workspace/symbol`` end to end (``lsp/symbols.py``): the editor's Go to Symbol in Workspace —
fuzzy and nested names, and an answer even to malformed params."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.lspclient import RawServer
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from .conftest import REQUEST_TIMEOUT, start_session, wait_ready


async def test_workspace_symbol_fuzzy_and_nested(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)

    async def names(query: str) -> list[T.WorkspaceSymbol]:
        return await asyncio.wait_for(
            client.workspace_symbol_async(T.WorkspaceSymbolParams(query=query)), REQUEST_TIMEOUT
        )

    assert (await names("urp"))[0].name == "UploadRetryPolicy"
    assert (await names("retry pol"))[0].name == "UploadRetryPolicy"
    method = next(s for s in await names("should_retry") if s.name == "should_retry")
    assert method.container_name == "UploadRetryPolicy"
    assert method.kind == T.SymbolKind.Method
    assert method.location.uri.endswith("uploads.py")
    lines = (workspace / "uploads.py").read_text().split("\n")
    assert "def should_retry" in lines[method.location.range.start.line]
    sample = await names("")
    assert 0 < len(sample) <= 200


def test_workspace_symbol_with_malformed_params_still_answers(workspace: Path) -> None:
    """pygls sends no reply when a typed request fails to parse; kenning's server must."""
    server = RawServer()
    try:
        server.initialize(workspace, {"indexOnStartup": False})
        for bad in ({}, [1, 2]):
            reply = server.call("workspace/symbol", bad)
            assert reply["error"]["code"] == -32602
            assert "workspace/symbol" in reply["error"]["message"]
        # cattrs coerces a null query; either way there is exactly one reply.
        assert server.call("workspace/symbol", {"query": None})["id"]
        assert "result" in server.call("workspace/symbol", {"query": "x"})
    finally:
        assert server.close() == 0
