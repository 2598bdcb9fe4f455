"""The language server's lifecycle end to end (``lsp/lifecycle.py``): start-up, progress and the
first ready status, initialization options and settings, workspace folders coming and going,
clients without folders, Neovim's capabilities, TCP, and a missing model. The real
`kenning serve` over stdio on a real workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.conftest import FILES, write_workspace

from .conftest import search, start_session, statuses, wait_ready


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


async def test_neovim_client(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace], spec="neovim")
    await wait_ready(client, workspace)
    assert (await search(client, "open a database connection"))["results"][0]["uri"].endswith("db.go")


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
