"""The language server with an embedding endpoint: the real `kenning serve` over stdio, the
real test server over sockets, configured by the one `embedding` initialization option."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.conftest import (
    SERVER_CMD,
    SERVER_ENV,
    search,
    start_session,
    statuses,
    wait_for_status,
    wait_ready,
)
from tests.test_endpoint import EmbedServer


@pytest.fixture(scope="module")
def server() -> Iterator[EmbedServer]:
    srv = EmbedServer("--workers", "2")
    yield srv
    srv.stop()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=SERVER_ENV))
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)


async def test_search_through_the_endpoint_then_an_outage(
    client: LanguageClient, workspace: Path, server: EmbedServer
) -> None:
    embedding = {"url": server.url, "model": "minilm", "batchSize": 4, "retries": 0}
    await start_session(client, [workspace], options={"embedding": embedding})
    status = await wait_ready(client, workspace)
    assert status["embedded"] == status["chunks"] > 0
    assert status["embeddingEndpoint"] == f"http://127.0.0.1:{server.port}"
    result = await search(client, "how long to wait before sending a failed upload again")
    assert not result["index"].get("lexicalOnly")
    assert result["results"][0]["uri"].endswith("/uploads.py")

    # The server goes away: a re-index cannot embed the changed file; search stays lexical.
    server.stop()
    try:
        (workspace / "uploads.py").write_text("def resend_failed_upload(path):\n    return path\n")
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=(workspace / "uploads.py").as_uri(), type=T.FileChangeType.Changed)]
            )
        )
        down = await wait_for_status(client, lambda s: "retrying at" in s.get("message", ""), timeout=60)
        assert "connection refused" in down["message"] and str(server.port) in down["message"]
        result = await search(client, "resend failed upload")
        assert result["index"].get("lexicalOnly") is True
        assert result["results"][0]["uri"].endswith("/uploads.py")
    finally:
        server.restart()
    # The endpoint is back: at the announced retry (15 s after the first outage) the folder
    # embeds what is pending without being asked, and dense search returns.
    after = len(statuses(client))
    ready = await wait_ready(client, workspace, timeout=90, after=after)
    assert ready["embedded"] == ready["chunks"] and "message" not in ready
    result = await search(client, "resend failed upload")
    assert not result["index"].get("lexicalOnly")
