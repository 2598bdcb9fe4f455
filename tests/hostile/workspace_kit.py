"""Helpers for the hostile-workspace cases: a canary outside the workspace, the CLI, the server.

Each case prepares a repository as an attacker would, then opens it twice — through the CLI
(``kenning index`` / ``search`` / ``stats`` in a subprocess) and through the real server (a
``kenning serve`` subprocess driven over stdio) — and checks three things: nothing outside the
workspace was touched (the canary's bytes, mode and mtime), nothing outside was returned (its
token never appears in a reply), and the rest of the workspace was indexed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.workspace import uri_to_path

CLI = [sys.executable, "-m", "kenning"]
SECRET = "qzoutsidesecretxq"  # the canary's token: must never come back
INSIDE = "qzinsidemarkerxq"  # a token in an ordinary workspace file: must come back


@dataclass
class Canary:
    """A directory outside the workspace whose every file must stay exactly as it was."""

    root: Path
    snapshot: dict[str, tuple[bytes, int, int]] = field(default_factory=dict)

    @classmethod
    def make(cls, root: Path) -> Canary:
        root.mkdir(parents=True, exist_ok=True)
        (root / "secret.py").write_text(f"def leaked():\n    return '{SECRET}'\n")
        (root / "a.py").write_text(f"def also_leaked():\n    return '{SECRET}'\n")
        (root / "notes.txt").write_text(f"{SECRET}\n")
        canary = cls(root)
        canary.take()
        return canary

    def take(self) -> None:
        self.snapshot = self._state()

    def _state(self) -> dict[str, tuple[bytes, int, int]]:
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in [*dirnames, *filenames]:
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                data = b"" if os.path.isdir(p) else Path(p).read_bytes()
                out[os.path.relpath(p, self.root)] = (data, st.st_mode, st.st_mtime_ns)
        st = os.lstat(self.root)
        out["."] = (b"", st.st_mode, st.st_mtime_ns)
        return out

    def assert_untouched(self) -> None:
        assert self._state() == self.snapshot, "something outside the workspace was changed"


def run_cli(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=300,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@dataclass
class CliRun:
    """The CLI's view of a workspace, indexed into a store of its own (outside the workspace)."""

    root: Path
    store: Path
    model: Path
    index_output: subprocess.CompletedProcess[str] | None = None

    def common(self) -> list[str]:
        return ["--root", str(self.root), "--store", str(self.store), "--model", str(self.model), "-q"]

    def index(self) -> subprocess.CompletedProcess[str]:
        self.index_output = run_cli("index", *self.common())
        return self.index_output

    def search(self, query: str, *extra: str) -> list[dict[str, Any]]:
        proc = run_cli("search", query, "--json", "--mode", "lexical", "-k", "50", *extra, *self.common())
        return json.loads(proc.stdout)["results"]  # type: ignore[no-any-return]

    def stats(self) -> dict[str, Any]:
        return json.loads(run_cli("stats", "--json", *self.common()).stdout)  # type: ignore[no-any-return]

    def skip_reasons(self) -> dict[str, str]:
        with sqlite3.connect(self.store / "kenning.sqlite3") as conn:
            return dict(conn.execute("SELECT path, skip_reason FROM files WHERE skip_reason IS NOT NULL"))

    def indexed_paths(self) -> set[str]:
        with sqlite3.connect(self.store / "kenning.sqlite3") as conn:
            return {r[0] for r in conn.execute("SELECT path FROM files WHERE skip_reason IS NULL")}


def hit_paths(results: list[dict[str, Any]]) -> list[Path]:
    """The local paths of a server's results (their URIs decoded byte for byte)."""
    out = []
    for hit in results:
        path = uri_to_path(hit["uri"])
        assert path is not None, hit["uri"]
        out.append(path)
    return out


def assert_no_secret(reply: Any) -> None:
    assert SECRET not in json.dumps(reply), "text from outside the workspace was returned"
