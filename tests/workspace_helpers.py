"""Helpers of the workspace tests: real git repositories isolated from the machine's own git
configuration, files written with any bytes, and a tree of nested ignore files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kenning.workspace import (
    Discovery,
)


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
