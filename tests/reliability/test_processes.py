"""Cases 24 and 25: a second server on the same workspace, and a client that dies without a word.

Two servers: the second sees the writer lock, serves read-only (its searches work) and never
writes; when the first exits, the second takes over writing and catches up. One that finds the
lock held but no database yet (two started at once on a new workspace) waits for it, not fails.
A dead client: the server notices end of input, or — when its input stays open — that the
``processId`` it was given is gone, and exits within seconds, leaving an index that checks out.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kenning.config import Config
from kenning.store.location import open_store_dir
from kenning.store.lock import WriterLock
from kenning.store.trust import store_key
from tests.conftest import FILES, write_workspace
from tests.reliability.conftest import StartServer, generate_workspace

REPO = Path(__file__).resolve().parents[2]


def _store_digest(store: Path) -> dict[str, str]:
    """What a writer would change: every store file but SQLite's shared-memory index, and but an
    empty write-ahead log: once the writer has closed (and removed its log), a reader's next
    read transaction creates an empty one, which holds nothing (seen in CI as a flaky failure)."""
    return {
        p.name: hashlib.blake2b(p.read_bytes(), digest_size=8).hexdigest()
        for p in sorted(store.iterdir())
        if p.is_file()
        and not p.name.endswith("-shm")
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


def test_second_server_reads_and_never_writes(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    options = {"model": str(tiny_model)}
    first = start_server(root, options, watch_files=True)
    first.wait_state("ready")
    store = root / ".kenning"
    before = _store_digest(store)
    lock_text = (store / "lock").read_text()
    assert f"pid {first.proc.pid}" in lock_text

    second = start_server(root, options, watch_files=True)
    status = second.wait_state("ready")
    assert "being written by pid" in status.get("message", ""), status
    assert second.search("circle_area", mode="lexical")["results"][0]["uri"].endswith("/geometry.py")
    dense = second.search("area of a round shape", mode="semantic")["results"]
    assert dense and dense[0]["match"]["denseRank"] == 1
    # Asked to index, it does not: only the writer does.
    (root / "late.py").write_text("def wombat_burrow_depth():\n    return 3\n")
    second.notify("textDocument/didSave", {"textDocument": {"uri": (root / "late.py").as_uri()}})
    second.command("kenning.reindex")
    time.sleep(1.0)
    assert _store_digest(store) == before
    assert (store / "lock").read_text() == lock_text

    # The first server exits: the second takes over writing (within TAKEOVER_EVERY_S) and
    # catches up with what changed while it only read: late.py, saved above.
    assert first.close() == 0
    second.wait_notification(
        lambda m: (
            m.get("method") == "kenning/indexStatus"
            and m["params"]["state"] == "ready"
            and "being written by" not in (m["params"].get("message") or "")
        ),
        timeout=60,
    )
    assert f"pid {second.proc.pid}" in (store / "lock").read_text()
    assert second.search("wombat_burrow_depth", mode="lexical")["results"]
    assert second.search("circle_area", mode="lexical")["results"][0]["uri"].endswith("/geometry.py")
    # ... and keeps the index current from then on, as any writer does.
    (root / "later.py").write_text("def platypus_bill_width():\n    return 5\n")
    second.notify("textDocument/didSave", {"textDocument": {"uri": (root / "later.py").as_uri()}})
    deadline = time.monotonic() + 30
    while not second.search("platypus_bill_width", mode="lexical")["results"]:
        assert time.monotonic() < deadline, "a save after the takeover was not indexed"
        time.sleep(0.1)
    dense = second.search("width of a duck-billed animal's beak", mode="semantic")["results"]
    assert dense, "the new writer embeds too"
    assert second.close() == 0
    with sqlite3.connect(store / "kenning.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # A restarted server is the writer again and finds everything.
    third = start_server(root, options, watch_files=True)
    third.wait_state("ready")
    assert third.search("wombat_burrow_depth", mode="lexical")["results"]
    assert third.search("platypus_bill_width", mode="lexical")["results"]
    assert third.close() == 0


def test_a_server_waits_for_a_store_its_writer_has_not_made_yet(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    """Two servers started at once on a new workspace: the one that loses the writer lock can
    find no database yet. It waits for the writer to make it instead of failing for good."""
    root = write_workspace(tmp_path / "ws", FILES)
    store = open_store_dir(root, Config(), store_key()).path
    lock = WriterLock(store)  # the other server: holds the lock, has not created the database
    lock.acquire()
    try:
        server = start_server(root, {"model": str(tiny_model)}, watch_files=True)
        time.sleep(1.5)
        assert all(s["state"] != "error" for s in server.statuses()), server.statuses()
    finally:
        lock.release()  # it exits before making the database: the waiting server writes it
    status = server.wait_state("ready", timeout=60)
    assert "being written by" not in (status.get("message") or ""), status
    assert f"pid {server.proc.pid}" in (store / "lock").read_text()
    assert server.search("circle_area", mode="lexical")["results"][0]["uri"].endswith("/geometry.py")
    assert not any("cannot open" in line for line in server.log_lines())
    assert server.close() == 0


# -- case 25 ----------------------------------------------------------------------------------------

_PARENT = textwrap.dedent("""
    # The "editor": starts the server, initializes it with its own pid, relays what it hears.
    import json, os, subprocess, sys
    root, model, stdin_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    server = subprocess.Popen([sys.executable, "-m", "kenning", "serve"],
                              stdin=stdin_fd if stdin_fd >= 0 else subprocess.PIPE,
                              stdout=subprocess.PIPE, pass_fds=(stdin_fd,) if stdin_fd >= 0 else ())
    out = os.fdopen(int(sys.argv[4]), "wb", buffering=0) if stdin_fd >= 0 else server.stdin
    def send(msg):
        body = json.dumps(msg).encode()
        out.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        out.flush()
    print(server.pid, flush=True)
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": os.getpid(), "rootUri": "file://" + root, "capabilities": {},
        "initializationOptions": {"model": model}}})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    while True:
        length = None
        while True:
            line = server.stdout.readline()
            if not line:
                sys.exit(0)
            if line.strip() == b"":
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        msg = json.loads(server.stdout.read(length))
        if msg.get("method") == "kenning/indexStatus":
            print(msg["params"]["state"], flush=True)
""")


def _gone(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in text  # exited, waiting for a reaper


@pytest.mark.parametrize("input_stays_open", [False, True], ids=["eof", "parent-pid"])
def test_server_exits_when_its_client_is_killed(
    tmp_path: Path, tiny_model: Path, input_stays_open: bool
) -> None:
    root = tmp_path / "ws"
    generate_workspace(root, 300, seed=9)
    fds: tuple[int, int] | None = os.pipe() if input_stays_open else None
    args = [str(root), str(tiny_model), str(fds[0] if fds else -1), str(fds[1] if fds else -1)]
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, *args],
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=fds or (),
        cwd=REPO,
    )
    server_pid = 0
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        # Kill the client while the server is indexing.
        deadline = time.monotonic() + 60
        while (line := parent.stdout.readline().strip()) not in ("scanning", "embedding"):
            assert line and time.monotonic() < deadline, f"no indexing status, got {line!r}"
        parent.kill()
        parent.wait(timeout=10)
        killed_at = time.monotonic()
        while not _gone(server_pid):
            assert time.monotonic() - killed_at < 15, "the server outlived its client by 15 s"
            time.sleep(0.1)
        took = time.monotonic() - killed_at
    finally:
        if parent.poll() is None:
            parent.kill()
        if server_pid and not _gone(server_pid):
            os.kill(server_pid, signal.SIGKILL)
        for fd in fds or ():
            os.close(fd)
    print(
        f"\nserver exited {took:.1f}s after its client was killed "
        f"({'parent pid watch' if input_stays_open else 'end of input'})",
        file=sys.stderr,
    )
    store = root / ".kenning"
    with sqlite3.connect(store / "kenning.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if "vectors_file" in meta:
        from kenning.store.trust import store_key
        from kenning.store.vectors import file_mac

        assert file_mac(store / meta["vectors_file"], store_key()) == meta["vectors_mac"]
    assert not (store / "lock").exists() or _lock_is_free(store / "lock")
    json.dumps(meta)  # the meta table is readable text


def _lock_is_free(path: Path) -> bool:
    import fcntl

    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
