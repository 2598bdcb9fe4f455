"""Property: whatever characters the workspace's path holds, its store opens where it should.

The store's database is opened through ``file:`` URIs (read-only readers, the version probe that
follows another writer); a path with ``#``, ``?`` or ``%`` once named another file ("My C#
project" made files next to the workspace and a server that scanned forever). For arbitrary
names of the workspace folder and of a folder above it — any characters, and bytes that are not
UTF-8 — a writer and a read-only reader both open ``<root>/.kenning/kenning.sqlite3``, find the
workspace's one file, and nothing appears anywhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import scan
from kenning.search import SearchQuery, search

TOKEN = "qzpathtokenxq"

_CHARS = st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",))
_TEXT = st.text(_CHARS, min_size=1, max_size=30)
# Names that are not UTF-8 reach Python as surrogate escapes of the raw bytes.
_BYTES = (
    st.binary(min_size=1, max_size=20).filter(lambda b: b"/" not in b and b"\0" not in b).map(os.fsdecode)
)
NAMES = st.one_of(_TEXT, _BYTES).filter(lambda s: s not in (".", "..") and len(os.fsencode(s)) <= 200)


def _open_and_search(base: Path, outer: str, inner: str) -> None:
    root = base / outer / inner
    root.mkdir(parents=True)
    (root / "a.py").write_text(f"def {TOKEN}():\n    return 1\n")
    with Engine(root, Config()) as writer:
        scan(writer)
        assert writer.store_dir == Path(os.path.realpath(root)) / ".kenning"
        with Engine(root, Config(), read_only=True) as reader:
            assert reader.read_only
            hits = search(reader, SearchQuery(TOKEN, mode="lexical")).hits
            assert [h.path for h in hits] == ["a.py"]
            before = reader.generation
            (root / "b.py").write_text(f"def {TOKEN}_too():\n    return 2\n")
            scan(writer)
            assert reader.generation != before  # it follows the writer's commits by its own URI
    assert os.listdir(base) == [outer]
    assert os.listdir(base / outer) == [inner]
    assert sorted(os.listdir(root)) == [".kenning", "a.py", "b.py"]


@pytest.mark.parametrize(
    "name", ["My C# project", "what?", "100%", "%2e%2e", "a%00b", "x#y?z%41&mode=rwc", "sp ace", "ü-ñ-日本"]
)
def test_workspace_paths_that_broke_the_uri(tmp_path: Path, name: str) -> None:
    _open_and_search(tmp_path, name, name)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(outer=NAMES, inner=NAMES)
@example(outer="a?mode=rwc#", inner="%3F")
@example(outer=os.fsdecode(b"\xff\xfe"), inner="C#")
def test_any_workspace_path_opens_its_own_store(
    tmp_path_factory: pytest.TempPathFactory, outer: str, inner: str
) -> None:
    _open_and_search(tmp_path_factory.mktemp("ws"), outer, inner)
