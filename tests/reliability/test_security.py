"""Cases 10, 11, 22: paths from the client and links in the tree never reach outside the folder.

The server runs under an audit hook (``audited_server.py``) that records every open or listing
of anything in a directory outside the workspace, so "nothing outside is read" is observed, not
inferred from empty results.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
from pathlib import Path

from tests.conftest import FILES, write_workspace
from tests.reliability.client import Client
from tests.reliability.conftest import StartServer

SECRET = "qzsecretpayloadxq"


def _uris(root: Path, outside: Path) -> list[str]:
    ws = root.as_uri()
    out = outside.name
    return [
        (outside / "secret.py").as_uri(),
        f"{ws}/../{out}/secret.py",
        f"{ws}/%2e%2e/{out}/secret.py",
        f"{ws}/%2E%2E%2F{out}%2Fsecret.py",
        f"{ws}/..%2F{out}%2Fsecret.py",
        f"{ws}/sub/%2e%2e/%2e%2e/{out}/secret.py",
        f"{ws}/link.py",  # a symlink to the outside file
        f"{ws}/outdir/secret.py",  # through a symlinked directory
        "file:///etc/passwd",
        "file://localhost/etc/shadow",
        "file://otherhost/share/secret.py",
        f"{ws}/geometry.py?x=/../../{out}/secret.py",
        f"{ws}/geometry.py#/../../{out}/secret.py",
        "untitled:Untitled-1",
        "http://example.com/secret.py",
        "vscode-remote://ssh/secret.py",
        "file:///proc/self/environ",
        "",
        "file:",
    ]


def _inside_but_not_indexed(root: Path) -> list[str]:
    """Paths that resolve inside the folder but name nothing the index holds."""
    ws = root.as_uri()
    return [
        f"{ws}/loop/loop/loop/x.py",
        f"{ws}/.kenning/kenning.sqlite3",
        f"{ws}/.git/config",
        f"{ws}/cycle_a",
    ]


def test_paths_outside_the_workspace_are_refused_and_never_read(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f"def {SECRET}():\n    return 'hunter2'\n")
    root = write_workspace(tmp_path / "ws", FILES)
    (root / "sub").mkdir()
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "outdir").symlink_to(outside)
    (root / "loop").symlink_to(root)
    (root / "cycle_a").symlink_to("cycle_b")
    (root / "cycle_b").symlink_to("cycle_a")
    audit = tmp_path / "audit.log"
    env = {"KENNING_TEST_WATCH_DIR": str(outside), "KENNING_TEST_AUDIT_LOG": str(audit)}
    client = Client(
        env=env,
        cmd=[sys.executable, "-m", "tests.reliability.audited_server"],
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        client.initialize(root, {"model": str(tiny_model)}, watch_files=True)
        client.wait_state("ready")
        refused = _uris(root, outside)
        for uri in refused + _inside_but_not_indexed(root):
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            client.notify(
                "workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": t} for t in (1, 2, 3)]}
            )
            client.notify("workspace/didDeleteFiles", {"files": [{"uri": uri}]})
            client.notify(
                "workspace/didRenameFiles",
                {"files": [{"oldUri": uri, "newUri": f"{root.as_uri()}/renamed.py"}]},
            )
            reply = client.call(
                "kenning/similar",
                {
                    "textDocument": {"uri": uri},
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                },
            )
            if uri in refused:
                assert reply.get("error", {}).get("code") == -32602, (uri, reply)
            else:  # inside, but nothing indexed there: no error needed, nothing found
                assert reply.get("error", {}).get("code") == -32602 or not reply["result"]["results"], (
                    uri,
                    reply,
                )
        client.command("kenning.reindex")
        client.command("kenning.reindex", (outside).as_uri())  # not a folder of ours: ignored
        deadline_statuses = len(client.statuses())
        client.wait_state("ready", after=deadline_statuses - 1)
        for query in (SECRET, "hunter2"):
            for mode in ("lexical", "hybrid"):
                hits = client.search(query, mode=mode)["results"]
                assert not any(SECRET in h["preview"] or "hunter2" in h["preview"] for h in hits)
                assert all(h["uri"].startswith(root.resolve().as_uri() + "/") for h in hits)
        symbols = client.call("workspace/symbol", {"query": SECRET})["result"]
        assert symbols == []
        assert client.alive()
        assert client.close() == 0
    finally:
        client.kill()
    opened = audit.read_text().splitlines() if audit.exists() else []
    assert opened == [], f"the server opened files outside the workspace: {opened[:5]}"
    with sqlite3.connect(root / ".kenning" / "kenning.sqlite3") as conn:
        leaked = conn.execute("SELECT count(*) FROM chunks WHERE text LIKE ?", (f"%{SECRET}%",)).fetchone()[0]
        reasons = dict(
            conn.execute("SELECT path, skip_reason FROM files WHERE skip_reason IS NOT NULL").fetchall()
        )
    assert leaked == 0
    assert reasons.get("link.py") == "outside-root"
    assert reasons.get("outdir") in ("outside-root", None)


def test_the_audit_hook_sees_reads(tmp_path: Path, tiny_model: Path) -> None:
    """The hook above is not blind: a workspace *inside* the watched directory is all logged."""
    root = write_workspace(tmp_path / "watched" / "ws", {"a.py": FILES["geometry.py"]})
    audit = tmp_path / "audit.log"
    env = {"KENNING_TEST_WATCH_DIR": str(tmp_path / "watched"), "KENNING_TEST_AUDIT_LOG": str(audit)}
    client = Client(
        env=env,
        cmd=[sys.executable, "-m", "tests.reliability.audited_server"],
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        client.initialize(root, {"model": str(tiny_model)}, watch_files=True)
        client.wait_state("ready")
        assert client.close() == 0
    finally:
        client.kill()
    assert f"open {root.resolve() / 'a.py'}" in audit.read_text().splitlines()


def test_store_directory_is_private(tmp_path: Path, tiny_model: Path, start_server: StartServer) -> None:
    root = write_workspace(tmp_path / "ws", {"a.py": FILES["geometry.py"]})
    (root / ".kenning").mkdir(mode=0o755)  # made by someone else, too open
    os.chmod(root / ".kenning", 0o755)
    other = write_workspace(tmp_path / "other", {"b.py": FILES["geometry.py"]})
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    assert client.close() == 0
    client = start_server(other, {"model": str(tiny_model), "storePath": str(tmp_path / "x/y/st")})
    client.wait_state("ready")
    assert client.close() == 0
    for store in (root / ".kenning", tmp_path / "x/y/st"):
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o700, store
        assert stat.S_IMODE(os.stat(store / "lock").st_mode) & 0o077 == 0
        assert (store / ".gitignore").read_text().strip().endswith("*")
