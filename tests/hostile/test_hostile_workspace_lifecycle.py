"""Folder lifecycle in the real server (issue #16): nested folders indexed once and kept fresh,
directory-level events, filter caches that cannot cross folders, and searches in flight while a
folder is removed."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.hostile.workspace_kit import hit_paths
from tests.reliability.client import Client
from tests.reliability.conftest import StartServer, generate_workspace, start_server, tiny_model  # noqa: F401

WAIT_S = 60.0


def initialize(client: Client, folders: list[Path], model: Path) -> None:
    reply = client.call(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": folders[0].as_uri(),
            "capabilities": {
                "window": {"workDoneProgress": False},
                "workspace": {
                    "didChangeWatchedFiles": {"dynamicRegistration": True},
                    "workspaceFolders": True,
                },
            },
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
            "initializationOptions": {"model": str(model)},
        },
    )
    assert "result" in reply, reply
    client.notify("initialized", {})


def change_folders(client: Client, added: list[Path] = (), removed: list[Path] = ()) -> None:  # type: ignore[assignment]
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        {
            "event": {
                "added": [{"uri": f.as_uri(), "name": f.name} for f in added],
                "removed": [{"uri": f.as_uri(), "name": f.name} for f in removed],
            }
        },
    )


def eventually(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.2)


def all_ready(client: Client, count: int) -> bool:
    folders = client.command("kenning.status")
    return len(folders) == count and all(f["state"] == "ready" for f in folders)


def found(client: Client, token: str, **extra: Any) -> list[Path]:
    return hit_paths(client.search(token, mode="lexical", **extra)["results"])


def write(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"def holder():\n    return '{token}'\n")


def test_nested_folders_are_indexed_once_and_kept_fresh(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    mono = tmp_path / "mono"
    api = mono / "packages" / "api"
    write(mono / "top.py", "qztopmarkerxq")
    write(api / "handler.py", "qzapimarkerxq")
    client = start_server(None, initialize=False)
    initialize(client, [mono, api], tiny_model)
    eventually(lambda: all_ready(client, 2), "both folders ready")
    assert found(client, "qzapimarkerxq") == [api / "handler.py"]  # once, not twice
    assert found(client, "qztopmarkerxq") == [mono / "top.py"]
    with sqlite3.connect(mono / ".kenning" / "kenning.sqlite3") as conn:
        outer = {r[0] for r in conn.execute("SELECT path FROM files")}
    assert not any(p.startswith("packages/api/") for p in outer), outer

    # An edit inside the inner folder: its index (the one that holds the file) follows.
    write(api / "handler.py", "qzapieditedxq")
    change = {"changes": [{"uri": (api / "handler.py").as_uri(), "type": 2}]}
    client.notify("workspace/didChangeWatchedFiles", change)
    assert eventually(lambda: found(client, "qzapieditedxq"), "the edit indexed") == [api / "handler.py"]
    assert found(client, "qzapimarkerxq") == []

    # The inner folder closes: the outer one takes its files back (once).
    change_folders(client, removed=[api])
    eventually(lambda: found(client, "qzapieditedxq"), "the outer folder took the files back")
    eventually(lambda: all_ready(client, 1), "the outer folder ready")
    assert found(client, "qzapieditedxq") == [api / "handler.py"]
    # ... and opens again: still once.
    change_folders(client, added=[api])
    eventually(lambda: all_ready(client, 2), "both folders ready again")
    eventually(lambda: len(found(client, "qzapieditedxq")) == 1, "one hit", timeout=WAIT_S)
    time.sleep(1.0)  # a late rescan of the outer folder must not add the file back
    assert found(client, "qzapieditedxq") == [api / "handler.py"]
    assert client.close() == 0


def test_directory_events(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "ws"
    write(root / "pkg" / "a.py", "qzdirfileaxq")
    write(root / "pkg" / "sub" / "b.py", "qzdirfilebxq")
    write(root / "keep.py", "qzkeepxq")
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    client.wait_state("ready", timeout=90)
    assert found(client, "qzdirfilebxq") == [root / "pkg" / "sub" / "b.py"]

    # A directory deleted: the client reports the directory only.
    shutil.rmtree(root / "pkg")
    client.notify(
        "workspace/didChangeWatchedFiles", {"changes": [{"uri": (root / "pkg").as_uri(), "type": 3}]}
    )
    eventually(
        lambda: not found(client, "qzdirfileaxq") and not found(client, "qzdirfilebxq"),
        "hits in the deleted directory gone",
    )
    # A directory created with files in it.
    write(root / "newpkg" / "deep" / "c.py", "qzdirfilecxq")
    client.notify(
        "workspace/didChangeWatchedFiles", {"changes": [{"uri": (root / "newpkg").as_uri(), "type": 1}]}
    )
    assert eventually(lambda: found(client, "qzdirfilecxq"), "new directory indexed") == [
        root / "newpkg" / "deep" / "c.py"
    ]
    # A directory renamed by the editor.
    os.rename(root / "newpkg", root / "moved")
    client.notify(
        "workspace/didRenameFiles",
        {"files": [{"oldUri": (root / "newpkg").as_uri(), "newUri": (root / "moved").as_uri()}]},
    )
    eventually(
        lambda: found(client, "qzdirfilecxq") == [root / "moved" / "deep" / "c.py"],
        "the renamed directory's files at their new path only",
    )
    # A directory deleted by the editor.
    shutil.rmtree(root / "moved")
    client.notify("workspace/didDeleteFiles", {"files": [{"uri": (root / "moved").as_uri()}]})
    eventually(lambda: not found(client, "qzdirfilecxq"), "hits in the deleted directory gone")
    assert found(client, "qzkeepxq") == [root / "keep.py"]
    symbols = client.call("workspace/symbol", {"query": "holder"})["result"]
    assert [s["location"]["uri"] for s in symbols] == [(root / "keep.py").as_uri()]
    assert client.close() == 0


def test_filter_cache_never_crosses_folders(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / "one.py", "qzsharedtokenxq")
    write(b / "two.py", "qzsharedtokenxq")
    client = start_server(None, initialize=False)
    initialize(client, [a], tiny_model)
    filters = {"paths": ["*.py"]}
    current, other = a, b
    for _ in range(4):
        want = [current / ("one.py" if current == a else "two.py")]
        got = eventually(lambda: found(client, "qzsharedtokenxq", filters=filters), f"{current.name} ready")
        assert got == want, (current, got)
        change_folders(client, added=[other], removed=[current])
        swapped = other.as_uri()
        eventually(
            lambda: all_ready(client, 1) and client.command("kenning.status")[0]["folder"] == swapped,  # noqa: B023
            "swap",
        )
        current, other = other, current
    assert client.close() == 0


def test_searches_in_flight_while_folders_close(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "ws"
    generate_workspace(root, 300)
    # A crash here was SQLite connections closed under a running statement (segfault): the
    # fault handler puts the threads' stacks in stderr, which the failure message shows.
    client = start_server(root, {"model": str(tiny_model)}, env={"PYTHONFAULTHANDLER": "1"}, watch_files=True)
    client.wait_state("ready", timeout=90)
    try:
        _storm(client, root)
    except TimeoutError as exc:
        raise AssertionError(
            f"{exc}; server exit {client.proc.poll()}:\n{''.join(client.stderr_lines[-60:])}"
        ) from None
    assert client.alive()
    assert client.close() == 0


def _storm(client: Client, root: Path) -> None:
    ids = []
    for round_ in range(6):
        for i in range(25):
            params: dict[str, Any] = {"query": f"total item factor {i}", "mode": "hybrid"}
            if i % 3 == 0:
                params["filters"] = {"paths": ["pkg1/**"]}
            ids.append(client.request("workspace/semanticSearch", params))
            ids.append(client.request("workspace/symbol", {"query": f"helper_{i}"}))
            if i == 8:
                change_folders(client, removed=[root])
            if i == 16:
                change_folders(client, added=[root])
        eventually(lambda: all_ready(client, 1), f"round {round_}: the folder back")
    for msg_id in ids:
        reply = client.wait_response(msg_id)
        assert "result" in reply or reply["error"]["code"] not in (-32603,), reply
        assert "AssertionError" not in str(reply)
    assert found(client, "helper_0") is not None
