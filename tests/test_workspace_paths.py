"""Paths from clients: resolved (links and ``..``) and accepted only inside a root; ``file:`` URIs
to paths and back for any name."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.workspace import (
    path_to_uri,
    resolve_inside,
    uri_to_path,
)
from tests.workspace_helpers import (
    _isolated_git,  # noqa: F401 (an autouse fixture: imported, it applies here)
    write,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


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
