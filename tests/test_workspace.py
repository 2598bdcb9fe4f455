"""Workspace discovery on real trees with real git: git's answers in both modes (git and the
walk), ignore rules, links and special files, and its speed. Reading is in
test_workspace_reading.py, client paths in test_workspace_paths.py."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.workspace import (
    SkipReason,
    discover,
    read_source,
)
from kenning.workspace import git as workspace_git
from tests.workspace_helpers import (
    _isolated_git,  # noqa: F401 (an autouse fixture: imported, it applies here)
    build_ignore_tree,
    commit_all,
    git,
    git_init,
    git_shows,
    paths,
    write,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


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
    # More than one wildcard: matched by RE2 (workspace/ignore.py), which must agree with git.
    "*a*",
    "*.*",
    "x*t*",
    "**/a*/*.t*t",
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


def test_a_gitignore_line_of_many_wildcards_is_matched_in_linear_time(tmp_path: Path) -> None:
    # Python's backtracking takes time exponential in the stars on a name that almost matches:
    # `*a*a*a*a*a*a*b` took 1.4 s on a name of 60 `a`s; this line, on these names, would not
    # finish in a lifetime. RE2 matches it at once. (git's own matcher does not finish either:
    # in a repository, `git ls-files` is stopped after GIT_TIMEOUT_S and the tree walked. The
    # random trees above check that RE2's answers are git's.)
    plain = tmp_path / "plain"
    plain.mkdir()
    write(plain, ".gitignore", "*a" * 12 + "*b\n")
    for name in ("a" * 200 + ".txt", "a" * 100 + "b", "keep.py"):
        write(plain, name)
    assert paths(discover(plain)) == {".gitignore", "a" * 200 + ".txt", "keep.py"}


def test_a_repository_git_cannot_list_in_time_is_walked_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git's matcher takes exponential time on this line and a deep path (past 20 s here); after
    # one timeout the root is walked, so a save there does not wait for git again.
    monkeypatch.setattr(workspace_git, "GIT_TIMEOUT_S", 2.0)
    monkeypatch.setattr(workspace_git, "_too_slow_roots", set())
    root = tmp_path / "repo"
    deep = "/".join(["a"] * 30)
    write(root, ".gitignore", "**/" * 10 + "b\n")
    write(root, f"{deep}/x.py")
    write(root, f"{deep}/b")
    write(root, "keep.py")
    git_init(root)
    runs: list[object] = []
    real_run = subprocess.run

    def counted_run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        runs.append(args)
        return real_run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counted_run)
    first = discover(root)
    assert first.method == "walk"
    assert paths(first) == {".gitignore", "keep.py", f"{deep}/x.py"}
    assert len(runs) == 1
    assert paths(discover(root)) == paths(first)
    assert paths(discover(root, paths=["keep.py"])) == {"keep.py"}  # a save
    assert len(runs) == 1  # git was not asked again


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
    assert found.files[0].abs_path == str(root / "pkg" / ".kenningignore")


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
