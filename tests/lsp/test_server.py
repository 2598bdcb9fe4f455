"""The language server end to end: the real `kenning serve` over stdio on a real workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from bench.lspclient import RawServer
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import FILES, write_workspace

from .conftest import (
    REQUEST_TIMEOUT,
    SERVER_CMD,
    SERVER_ENV,
    request,
    search,
    start_session,
    statuses,
    wait_for_status,
    wait_ready,
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=SERVER_ENV))
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)


def top_uri(result: dict[str, Any]) -> str:
    return result["results"][0]["uri"]


async def test_initialize_progress_and_ready(client: LanguageClient, workspace: Path) -> None:
    result = await start_session(client, [workspace])
    caps = result.capabilities
    assert caps.workspace_symbol_provider
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) >= {"kenning.reindex", "kenning.status"}

    status = await wait_ready(client, workspace)
    assert status["files"] == 5 and status["pending"] == 0
    assert status["embedded"] == status["chunks"] > 0
    assert {s["state"] for s in statuses(client)} >= {"scanning", "embedding", "ready"}

    # Server-created progress: begin, at least one report, and an end.
    reports = [
        r
        for token, rs in client.progress_reports.items()
        for r in rs
        if str(token).startswith("kenning-index")
    ]
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    assert reports[0].title.startswith("kenning: indexing")
    assert any("files" in (r.message or "") for r in reports if r.kind == "report")


async def test_bad_options_are_reported_and_replaced(client: LanguageClient, workspace: Path) -> None:
    await start_session(
        client,
        [workspace],
        options={
            "maxResults": "lots",
            "logLevel": "loud",
            "someFutureKey": True,
            "exclude": ["docs/**"],
        },
    )
    await wait_ready(client, workspace)
    warnings = [m.message for m in client.messages if m.type == T.MessageType.Warning]
    assert any("maxResults" in m for m in warnings)
    assert any("logLevel" in m for m in warnings)
    assert not any("someFutureKey" in m for m in warnings)
    result = await search(client, "installer shell configuration")
    # exclude was valid and applied; maxResults fell back to 20.
    assert all("docs/guide.md" not in r["uri"] for r in result["results"])
    assert len(result["results"]) <= 20


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


async def test_did_save_updates_results(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    path = workspace / "geometry.py"
    path.write_text(path.read_text() + "\n\ndef marmalade_recipe_scaler(jars):\n    return jars * 2\n")
    client.text_document_did_save(
        T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=path.as_uri()))
    )
    for _ in range(200):
        result = await search(client, "marmalade_recipe_scaler", mode="lexical")
        if result["results"]:
            break
        await asyncio.sleep(0.05)
    assert result["results"][0]["symbol"]["name"] == "marmalade_recipe_scaler"


async def test_deleted_file_disappears(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    assert (await search(client, "OpenDatabase"))["results"][0]["uri"].endswith("db.go")
    target = workspace / "server" / "db.go"
    target.unlink()
    client.workspace_did_change_watched_files(
        T.DidChangeWatchedFilesParams(
            changes=[T.FileEvent(uri=target.as_uri(), type=T.FileChangeType.Deleted)]
        )
    )
    for _ in range(200):
        result = await search(client, "OpenDatabase", limit=50)
        if all(not r["uri"].endswith("db.go") for r in result["results"]):
            break
        await asyncio.sleep(0.05)
    assert all(not r["uri"].endswith("db.go") for r in result["results"])
    symbols = await asyncio.wait_for(
        client.workspace_symbol_async(T.WorkspaceSymbolParams(query="OpenDatabase")), 30
    )
    assert all(s.name != "OpenDatabase" for s in symbols)


async def test_multi_root_add_and_remove(client: LanguageClient, tmp_path: Path) -> None:
    one = write_workspace(tmp_path / "one", {"a.py": FILES["geometry.py"]})
    two = write_workspace(tmp_path / "two", {"b.js": FILES["web/headers.js"]})
    await start_session(client, [one])
    await wait_ready(client, one)
    assert not (await search(client, "parseHttpHeader", mode="lexical"))["results"]

    client.workspace_did_change_workspace_folders(
        T.DidChangeWorkspaceFoldersParams(
            event=T.WorkspaceFoldersChangeEvent(
                added=[T.WorkspaceFolder(uri=two.as_uri(), name="two")], removed=[]
            )
        )
    )
    await wait_ready(client, two)
    merged = await search(client, "parseHttpHeader circle_area", mode="lexical")
    uris = {r["uri"] for r in merged["results"]}
    assert any(u.endswith("two/b.js") for u in uris) and any(u.endswith("one/a.py") for u in uris)

    client.workspace_did_change_workspace_folders(
        T.DidChangeWorkspaceFoldersParams(
            event=T.WorkspaceFoldersChangeEvent(
                added=[], removed=[T.WorkspaceFolder(uri=one.as_uri(), name="one")]
            )
        )
    )
    for _ in range(100):
        uris = {r["uri"] for r in (await search(client, "circle_area", mode="lexical"))["results"]}
        if not any("/one/" in u for u in uris):
            break
        await asyncio.sleep(0.05)
    assert not any("/one/" in u for u in uris)


async def test_root_uri_only_client(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace], root_only=True)
    await wait_ready(client)
    assert (await search(client, "parseHttpHeader"))["results"]


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


async def test_outside_paths_are_ignored(client: LanguageClient, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("def top_secret_password_holder():\n    return 'hunter2'\n")
    (workspace / "link.py").symlink_to(outside)
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    for uri in (
        outside.as_uri(),
        (workspace / "link.py").as_uri(),
        (workspace / ".." / "secret.py").as_uri(),
        "untitled:Untitled-1",
        "http://example.com/a.py",
    ):
        client.text_document_did_save(
            T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri))
        )
    await asyncio.sleep(0.5)
    result = await search(client, "top_secret_password_holder", mode="lexical")
    assert result["results"] == []


async def test_neovim_client(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace], spec="neovim")
    await wait_ready(client, workspace)
    assert (await search(client, "open a database connection"))["results"][0]["uri"].endswith("db.go")


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


async def test_configuration_pulled_and_changed(client: LanguageClient, workspace: Path) -> None:
    client.set_configuration({"maxResults": 2, "exclude": ["web/**"]}, section="kenning")
    await start_session(client, [workspace])
    await wait_ready(client, workspace)
    result = await search(client, "retry upload header database circle")
    assert 0 < len(result["results"]) <= 2  # maxResults from workspace/configuration
    everything = await search(client, "parseHttpHeader", limit=50, mode="lexical")
    assert all("/web/" not in r["uri"] for r in everything["results"])

    # The user drops the exclude: the folder is reopened and web/ comes back.
    before = len(statuses(client))
    client.workspace_did_change_configuration(
        T.DidChangeConfigurationParams(settings={"kenning": {"exclude": []}})
    )
    await wait_ready(client, workspace, after=before)
    again = await search(client, "parseHttpHeader", mode="lexical")
    assert again["results"][0]["uri"].endswith("web/headers.js")


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


def test_serve_over_tcp(workspace: Path) -> None:
    import json
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kenning", "serve", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline, "server never listened"
                time.sleep(0.1)
        with sock:
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": workspace.as_uri(),
                        "capabilities": {},
                        "initializationOptions": {"indexOnStartup": False},
                    },
                }
            ).encode()
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += sock.recv(65536)
            reply = json.loads(rest[:length])
            assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "kenning"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def test_missing_model_is_shown_once_and_lexical_still_works(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    (broken / "tokenizer.json").write_text("{}")
    (broken / "kenning-model.json").write_text('{"id": "broken"}')
    await start_session(client, [workspace], options={"model": str(broken)})
    status = await wait_ready(client, workspace)
    assert "model" in (status.get("message") or "")
    errors = [m for m in client.messages if m.type == T.MessageType.Error]
    assert len(errors) == 1 and "model" in errors[0].message
    result = await search(client, "parseHttpHeader")
    assert result["index"].get("lexicalOnly") is True
    assert result["results"][0]["uri"].endswith("web/headers.js")
