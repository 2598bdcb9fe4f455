"""kenning's commands end to end (``lsp/commands.py`` and Find Similar): ``kenning/similar``,
``kenning.status`` and ``kenning.reindex`` with and without folder arguments, and cancelling the
indexing progress from the client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from bench.lspclient import RawServer
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.conftest import FILES, write_workspace

from .conftest import request, search, start_session, statuses, wait_for_status, wait_ready


async def test_similar_and_commands(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    uri = (workspace / "geometry.py").resolve().as_uri()
    result = await request(
        client,
        "kenning/similar",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}},
            "limit": 5,
        },
    )
    assert result["results"]
    for r in result["results"]:
        assert not (r["uri"] == uri and r["range"]["start"]["line"] <= 4 and r["range"]["end"]["line"] >= 3)
    with pytest.raises(JsonRpcException) as info:
        await request(
            client,
            "kenning/similar",
            {
                "textDocument": {"uri": "file:///etc/passwd"},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            },
        )
    assert info.value.code == -32602

    status = await asyncio.wait_for(
        client.workspace_execute_command_async(T.ExecuteCommandParams(command="kenning.status")), 30
    )
    assert status[0]["state"] == "ready" and status[0]["files"] == 5
    before = len(statuses(client))
    await asyncio.wait_for(
        client.workspace_execute_command_async(T.ExecuteCommandParams(command="kenning.reindex")), 30
    )
    await wait_ready(client, workspace, after=before)


def test_commands_accept_empty_and_folder_arguments(workspace: Path, tmp_path: Path) -> None:
    other = write_workspace(tmp_path / "other", {"x.py": FILES["geometry.py"]})
    server = RawServer()
    try:
        server.call(
            "initialize",
            {
                "processId": None,
                "capabilities": {},
                "workspaceFolders": [
                    {"uri": workspace.as_uri(), "name": "ws"},
                    {"uri": other.as_uri(), "name": "other"},
                ],
            },
        )
        server.notify("initialized", {})
        import time

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            states = [
                s["state"]
                for s in server.call("workspace/executeCommand", {"command": "kenning.status"})["result"]
            ]
            if states == ["ready", "ready"]:
                break
            time.sleep(0.1)
        for args in ([], None):
            params = {"command": "kenning.status"} | ({"arguments": args} if args is not None else {})
            reply = server.call("workspace/executeCommand", params)
            assert len(reply["result"]) == 2
        before = {
            s["folder"]: s["reindexJobs"]
            for s in server.call("workspace/executeCommand", {"command": "kenning.status"})["result"]
        }
        reply = server.call(
            "workspace/executeCommand", {"command": "kenning.reindex", "arguments": [other.as_uri()]}
        )
        assert "error" not in reply
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            after = {
                s["folder"]: s["reindexJobs"]
                for s in server.call("workspace/executeCommand", {"command": "kenning.status"})["result"]
            }
            if after[other.as_uri()] > before[other.as_uri()]:
                break
            time.sleep(0.1)
        assert after[other.as_uri()] == before[other.as_uri()] + 1
        assert after[workspace.as_uri()] == before[workspace.as_uri()]
    finally:
        assert server.close() == 0


async def test_progress_cancel_stops_embedding(client: LanguageClient, tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"def helper_{i}(value):\n    return value * {i} + {i}\n" for i in range(400)}
    ws = write_workspace(tmp_path / "cancel", files)
    await start_session(client, [ws])
    await wait_for_status(client, lambda s: s["state"] == "embedding")
    tokens = [t for t in client.progress_reports if str(t).startswith("kenning-index")]
    assert tokens
    client.protocol.notify(
        T.WINDOW_WORK_DONE_PROGRESS_CANCEL, T.WorkDoneProgressCancelParams(token=tokens[0])
    )
    for _ in range(600):
        reports = client.progress_reports[tokens[0]]
        if reports and reports[-1].kind == "end":
            break
        await asyncio.sleep(0.05)
    end = client.progress_reports[tokens[0]][-1]
    assert end.kind == "end" and "cancelled" in (end.message or "")
    status = (
        await asyncio.wait_for(
            client.workspace_execute_command_async(T.ExecuteCommandParams(command="kenning.status")), 30
        )
    )[0]
    assert status["state"] == "embedding" and status["pending"] > 0
    # Lexical search keeps working; a reindex resumes the embedding.
    assert (await search(client, "helper_7", mode="lexical"))["results"]
    before = len(statuses(client))
    await asyncio.wait_for(
        client.workspace_execute_command_async(T.ExecuteCommandParams(command="kenning.reindex")), 30
    )
    ready = await wait_ready(client, ws, after=before, timeout=300)
    assert ready["pending"] == 0
