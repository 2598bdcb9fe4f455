"""The store's life under a running server and the CLI: deleted, replaced, unwritable, misnamed.

- ``git clean -fdx`` deletes the store of a running server: the server notices (the directory,
  its marker or the database file is not the one it opened), says nothing from the old files,
  rebuilds, and answers from the new store only, never a mix of the two.
- Another process builds a new store where the old one was: the server follows it.
- ``.kenning`` is a regular file: the index lives elsewhere, said clearly, no traceback.
- The disk is full: searching what was committed keeps working (CLI and server), writing says
  why it cannot, and nothing is moved aside or lost.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kenning.store.trust import MARKER_FILENAME
from tests.conftest import FILES, write_workspace
from tests.reliability.conftest import (  # noqa: F401  (fixtures)
    StartServer,
    fill_disk,
    small_fs,
    start_server,
    tiny_model,
)

TOKEN_A = "qzfirsttokenxq"
TOKEN_B = "qzsecondtokenxq"


def kenning(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kenning", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _files_in_db(store: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{store / 'kenning.sqlite3'}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT path FROM files WHERE skip_reason IS NULL")}
    finally:
        conn.close()


def _delete_store(store: Path, timeout: float = 10.0) -> None:
    """``rm -rf .kenning`` under a running server, as a user does it: the server may add a
    file meanwhile (SQLite's -shm/-wal for the symbol index's reader, opened after "ready"),
    so the directory is not empty when rmtree reaches it; a user runs it again, and so do we."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            shutil.rmtree(store)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _search_until(client, query: str, want: str, timeout: float = 60.0) -> list[dict]:  # type: ignore[no-untyped-def]
    """Search until the top hit is ``want``; every answer on the way must be a clean reply."""
    deadline = time.monotonic() + timeout
    while True:
        reply = client.call("workspace/semanticSearch", {"query": query, "mode": "lexical"})
        assert "result" in reply, reply  # never -32603 while the store is rebuilt
        hits = reply["result"]["results"]
        if hits and hits[0]["uri"].endswith("/" + want):
            return hits
        assert time.monotonic() < deadline, f"{want} never found by {query!r}: {hits}"
        time.sleep(0.2)


@pytest.mark.parametrize("watch", [True, False], ids=["watching-client", "polling-client"])
def test_store_deleted_under_a_running_server_is_rebuilt_never_mixed(
    watch: bool,
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = write_workspace(tmp_path / "ws", {**FILES, "a.py": f"def {TOKEN_A}():\n    return 1\n"})
    client = start_server(root, {"model": str(tiny_model)}, watch_files=watch)
    client.wait_state("ready")
    _search_until(client, TOKEN_A, "a.py")
    store = root / ".kenning"
    old_marker = (store / MARKER_FILENAME).read_text()

    # git clean -fdx: the store goes, and so does an untracked file; a new file comes.
    _delete_store(store)
    (root / "a.py").unlink()
    (root / "b.py").write_text(f"def {TOKEN_B}():\n    return 2\n")
    if watch:
        changes = [{"uri": (root / "a.py").as_uri(), "type": 3}, {"uri": (root / "b.py").as_uri(), "type": 1}]
        client.notify("workspace/didChangeWatchedFiles", {"changes": changes})

    # Whatever is answered while it rebuilds comes from one store: a.py (deleted, only in the
    # old store) and b.py (only in the new one) are never both found.
    hits = _search_until(client, TOKEN_B, "b.py")
    assert all(not h["uri"].endswith("/a.py") for h in hits)
    for _ in range(5):
        old = client.call("workspace/semanticSearch", {"query": TOKEN_A, "mode": "lexical"})
        assert "result" in old and old["result"]["results"] == [], old
    status = client.wait_state("ready", after=len(client.statuses()) - 1)
    assert status["files"] == len(FILES) + 1, status
    assert (store / MARKER_FILENAME).read_text() != old_marker  # a new store, marked anew
    assert _files_in_db(store) == set(FILES) | {"b.py"}
    assert client.search("area of a circle", mode="semantic")["results"]
    assert client.alive()
    assert client.close() == 0


def test_a_new_store_built_by_the_cli_replaces_the_servers(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = write_workspace(tmp_path / "ws", {**FILES, "a.py": f"def {TOKEN_A}():\n    return 1\n"})
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    _delete_store(root / ".kenning")
    (root / "a.py").unlink()
    (root / "b.py").write_text(f"def {TOKEN_B}():\n    return 2\n")
    # The lock went with the store: the CLI takes a new one and builds a new store.
    out = kenning("index", str(root), "--model", str(tiny_model), "-q")
    assert out.returncode == 0, out.stderr
    _search_until(client, TOKEN_B, "b.py")
    reply = client.call("workspace/semanticSearch", {"query": TOKEN_A, "mode": "lexical"})
    assert reply["result"]["results"] == [], reply
    # Both read the same store now: the CLI sees what the server sees.
    out = kenning(
        "search", TOKEN_B, "--root", str(root), "--model", str(tiny_model), "--mode", "lexical", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "b.py"
    assert client.close() == 0


def test_kenning_as_a_regular_file_is_a_clear_message_not_a_traceback(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = write_workspace(tmp_path / "ws", {**FILES, "a.py": f"def {TOKEN_A}():\n    return 1\n"})
    (root / ".kenning").write_text("a file\n")
    out = kenning("index", str(root), "--model", str(tiny_model))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert ".kenning is a file, not an index directory kenning made" in out.stderr, out.stderr
    client = start_server(root, {"model": str(tiny_model)})
    status = client.wait_state("ready")
    assert status["files"] == len(FILES) + 1
    assert ".kenning" in (status.get("message") or ""), status
    _search_until(client, TOKEN_A, "a.py")
    assert client.close() == 0
    assert (root / ".kenning").read_text() == "a file\n"


# -- a full disk -------------------------------------------------------------------------------------


def test_a_full_disk_keeps_what_was_committed_searchable(
    small_fs: Path,  # noqa: F811
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = write_workspace(small_fs / "ws", {**FILES, "a.py": f"def {TOKEN_A}():\n    return 1\n"})
    out = kenning("index", str(root), "--model", str(tiny_model), "-q")
    assert out.returncode == 0, out.stderr
    store = root / ".kenning"
    before = sorted(p.name for p in store.iterdir())
    filler = fill_disk(small_fs)

    out = kenning(
        "search", TOKEN_A, "--root", str(root), "--model", str(tiny_model), "--mode", "lexical", "--json"
    )
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "a.py"
    out = kenning("index", str(root), "--model", str(tiny_model))
    assert "Traceback" not in out.stderr, out.stderr

    client = start_server(root, {"model": str(tiny_model)})
    _search_until(client, TOKEN_A, "a.py")
    assert client.search("area of a circle", mode="semantic")["results"]
    assert client.alive()
    assert client.close() == 0
    assert sorted(p.name for p in store.iterdir() if "corrupt" in p.name or "foreign" in p.name) == []
    filler.unlink()
    out = kenning("index", str(root), "--model", str(tiny_model), "-q")
    assert out.returncode == 0, out.stderr
    assert before  # the store was there all along
