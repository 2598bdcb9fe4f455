"""pytest-lsp plumbing: the real `kenning serve` over stdio, recorded client capabilities."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER_CMD = [sys.executable, "-m", "kenning", "serve"]
SERVER_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}

# Every custom request is wrapped in this, so a missing reply fails the test instead of hanging.
REQUEST_TIMEOUT = 60.0


def statuses(client: LanguageClient) -> list[dict[str, Any]]:
    return client.kenning_statuses  # type: ignore[attr-defined,no-any-return]


def install_status_recorder(client: LanguageClient) -> None:
    client.kenning_statuses = []  # type: ignore[attr-defined]

    @client.feature("kenning/indexStatus")
    def _on_status(_client: LanguageClient, params: Any) -> None:
        statuses(client).append(_to_dict(params))

    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def _on_register(_client: LanguageClient, params: T.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]


def _to_dict(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _to_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_to_dict(v) for v in value]
    return value


async def wait_for_status(client: LanguageClient, predicate, timeout: float = 120.0) -> dict[str, Any]:
    """Wait until some kenning/indexStatus notification satisfies ``predicate``."""
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        items = statuses(client)
        for item in items[seen:]:
            if predicate(item):
                return item
        seen = len(items)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no matching kenning/indexStatus within {timeout}s; saw {statuses(client)}")


async def wait_ready(
    client: LanguageClient, folder: Path | None = None, timeout: float = 120.0, after: int = 0
) -> dict[str, Any]:
    uri = folder.as_uri() if folder else None

    def ready(s: dict[str, Any]) -> bool:
        return s.get("state") == "ready" and (uri is None or s.get("folder") == uri)

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for item in statuses(client)[after:]:
            if ready(item):
                return item
        await asyncio.sleep(0.05)
    raise AssertionError(f"{folder} never became ready; saw {statuses(client)[after:]}")


async def request(client: LanguageClient, method: str, params: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
    result = await asyncio.wait_for(client.protocol.send_request_async(method, params), timeout)
    return _to_dict(result)


async def search(client: LanguageClient, query: str, **extra: Any) -> dict[str, Any]:
    return await request(client, "workspace/semanticSearch", {"query": query, **extra})


async def start_session(
    client: LanguageClient,
    folders: list[Path],
    *,
    spec: str = "visual-studio-code",
    options: dict[str, Any] | None = None,
    root_only: bool = False,
) -> T.InitializeResult:
    install_status_recorder(client)
    caps = client_capabilities(spec)
    params = T.InitializeParams(
        capabilities=caps,
        initialization_options=options,
        root_uri=folders[0].as_uri() if folders else None,
        workspace_folders=None
        if root_only
        else [T.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
    )
    return await asyncio.wait_for(client.initialize_session(params), REQUEST_TIMEOUT)


@pytest.fixture
def uri_of():
    def make(path: Path) -> str:
        return Path(os.path.realpath(path)).as_uri()

    return make


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=SERVER_ENV))
async def client(lsp_client: LanguageClient):
    """The real `kenning serve` over stdio, one per test; each test starts its own session."""
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)
