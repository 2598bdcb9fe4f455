"""Keeping the index in step with the editor end to end (``lsp/sync.py``): a save updates results, a
deleted file disappears, and paths outside the workspace are never indexed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as T
from pytest_lsp import LanguageClient

from .conftest import search, start_session, wait_ready


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
