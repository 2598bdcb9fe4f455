"""Workspace discovery, safe reading and path vetting, on real trees with real git."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.workspace import (
    Discovery,
    SkipReason,
    SourceText,
    discover,
    path_to_uri,
    read_source,
    resolve_inside,
    uri_to_path,
)
from kenning.workspace import git as workspace_git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The machine's own git configuration (global excludes, safe.directory …) must not leak in.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True)
    return proc.stdout.decode()


def git_init(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")


def commit_all(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "snapshot", "--allow-empty")


def git_shows(root: Path) -> set[str]:
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return {p for p in out.split("\0") if p}


def write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def paths(found: Discovery) -> set[str]:
    return {e.path for e in found.files}


def build_ignore_tree(root: Path) -> None:
    """Nested .gitignore files with negations, anchors and directory patterns."""
    write(root, ".gitignore", "*.log\nbuild/\n/top_only.txt\n!keep.log\nsecret*\n")
    write(root, "a.py")
    write(root, "a.log")
    write(root, "keep.log")
    write(root, "top_only.txt")
    write(root, "secret.env")
    write(root, "build/out.py")
    write(root, "src/top_only.txt")  # "/top_only.txt" is anchored to the root
    write(root, "src/main.py")
    write(root, "src/debug.log")
    write(root, "src/.gitignore", "!important.log\n/local.txt\n*.tmp\n!keep.tmp\n")
    write(root, "src/important.log")
    write(root, "src/local.txt")
    write(root, "src/deep/local.txt")  # anchored to src/, so this one stays
    write(root, "src/x.tmp")
    write(root, "src/keep.tmp")
    write(root, "src/build/gen.py")  # "build/" reaches any depth
    write(root, "docs/.gitignore", "*\n!*.md\n!*/\n")
    write(root, "docs/guide.md")
    write(root, "docs/notes.txt")
    write(root, "docs/sub/more.md")
    write(root, "docs/sub/raw.bin", b"\x00\x01")
    write(root, "lib/.gitignore", "vendor/\n!vendor/keep.py\n")  # cannot re-include under vendor/
    write(root, "lib/vendor/keep.py")
    write(root, "lib/core.py")


# -- discovery: git's answers in both modes ----------------------------------------------------


def test_git_mode_is_what_git_shows(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    build_ignore_tree(root)
    git_init(root)
    write(root, ".git/info/exclude", "src/main.py\n")  # repository-local excludes
    write(root, "tracked_then_ignored.log")
    git(root, "add", "-f", "tracked_then_ignored.log")  # tracked files stay, ignored or not
    commit_all(root)
    write(root, "untracked.py")
    write(root, "gone.py")
    git(root, "add", "gone.py")
    (root / "gone.py").unlink()  # tracked, deleted on disk: simply absent

    found = discover(root)
    assert found.method == "git"
    expected = git_shows(root) - {"gone.py"}
    assert paths(found) == expected
    assert "tracked_then_ignored.log" in expected
    assert "src/main.py" not in expected and "untracked.py" in expected
    assert [e.path for e in found.files] == sorted(expected)
    assert found.skipped == {}


def test_walk_mode_gives_the_same_answers_as_git(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    build_ignore_tree(plain)
    found = discover(plain)
    assert found.method == "walk"
    # The same tree as a fresh repository where nothing is tracked yet: git's verdict.
    repo = tmp_path / "repo"
    shutil.copytree(plain, repo)
    git_init(repo)
    assert paths(found) == git_shows(repo)
    assert "lib/vendor/keep.py" not in paths(found)
    assert {"src/important.log", "src/deep/local.txt", "docs/sub/more.md"} <= paths(found)


_PATTERNS = [
    "*.log",
    "!keep.log",
    "build/",
    "/build",
    "b*/",
    "!b1/",
    "*.py",
    "!*.py",
    "a/**/c",
    "**/tmp",
    "d/*.txt",
    "!d/x.txt",
    "*",
    "!*/",
    "!*.md",
    "x?",
    "[ab].txt",
    "/a/",
    "c",
    "!c",
    "**/b/*.py",
    "b/**",
    "!b/x.txt",
    "*/",
    "**/",
    "!a/",
    "a/b/",
    "!**/c/",
    "tmp/",
    "!tmp/b/",
    "d/**/*.py",
]
_FILES = ["a.py", "x.txt", "keep.log", "c", "r.md", "xx", "a.txt"]
_DIRS = ["a", "b", "b1", "build", "d", "tmp", "a/b", "a/b/c", "d/e", "tmp/b"]


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_walk_matches_git_on_random_trees(
    tmp_path_factory: pytest.TempPathFactory, rnd: random.Random
) -> None:
    base = tmp_path_factory.mktemp("random")
    plain = base / "plain"
    plain.mkdir()
    dirs = ["", *rnd.sample(_DIRS, rnd.randint(2, len(_DIRS)))]
    for d in dirs:
        (plain / d).mkdir(parents=True, exist_ok=True)
    for d in dirs:
        for name in rnd.sample(_FILES, rnd.randint(1, 4)):
            if not (plain / d / name).is_dir():
                write(plain / d, name)
        if rnd.random() < 0.6:
            write(plain / d, ".gitignore", "\n".join(rnd.sample(_PATTERNS, rnd.randint(1, 4))))
    repo = base / "repo"
    shutil.copytree(plain, repo)
    git_init(repo)
    assert paths(discover(plain)) == git_shows(repo)


def test_root_below_the_repository_top(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, ".gitignore", "*.gen.py\n")
    write(root, "pkg/mod.py")
    write(root, "pkg/mod.gen.py")
    write(root, "pkg/.kenningignore", "skip_me.py\n")
    write(root, "pkg/skip_me.py")
    write(root, "other/x.py")
    git_init(root)
    commit_all(root)
    found = discover(root / "pkg")
    assert found.method == "git"
    assert paths(found) == {"mod.py", ".kenningignore"}
    assert found.files[0].abs_path == (root / "pkg" / ".kenningignore")


def test_kenningignore_and_exclude_in_both_modes(tmp_path: Path) -> None:
    for mode in ("walk", "git"):
        root = tmp_path / mode
        write(root, ".kenningignore", "# generated code\ngenerated/\n*.min.js\n")
        write(root, "app.js")
        write(root, "app.min.js")
        write(root, "generated/models.py")
        write(root, "README.md")
        write(root, "docs/a.md")
        write(root, "vendor/lib.py")
        write(root, "vendor/keep.py")
        if mode == "git":
            git_init(root)
            commit_all(root)
        found = discover(root, exclude=["*.md", "!README.md", "vendor/", "!vendor/keep.py", "[z-a]"])
        assert found.method == mode
        assert paths(found) == {".kenningignore", "app.js", "README.md"}, mode


def test_store_directories_are_never_indexed(tmp_path: Path) -> None:
    for mode in ("walk", "git"):
        root = tmp_path / mode
        write(root, "main.py")
        write(root, ".kenning/kenning.sqlite3", b"SQLite format 3\x00")
        write(root, "cache/index/vectors.usearch", b"\x00" * 10)
        write(root, "cache/keep.py")
        if mode == "git":
            git_init(root)
        found = discover(root, store_dir=root / "cache" / "index")
        assert paths(found) == {"main.py", "cache/keep.py"}, mode
        # A store elsewhere changes nothing here, and the default one is still skipped.
        found = discover(root, store_dir=tmp_path / "elsewhere")
        assert paths(found) == {"main.py", "cache/keep.py", "cache/index/vectors.usearch"}, mode


def test_size_cap_is_a_stat_rule(tmp_path: Path) -> None:
    write(tmp_path, "small.py", "x" * 1024)
    write(tmp_path, "big.py", "x" * 1025)
    found = discover(tmp_path, max_file_size=1024)
    assert paths(found) == {"small.py"}
    assert found.skipped == {"big.py": SkipReason.TOO_LARGE}
    assert str(SkipReason.TOO_LARGE) == "too-large"


def test_nested_git_directories_are_skipped_in_a_walk(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    write(tmp_path, "checkout/.git/config", "[core]\n")
    write(tmp_path, "checkout/.git/objects/ab/cdef", b"\x00")
    write(tmp_path, "checkout/lib.py")
    found = discover(tmp_path)
    assert found.method == "walk"
    assert paths(found) == {"a.py", "checkout/lib.py"}


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_deep_nesting(tmp_path: Path, mode: str) -> None:
    root = tmp_path / mode
    deep = "/".join(["d"] * 400)
    write(root, f"{deep}/x.py")
    write(root, f"{deep}/skip.tmp")
    write(root, ".kenningignore", "*.tmp\n")
    if mode == "git":
        git_init(root)
    found = discover(root)
    assert found.method == mode
    assert paths(found) == {f"{deep}/x.py", ".kenningignore"}


# -- discovery: links and special files ----------------------------------------------------------


def make_link_zoo(root: Path, outside: Path) -> None:
    write(root, "src/a.py")
    write(outside / "secret.txt", "password\n")
    (root / "loop").symlink_to("..")
    (root / "self").symlink_to(".")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "etc_link").symlink_to("/etc")
    (root / "key").symlink_to(outside / "secret.txt")
    (root / "alias.py").symlink_to("src/a.py")
    (root / "src_link").symlink_to("src")
    (root / "dangling").symlink_to("nowhere")
    (root / "into_git").symlink_to(".git/config")


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_symlinks(tmp_path: Path, mode: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    make_link_zoo(root, outside)
    if mode == "git":
        git_init(root)
        commit_all(root)  # git stores links as links, loops and all
    started = time.perf_counter()
    found = discover(root)
    assert time.perf_counter() - started < 5
    assert found.method == mode
    assert paths(found) == {"src/a.py", "alias.py"}
    alias = next(e for e in found.files if e.path == "alias.py")
    assert alias.size == (root / "src/a.py").stat().st_size
    expected = {
        "loop": SkipReason.OUTSIDE_ROOT,
        "etc_link": SkipReason.OUTSIDE_ROOT,
        "key": SkipReason.OUTSIDE_ROOT,
        "self": SkipReason.NOT_A_FILE,
        "src_link": SkipReason.NOT_A_FILE,
        "a": SkipReason.BROKEN_LINK,
        "b": SkipReason.BROKEN_LINK,
        "dangling": SkipReason.BROKEN_LINK,
        "into_git": SkipReason.OUTSIDE_ROOT,  # inside, but where the index never looks
    }
    assert found.skipped == expected


def test_fifo_and_socket_are_not_files(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    os.mkfifo(tmp_path / "pipe.py")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock.py"))
        found = discover(tmp_path)
        assert paths(found) == {"a.py"}
        assert found.skipped == {"pipe.py": SkipReason.NOT_A_FILE, "sock.py": SkipReason.NOT_A_FILE}
        # Reading them directly must not block or raise either.
        assert read_source(tmp_path / "pipe.py") is SkipReason.NOT_A_FILE
        assert read_source(tmp_path / "sock.py") is SkipReason.NOT_A_FILE
    finally:
        server.close()
    assert read_source(tmp_path) is SkipReason.NOT_A_FILE  # a directory


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        discover(write(tmp_path, "file.py"))
    with pytest.raises(NotADirectoryError):
        discover(tmp_path / "missing")


def test_git_failure_falls_back_to_walking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    write(root, ".gitignore", "*.log\n")
    write(root, "a.py")
    write(root, "a.log")
    git_init(root)
    # A repository owned by someone else: git refuses it ("dubious ownership").
    monkeypatch.setattr(workspace_git.shutil, "which", lambda _name: None)
    found = discover(root)
    assert found.method == "walk"
    assert paths(found) == {".gitignore", "a.py"}


def test_git_redirecting_environment_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, other = tmp_path / "repo", tmp_path / "other"
    write(root, "mine.py")
    write(other, "theirs.py")
    git_init(root)
    git_init(other)
    commit_all(other)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as inside a hook of another repository
    found = discover(root)
    assert found.method == "git"
    assert paths(found) == {"mine.py"}


# -- reading ---------------------------------------------------------------------------------


def read(tmp_path: Path, content: bytes, **kwargs: int) -> SourceText | SkipReason:
    return read_source(write(tmp_path, "f.txt", content), **kwargs)


def test_read_plain_utf8(tmp_path: Path) -> None:
    data = "def café():\n    return 1\n".encode()
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "def café():\n    return 1\n"
    assert got.encoding == "utf-8" and got.replaced == 0
    assert got.content_hash == hashlib.blake2b(data, digest_size=16).hexdigest()
    assert got.size == len(data)
    assert got.mtime_ns == (tmp_path / "f.txt").stat().st_mtime_ns


def test_line_endings_match_the_editor(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfa\r\nb\rc\n"
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "a\nb\nc\n"
    assert got.text.split("\n") == ["a", "b", "c", ""]
    assert got.encoding == "utf-8-sig"
    assert got.content_hash == hashlib.blake2b(data, digest_size=16).hexdigest()  # BOM included


@pytest.mark.parametrize(("bom_codec", "name"), [("utf-16", "utf-16-le"), ("utf-16-be", "utf-16-be")])
def test_utf16_with_bom_is_text(tmp_path: Path, bom_codec: str, name: str) -> None:
    text = "print('héllo')\r\nx = '日本'\n"
    data = text.encode(bom_codec) if bom_codec == "utf-16" else b"\xfe\xff" + text.encode(bom_codec)
    got = read(tmp_path, data)
    assert isinstance(got, SourceText)
    assert got.text == "print('héllo')\nx = '日本'\n"
    assert got.encoding == name


def test_binary_is_skipped(tmp_path: Path) -> None:
    assert read(tmp_path, b"import os\n\x00\x01\x02") is SkipReason.BINARY
    assert read(tmp_path, b"\xff\xfe" + b"\x00\x00" * 8) is SkipReason.BINARY  # BOM, then NULs
    noise = random.Random(1).randbytes(4096).replace(b"\xff", b"").replace(b"\xfe", b"")
    assert read(tmp_path, noise + b"\x00") is SkipReason.BINARY


def test_latin1_and_shift_jis_are_decoded_with_replacements(tmp_path: Path) -> None:
    latin = "# café naïve\nx = 1\n".encode("latin-1")
    got = read(tmp_path, latin)
    assert isinstance(got, SourceText)
    assert got.text == latin.decode("utf-8", "replace")
    assert got.replaced == 2 and got.encoding == "utf-8 (replaced)"
    assert got.text.split("\n")[1] == "x = 1"

    sjis = "# 日本語のコメント\nprint(1)\n".encode("shift_jis")
    got = read(tmp_path, sjis)
    assert isinstance(got, SourceText)
    assert got.text == sjis.decode("utf-8", "replace")
    assert got.replaced > 0
    assert got.text.split("\n")[1:] == ["print(1)", ""]  # line numbers still match

    got = read(tmp_path, b"ok\xff\xfe\xe3\x81x")  # two lone bytes, one truncated sequence
    assert isinstance(got, SourceText)
    assert got.text == "ok\ufffd\ufffd\ufffdx" and got.replaced == 4


def test_generated_files(tmp_path: Path) -> None:
    minified = b"var a=1;" * 400_000  # 3.2 MB on one line
    assert read(tmp_path, minified, max_file_size=10_000_000) is SkipReason.GENERATED
    one_long_line = b"x = 1\n" * 2000 + b"y = '" + b"z" * 25_000 + b"'\n"
    assert read(tmp_path, one_long_line) is SkipReason.GENERATED
    normal = b"x = 1\n" * 2000
    assert isinstance(read(tmp_path, normal), SourceText)
    # CR-only line endings are lines too: not one giant line.
    assert isinstance(read(tmp_path, b"x = 1\r" * 5000), SourceText)


def test_50mb_single_line_is_skipped_in_milliseconds(tmp_path: Path) -> None:
    with open(tmp_path / "bundle.min.js", "wb") as f:
        chunk = b"a" * (1 << 20)
        for _ in range(50):
            f.write(chunk)
    started = time.perf_counter()
    found = discover(tmp_path)
    got = read_source(tmp_path / "bundle.min.js")
    elapsed = time.perf_counter() - started
    assert found.skipped == {"bundle.min.js": SkipReason.TOO_LARGE}
    assert got is SkipReason.TOO_LARGE
    assert elapsed < 0.5  # milliseconds in practice; nothing is read


def test_file_deleted_between_discover_and_read(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    (entry,) = discover(tmp_path).files
    (tmp_path / "a.py").unlink()
    assert read_source(entry) is SkipReason.VANISHED
    assert read_source(tmp_path / "a.py" / "x") is SkipReason.VANISHED  # parent is not a dir
    (tmp_path / "loop").symlink_to("loop")
    assert read_source(tmp_path / "loop") is SkipReason.BROKEN_LINK


def test_file_changed_between_stat_and_read(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "old = 1\n")
    (entry,) = discover(tmp_path).files
    path.write_text("new = 2  # longer now\n")
    os.utime(path, ns=(entry.mtime_ns + 5_000_000_000, entry.mtime_ns + 5_000_000_000))
    got = read_source(entry)
    assert isinstance(got, SourceText)
    assert got.text == "new = 2  # longer now\n"
    assert got.content_hash == hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    assert (got.size, got.mtime_ns) == (path.stat().st_size, path.stat().st_mtime_ns)
    assert (got.size, got.mtime_ns) != (entry.size, entry.mtime_ns)


def test_file_grown_past_the_cap_after_discovery(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "x = 1\n")
    (entry,) = discover(tmp_path, max_file_size=100).files
    path.write_text("x = 1\n" * 100)
    assert read_source(entry, max_file_size=100) is SkipReason.TOO_LARGE


def _as_nobody(func) -> object:  # type: ignore[no-untyped-def]
    """Run ``func`` in a forked child that has dropped root, and return what it returned."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            result = repr(func())
        except BaseException as exc:  # report anything to the parent
            result = f"error: {exc!r}"
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


def test_unreadable_file_and_directory() -> None:
    # pytest's temporary directories are private to root; this one must be traversable by all.
    base = Path(tempfile.mkdtemp(prefix="kenning-perm-"))
    try:
        base.chmod(0o755)
        write(base, "ok.py")
        secret = write(base, "secret.py")
        write(base, "locked/inner.py")
        secret.chmod(0o000)
        (base / "locked").chmod(0o000)
        if os.geteuid() == 0:
            # Root reads anything: drop to "nobody" in a child to hit real permission errors.
            assert _as_nobody(lambda: read_source(secret)) == repr(SkipReason.UNREADABLE)
            listed = _as_nobody(lambda: (sorted(paths(found := discover(base))), found.method))
            assert listed == repr((["ok.py", "secret.py"], "walk"))  # the locked dir is left out
        else:
            assert read_source(secret) is SkipReason.UNREADABLE
            assert paths(discover(base)) == {"ok.py", "secret.py"}
    finally:
        (base / "locked").chmod(0o755)
        shutil.rmtree(base)


# -- paths from clients --------------------------------------------------------------------------


def test_resolve_inside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "src/a.py")
    write(tmp_path / "outside", "secret.txt")
    (ws / "out_link").symlink_to(tmp_path / "outside")
    (ws / "in_link.py").symlink_to("src/a.py")
    inner = ws / "src"
    assert resolve_inside([ws], ws / "src/a.py") == (ws, "src/a.py")
    assert resolve_inside([ws], str(ws / "src/a.py")) == (ws, "src/a.py")
    assert resolve_inside([ws, inner], ws / "src/a.py") == (inner, "a.py")  # innermost root
    assert resolve_inside([ws], ws) == (ws, ".")
    assert resolve_inside([ws], ws / "src/../src/a.py") == (ws, "src/a.py")
    assert resolve_inside([ws], ws / "in_link.py") == (ws, "src/a.py")  # judged by its target
    assert resolve_inside([ws], ws / "new_file.py") == (ws, "new_file.py")  # need not exist
    assert resolve_inside([ws], ws / ".." / "outside" / "secret.txt") is None
    assert resolve_inside([ws], ws / "out_link" / "secret.txt") is None
    assert resolve_inside([ws], Path("/etc/passwd")) is None
    assert resolve_inside([ws], "src/a.py") is None  # relative: ambiguous
    assert resolve_inside([ws], str(ws) + "/a\0b") is None
    assert resolve_inside([ws], Path(str(ws) + "-sibling") / "x.py") is None  # prefix, not parent
    assert resolve_inside([], ws / "src/a.py") is None


def test_uris_from_clients(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "src/a.py")
    assert uri_to_path(path_to_uri(ws / "src/a.py")) == ws / "src/a.py"
    assert uri_to_path("file:///etc/passwd") == Path("/etc/passwd")
    assert uri_to_path("file://localhost/etc/passwd") == Path("/etc/passwd")
    assert uri_to_path("file:///a%20b/caf%C3%A9.py") == Path("/a b/café.py")
    traversal = f"file://{ws}/..%2F..%2F..%2Fetc/passwd"
    path = uri_to_path(traversal)
    assert path is not None and resolve_inside([ws], path) is None
    assert resolve_inside([ws], uri_to_path(f"file://{ws}/../../etc/passwd")) is None  # type: ignore[arg-type]
    for refused in [
        "untitled:Untitled-1",
        "http://example.com/a.py",
        "vscode-notebook-cell:/x.ipynb#W0",
        "file://otherhost/share/a.py",
        "file:///a.py?query=1",
        "file:///a.py#L10",
        "file:///a%00b.py",
        "file:relative/a.py",
        "",
        "not a uri",
    ]:
        assert uri_to_path(refused) is None, refused
    assert uri_to_path(None) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        path_to_uri(Path("relative/a.py"))
    assert path_to_uri(Path("/a b/café#1.py")) == "file:///a%20b/caf%C3%A9%231.py"


_name_bytes = st.binary(min_size=1, max_size=8).filter(lambda b: b"/" not in b and b"\0" not in b)


@given(st.lists(_name_bytes, min_size=1, max_size=4))
def test_uri_round_trip_any_name(parts: list[bytes]) -> None:
    path = Path(os.fsdecode(b"/" + b"/".join(parts)))
    uri = path_to_uri(path)
    assert uri.isascii()
    assert uri_to_path(uri) == path


# -- speed -----------------------------------------------------------------------------------


def _tree(root: Path, count: int) -> None:
    rng = random.Random(3)
    dirs = [f"pkg{i}/sub{j}" for i in range(20) for j in range(5)]
    for i in range(count):
        write(root, f"{rng.choice(dirs)}/mod_{i}.py", f"x = {i}\n")
    write(root, ".gitignore", "*.pyc\n__pycache__/\n")
    write(root, "pkg1/.gitignore", "sub2/\n!keep.py\n")


def _best_of(runs: int, func) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - started)
    return best


def test_discovery_speed_2000_files(tmp_path: Path) -> None:
    plain, repo = tmp_path / "plain", tmp_path / "repo"
    _tree(plain, 2000)
    shutil.copytree(plain, repo)
    git_init(repo)
    commit_all(repo)
    walk_s = _best_of(3, lambda: discover(plain))
    git_s = _best_of(3, lambda: discover(repo))
    assert len(discover(plain).files) == len(discover(repo).files) > 1500
    print(f"2000 files: walk {walk_s * 1000:.0f} ms, git {git_s * 1000:.0f} ms", file=sys.stderr)
    assert walk_s < 1.0
    assert git_s < 0.5
