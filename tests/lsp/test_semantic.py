"""``workspace/semanticSearch`` end to end (``lsp/semantic.py``): the editor's search box — results,
filters and modes, a named error for each bad parameter, empty queries, searching while the index
fills and cancelling a search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.conftest import write_workspace

from .conftest import REQUEST_TIMEOUT, request, search, start_session, wait_for_status, wait_ready


async def test_semantic_search_results(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    result = await search(client, "wait longer before sending a failed upload again")
    first = result["results"][0]
    assert first["uri"] == (workspace / "uploads.py").resolve().as_uri()
    assert first["language"] == "python"
    assert first["match"]["denseRank"] is not None
    assert result["index"]["state"] == "ready"

    hit = (await search(client, "parseHttpHeader"))["results"][0]
    assert hit["uri"].endswith("web/headers.js")
    assert hit["symbol"]["name"] == "parseHttpHeader"
    lines = (workspace / "web/headers.js").read_text().split("\n")
    start, end = hit["range"]["start"], hit["range"]["end"]
    assert lines[start["line"]].startswith(("// Turn a raw header", "export function parseHttpHeader"))
    assert start["character"] == 0 and end["character"] == len(lines[end["line"]])
    assert lines[end["line"]] == "}"


async def test_filters_and_modes(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    only_js = await search(client, "retry upload", filters={"languages": ["javascript"]})
    assert {r["uri"].rsplit("/", 1)[-1] for r in only_js["results"]} == {"headers.js"}
    only_docs = await search(client, "retry upload", filters={"paths": ["docs/**"]})
    assert all("/docs/" in r["uri"] for r in only_docs["results"]) and only_docs["results"]
    only_go = await search(client, "retry upload", filters={"extensions": [".go"]})
    assert all(r["uri"].endswith(".go") for r in only_go["results"])
    lexical = await search(client, "circle_area", mode="lexical")
    assert all(r["match"]["denseRank"] is None for r in lexical["results"])
    semantic = await search(client, "area of a round shape", mode="semantic", limit=3)
    assert len(semantic["results"]) <= 3
    assert all(r["match"]["lexicalRank"] is None for r in semantic["results"])
    assert semantic["results"][0]["symbol"]["name"] == "circle_area"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "query is required"),
        ({"query": 123}, "query must be a string"),
        ({"query": None}, "query must be a string"),
        ({"query": "x", "limit": "10"}, "limit must be an integer"),
        ({"query": "x", "limit": 0}, "limit must be between"),
        ({"query": "x", "limit": 10**9}, "limit must be between"),
        ({"query": "x", "mode": "psychic"}, "mode must be one of"),
        ({"query": "x", "filters": ["python"]}, "filters must be an object"),
        ({"query": "x", "filters": {"languages": "python"}}, "filters.languages must be an array"),
        ({"query": "x", "filters": {"languages": ["klingon"]}}, "unknown language 'klingon'"),
        ({"query": "x" * 5000}, "query is 5000 characters"),
        (["query"], "params must be an object"),
        (None, "params must be an object"),
    ],
)
async def test_invalid_params_get_a_named_error(
    client: LanguageClient, workspace: Path, params: Any, field: str
) -> None:
    await start_session(client, [workspace], options={"indexOnStartup": False})
    with pytest.raises(JsonRpcException) as info:
        await request(client, "workspace/semanticSearch", params)
    assert info.value.code == -32602
    assert field in str(info.value)
    # The server keeps serving.
    assert (await search(client, ""))["results"] == []


async def test_empty_query_returns_nothing(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    for q in ("", "   "):
        assert (await search(client, q))["results"] == []


async def test_search_while_indexing_and_cancel(client: LanguageClient, tmp_path: Path) -> None:
    files = {f"pkg/mod{i}.py": f"def function_number_{i}(x):\n    return x + {i}\n" for i in range(300)}
    ws = write_workspace(tmp_path / "big", files)
    await start_session(client, [ws])
    # Lexical rows land first: search answers long before embeddings are done.
    await wait_for_status(client, lambda s: s["state"] == "embedding")
    result = await search(client, "function_number_7", mode="lexical")
    assert result["results"][0]["uri"].endswith("pkg/mod7.py")

    fut = client.protocol.send_request_async(
        "workspace/semanticSearch", {"query": "add a number"}, msg_id="cancel-me"
    )
    await asyncio.sleep(0)
    client.protocol.notify("$/cancelRequest", T.CancelParams(id="cancel-me"))
    try:
        await asyncio.wait_for(fut, REQUEST_TIMEOUT)
    except JsonRpcException as exc:
        assert exc.code == -32800
    # Still serving afterwards.
    assert (await search(client, "function_number_9", mode="lexical"))["results"]
    await wait_ready(client, ws, timeout=180)
