"""Hostile repositories (issue #16, the workspace half): links, git configuration, names, ignore
files, bad globs — each prepared as an attacker would and opened through the CLI and the server.

Every case checks that nothing outside the workspace was touched (a canary directory's bytes,
mode and mtime), that nothing outside was returned (the canary's token never appears in a
reply), and that the rest of the workspace was indexed.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kenning.workspace import SkipReason, discover, read_source
from tests.hostile.workspace_kit import (
    INSIDE,
    SECRET,
    Canary,
    CliRun,
    assert_no_secret,
    hit_paths,
    run_cli,
)
from tests.reliability.conftest import StartServer, start_server, tiny_model  # noqa: F401

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT_ENV)


def repo(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x", "--allow-empty")


def server_view(start: StartServer, root: Path, model: Path, query: str) -> list[Path]:
    client = start(root, {"model": str(model)}, watch_files=True)
    status = client.wait_state("ready", timeout=90)
    assert status["state"] == "ready"
    secret = client.search(SECRET, mode="lexical")
    assert_no_secret(secret)
    assert not secret["results"], secret
    hits = client.search(query, mode="lexical", limit=50)
    assert_no_secret(hits)
    assert client.close() == 0
    return hit_paths(hits["results"])


# -- links -----------------------------------------------------------------------------------


def test_tracked_directory_replaced_by_a_link_out(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "keep.py").write_text(f"def keep():\n    return '{INSIDE}'\n")
    (root / "pkg" / "a.py").write_text("def innocent():\n    return 1\n")
    (root / "pkg" / "secret.py").write_text("def innocent_too():\n    return 2\n")
    repo(root)
    canary = Canary.make(tmp_path / "outside")
    # After the commit, as a prepared archive or a second checkout would have it: git still
    # lists pkg/a.py and pkg/secret.py from its index, and both now lead outside.
    for p in (root / "pkg").iterdir():
        p.unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(canary.root, target_is_directory=True)
    (root / "leak.py").symlink_to(canary.root / "secret.py")
    (root / "nested").mkdir()
    (root / "nested" / "deeper").symlink_to(canary.root, target_is_directory=True)

    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    cli.index()
    assert not cli.search(SECRET)
    assert [h["path"] for h in cli.search(INSIDE)] == ["keep.py"]
    reasons = cli.skip_reasons()
    assert reasons["pkg/a.py"] == reasons["pkg/secret.py"] == reasons["leak.py"] == "outside-root"
    assert not any(p.startswith(("pkg/", "nested/")) for p in cli.indexed_paths())

    found = server_view(start_server, root, tiny_model, INSIDE)
    assert found == [root / "keep.py"]
    canary.assert_untouched()


def test_directory_swapped_for_a_link_while_reading(tmp_path: Path) -> None:
    """The race: discovery sees a real directory, the read meets a link. 3,000 reads while a
    thread swaps the directory for a link to the outside and back: none returns outside text,
    none raises."""
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    canary = Canary.make(tmp_path / "outside")
    for i in range(10):
        (root / "d" / f"f{i}.py").write_text(f"x = 'inside {i}'\n")
        (canary.root / f"f{i}.py").write_text(f"x = '{SECRET} {i}'\n")
    canary.take()
    entries = discover(root).files
    assert len(entries) == 10
    stop = threading.Event()

    def swap() -> None:
        # Each state holds for a moment: swapping flat out, on a loaded two-core machine the
        # real directory was in place too briefly for any of the 3,000 reads to meet it (CI,
        # session 27), and the test is about reads that meet either.
        while not stop.is_set():
            os.rename(root / "d", root / "d.real")
            (root / "d").symlink_to(canary.root, target_is_directory=True)
            stop.wait(0.0001)
            os.unlink(root / "d")
            os.rename(root / "d.real", root / "d")
            stop.wait(0.0001)

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes: dict[str, int] = {}
    try:
        for i in range(3000):
            got = read_source(entries[i % len(entries)])
            if isinstance(got, SkipReason):
                outcomes[got.value] = outcomes.get(got.value, 0) + 1
            else:
                assert SECRET not in got.text
                outcomes["read"] = outcomes.get("read", 0) + 1
            if i % 20 == 0:
                # Discovery in the middle of the swaps never raises (realpath could: EINVAL) and
                # never lists what is outside.
                found = discover(root)
                assert all(e.path.startswith(("d/f", "d.real/f")) for e in found.files), found
                for e in found.files:
                    got = read_source(e)
                    assert isinstance(got, SkipReason) or SECRET not in got.text
    finally:
        stop.set()
        swapper.join()
    assert outcomes.get("read", 0) > 0, outcomes
    assert set(outcomes) <= {"read", "outside-root", "vanished"}, outcomes
    canary.assert_untouched()


# -- repository configuration --------------------------------------------------------------


def test_repository_configuration_runs_nothing(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root, marker_dir = tmp_path / "ws", tmp_path / "markers"
    marker_dir.mkdir()
    root.mkdir()
    (root / "a.py").write_text(f"def a():\n    return '{INSIDE}'\n")
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    repo(root)
    hook = marker_dir / "ran"
    cmd = f"sh -c 'echo $0 $@ >> {hook}'"
    for key, value in [
        ("core.fsmonitor", cmd),
        ("core.pager", cmd),
        ("filter.evil.clean", cmd),
        ("filter.evil.smudge", cmd),
        ("filter.evil.process", cmd),
        ("diff.evil.textconv", cmd),
        ("diff.external", cmd),
        ("core.hooksPath", str(marker_dir)),
    ]:
        git(root, "config", key, value)
    (root / "b.py").write_text("def b():\n    return 2\n")  # untracked: --others must list it

    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    cli.index()
    assert cli.indexed_paths() >= {"a.py", "b.py"}
    assert server_view(start_server, root, tiny_model, INSIDE) == [root / "a.py"]
    assert not hook.exists(), hook.read_text()
    # The trap is armed: git run the ordinary way executes the repository's fsmonitor command.
    subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, check=False)
    assert hook.exists()


# -- names -----------------------------------------------------------------------------------

NAMES = {
    b"caf\xe9.py": "qzlatinnamexq",  # Latin-1, not UTF-8
    b"\xff\xfe bad.py": "qzinvalidbytesxq",
    b"new\nline.py": "qznewlinenamexq",
    b"pct%41 #?&=.py": "qzpercentnamexq",
    "日本語 ü.py".encode(): "qzunicodenamexq",
    b"back\\slash.py": "qzbackslashnamexq",
}


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_every_file_name_works(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
    mode: str,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    base = os.fsencode(root)
    for name, token in NAMES.items():
        with open(base + b"/" + name, "wb") as f:
            f.write(f"def holder():\n    return '{token}'\n".encode())
    (root / "plain.py").write_text(f"def plain():\n    return '{INSIDE}'\n")
    if mode == "git":
        repo(root)

    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    out = cli.index()
    assert "indexed 7 files" in out.stdout, out.stdout
    for name, token in NAMES.items():
        hits = cli.search(token)
        shown = name.decode("utf-8", "backslashreplace")
        assert [h["path"] for h in hits] == [shown], (name, hits)

    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    assert client.wait_state("ready", timeout=90)["files"] == 7
    for name, token in NAMES.items():
        got = hit_paths(client.search(token, mode="lexical")["results"])
        assert [os.fsencode(p) for p in got] == [base + b"/" + name], (name, got)
    # A save of a file with such a name re-indexes it (URI -> path -> stored text and back).
    path = base + b"/" + b"\xff\xfe bad.py"
    with open(path, "wb") as f:
        f.write(b"def holder():\n    return 'qzrenamedtokenxq'\n")
    uri = Path(os.fsdecode(path)).as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "def holder(): pass\n"}
    client.notify("textDocument/didOpen", {"textDocument": doc})
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    deadline = time.monotonic() + 30
    while not client.search("qzrenamedtokenxq", mode="lexical")["results"]:
        assert time.monotonic() < deadline, "the save was not indexed"
        time.sleep(0.2)
    similar = client.call(
        "kenning/similar",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        },
    )
    assert "result" in similar, similar
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.search("qzrenamedtokenxq", mode="lexical")["results"]
    assert client.close() == 0


def _make_deep(base: Path, levels: int, name_len: int) -> bytes:
    """Directories nested past PATH_MAX (made through dir fds: no path is ever that long)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    rel = b""
    try:
        for i in range(levels):
            name = (f"{i:03d}" + "d" * (name_len - 3)).encode()
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            rel += name + b"/"
        wfd = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(wfd, b"def deep():\n    return 'qzdeepxq'\n")
        os.close(wfd)
    finally:
        os.close(fd)
    return rel + b"deep.py"


def test_path_longer_than_path_max_is_skipped_with_a_reason(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(f"def a():\n    return '{INSIDE}'\n")
    _make_deep(root, 24, 200)  # ~4,800 bytes below the root

    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    cli.index()
    stats = cli.stats()
    assert stats["skipped"].get("path-too-long") == 1, stats
    assert stats["files"] == 1
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    status = client.wait_state("ready", timeout=90)
    assert (status["files"], status["skipped"]) == (1, 1), status
    assert hit_paths(client.search(INSIDE, mode="lexical")["results"]) == [root / "a.py"]
    assert client.close() == 0


def test_workspace_path_with_uri_characters(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "My C# project?x=1&y=%41 é"
    root.mkdir()
    (root / "a #1.py").write_text(f"def a():\n    return '{INSIDE}'\n")
    cli = CliRun(root, root / ".kenning", tiny_model)
    cli.index()
    assert [h["path"] for h in cli.search(INSIDE)] == ["a #1.py"]
    assert server_view(start_server, root, tiny_model, INSIDE) == [root / "a #1.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [root.name], "stray files next to it"


# -- ignore files ----------------------------------------------------------------------------


def test_parent_repository_that_ignores_everything_says_so(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    parent = tmp_path / "parent"
    root = parent / "vendor" / "lib"
    root.mkdir(parents=True)
    (parent / ".gitignore").write_text("*\n")
    repo(parent)
    (root / "a.py").write_text("def a():\n    return 1\n")
    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    out = cli.index()
    assert "indexed 0 files" in out.stdout
    assert "pattern '*'" in out.stderr and ".gitignore:1" in out.stderr, out.stderr
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    status = client.wait_state("ready", timeout=90)
    assert status["files"] == 0
    assert "pattern '*'" in (status.get("message") or ""), status
    assert client.close() == 0


def test_ignore_files_with_a_bom_and_a_symlinked_kenningignore(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    canary = Canary.make(tmp_path / "outside")
    (canary.root / "ignore-all").write_text("*.py\n")
    canary.take()
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / ".kenningignore").write_bytes(b"\xef\xbb\xbfhidden_by_kenningignore.py\n")
    (root / ".gitignore").write_bytes(b"\xef\xbb\xbfhidden_by_gitignore.py\n")  # walk mode
    (root / "sub" / ".gitignore").write_bytes(b"\xef\xbb\xbfnested_hidden.py\n")
    for name in ("hidden_by_kenningignore.py", "hidden_by_gitignore.py", "sub/nested_hidden.py"):
        (root / name).write_text(f"x = '{SECRET}'\n")  # must not be indexed either
    (root / "a.py").write_text(f"def a():\n    return '{INSIDE}'\n")

    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    cli.index()
    assert cli.indexed_paths() == {"a.py", ".kenningignore", ".gitignore", "sub/.gitignore"}
    assert server_view(start_server, root, tiny_model, INSIDE) == [root / "a.py"]

    # A .kenningignore that is a link to a file outside is refused, not read.
    linked = tmp_path / "ws2"
    linked.mkdir()
    (linked / "a.py").write_text(f"def a():\n    return '{INSIDE}'\n")
    (linked / ".kenningignore").symlink_to(canary.root / "ignore-all")
    cli2 = CliRun(linked, tmp_path / "cli-store2", tiny_model)
    out = cli2.index()
    assert "is a symlink" in out.stderr, out.stderr
    assert cli2.indexed_paths() == {"a.py"}
    assert server_view(start_server, linked, tiny_model, INSIDE) == [linked / "a.py"]
    canary.assert_untouched()


# -- user input ------------------------------------------------------------------------------

BAD_GLOBS = ["a\\", "!", "[z-a]", "\\"]


def test_bad_path_globs_are_clear_errors(
    tmp_path: Path,
    tiny_model: Path,  # noqa: F811
    start_server: StartServer,  # noqa: F811
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(f"def a():\n    return '{INSIDE}'\n")
    cli = CliRun(root, tmp_path / "cli-store", tiny_model)
    for glob in BAD_GLOBS:
        proc = run_cli("search", INSIDE, "--path", glob, *cli.common(), check=False)
        assert proc.returncode == 2, (glob, proc.stdout, proc.stderr)
        assert "not a valid glob" in proc.stderr and repr(glob) in proc.stderr, proc.stderr
    client = start_server(root, {"model": str(tiny_model)}, watch_files=True)
    client.wait_state("ready", timeout=90)
    for glob in BAD_GLOBS:
        reply = client.call("workspace/semanticSearch", {"query": "a", "filters": {"paths": ["*.py", glob]}})
        assert reply.get("error", {}).get("code") == -32602, (glob, reply)
        assert "filters.paths[1]" in reply["error"]["message"], reply
    ok = client.search(INSIDE, filters={"paths": ["*.py"]}, mode="lexical")
    assert hit_paths(ok["results"]) == [root / "a.py"]
    assert client.close() == 0
