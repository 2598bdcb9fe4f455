"""Semantic first where the user works: the real server, a workspace too large to embed at
once, one file opened by the editor — that file is semantically searchable while the rest of
the index still waits for its vectors."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.conftest import write_workspace

from .conftest import search, start_session, wait_ready

OPENED = "zz/billing/invoice.py"  # last in every order but the working set's
OPENED_TEXT = (
    "def settle(lines, rate):\n"
    "    subtotal = sum(line.price * line.quantity for line in lines)\n"
    "    return subtotal + subtotal * rate\n"
)


async def _status(client: LanguageClient) -> dict[str, int]:
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(T.ExecuteCommandParams(command="kenning.status")), 30
    )
    return dict(result[0])


async def test_an_opened_file_is_embedded_before_the_rest(client: LanguageClient, tmp_path: Path) -> None:
    files = {
        f"pkg/sub{i // 100}/mod{i}.py": f"def helper_{i}(value):\n    return value * {i} + {i}\n"
        for i in range(1000)
    }
    files[OPENED] = OPENED_TEXT
    ws = write_workspace(tmp_path / "big", files)
    # The oldest file of all: only its being open can put it first (recent files go first too).
    os.utime(ws / OPENED, (1_000_000_000, 1_000_000_000))
    await start_session(client, [ws])
    uri = (ws / OPENED).as_uri()
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=OPENED_TEXT)
        )
    )
    # Words the file does not contain: only the dense half can find it.
    query = "add sales tax to the invoice total"
    deadline = time.monotonic() + 300
    while True:
        found = await search(client, query, mode="semantic", limit=5)
        if not found["index"].get("lexicalOnly") and any(r["uri"] == uri for r in found["results"]):
            break
        assert time.monotonic() < deadline, f"{OPENED} never became semantically searchable"
        await asyncio.sleep(0.1)
    status = await _status(client)
    # Its chunk has a vector while (nearly) all of the thousand others still wait for theirs
    # (on a fresh index it can come before the full scan has even listed them).
    assert status["state"] in ("scanning", "embedding"), status
    assert status["embedded"] < len(files) // 2, status

    # The rest follows and the index ends complete.
    ready = await wait_ready(client, ws, timeout=600)
    assert ready["pending"] == 0 and ready["embedded"] == ready["chunks"] >= len(files)
    assert any(r["uri"] == uri for r in (await search(client, query, mode="semantic"))["results"])
