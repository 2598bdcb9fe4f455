"""The indexer's side of issue #16 (and #15's per-path saves), in-process against a real store:
skipped files are not re-read while unchanged, one path is judged exactly as a full discovery
would judge it, and any name — of a file or of the workspace — survives the trip to the store,
to a URI and back (property-based, over arbitrary bytes)."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import scan
from kenning.search import SearchQuery, search
from kenning.workspace import (
    discover,
    path_to_text,
    path_to_uri,
    read_source,
    resolve_inside,
    text_to_path,
    uri_to_path,
)
from tests.workspace_helpers import build_ignore_tree, commit_all, git_init, write


def _read_bytes() -> int:
    """Bytes this process has read through read(2) so far (``rchar`` of /proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _engine(root: Path, store: Path) -> Engine:
    return Engine(root, Config(store=store)).open()


def test_unchanged_skipped_files_are_not_read_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    rng = random.Random(5)
    for i in range(30):  # binary: a NUL early on; 1 MB each
        write(root, f"assets/blob_{i}.py", b"\x00" + rng.randbytes(1 << 20))
    for i in range(10):  # generated: one long line, under the size cap
        write(root, f"dist/bundle_{i}.js", b"var a=1;" * 100_000)
    write(root, "a.py", "def a():\n    return 1\n")
    with _engine(root, tmp_path / "store") as engine:
        first = scan(engine)
        assert first.skipped == {"binary": 30, "generated": 10}, first
        before = _read_bytes()
        again = scan(engine)
        read = _read_bytes() - before
        assert again.skipped == first.skipped and again.files_written == 0, again
        assert read < 2 << 20, f"a no-op rescan read {read / 2**20:.1f} MiB"
        # A changed one is read again (and judged again).
        write(root, "assets/blob_3.py", "def now_text():\n    return 3\n")
        write(root, "dist/bundle_1.js", b"\x00" + rng.randbytes(1 << 20))
        os.utime(root / "dist/bundle_1.js", ns=(1, 1))  # a new mtime, whatever the clock says
        changed = scan(engine)
        assert changed.files_changed == 1 and changed.skipped == {"binary": 30, "generated": 9}, changed
        assert engine.db is not None
        rows = engine.db.all_files()
        assert rows["assets/blob_3.py"].skip_reason is None
        assert rows["dist/bundle_1.js"].skip_reason == "binary"


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_one_path_is_judged_as_a_full_discovery_judges_it(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "ws"
    build_ignore_tree(root)
    (root / "src" / "linked.py").symlink_to("main.py")
    write(root, ".kenningignore", "docs/guide.md\n")
    if mode == "git":
        git_init(root)
        commit_all(root)
    full = discover(root)
    assert full.method == mode
    by_path = {e.path: e for e in full.files}
    on_disk = []
    dirs = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            on_disk.append(name if rel_dir == "." else f"{rel_dir}/{name}")
        if rel_dir != ".":
            dirs.add(rel_dir)
    for rel in on_disk:
        one = discover(root, paths=[rel])
        assert [e.path for e in one.files] == ([rel] if rel in by_path else []), rel
        assert one.skipped == ({rel: full.skipped[rel]} if rel in full.skipped else {}), rel
        if rel in by_path:
            assert one.files[0] == by_path[rel]
    for d in sorted(dirs):
        below = discover(root, paths=[d])
        assert {e.path for e in below.files} == {p for p in by_path if p.startswith(d + "/")}, d


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_a_save_keeps_ignored_files_out(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "ws"
    build_ignore_tree(root)
    if mode == "git":
        git_init(root)
        commit_all(root)
    with _engine(root, tmp_path / "store") as engine:
        scan(engine)
        assert engine.db is not None
        before = set(engine.db.all_files())
        # Saves of ignored files (root and nested .gitignore), and of one that belongs.
        for rel in (
            "a.log",
            "src/local.txt",
            "src/x.tmp",
            "build/out.py",
            "lib/vendor/keep.py",
            "src/main.py",
        ):
            write(root, rel, f"def saved():\n    return '{rel}'\n")
        report = scan(engine, ["a.log", "src/local.txt", "src/x.tmp", "build/out.py", "lib/vendor/keep.py"])
        assert report.files_changed == 0 and report.files_deleted == 0, report
        report = scan(engine, ["src/main.py"])
        assert report.files_changed == 1, report
        assert set(engine.db.all_files()) == before
        # A new file in a directory that is ignored stays out; a new one that belongs comes in.
        write(root, "build/new.py")
        write(root, "src/new.py")
        scan(engine, ["build/new.py", "src/new.py"])
        assert set(engine.db.all_files()) == before | {"src/new.py"}


# -- names: property-based ---------------------------------------------------------------------

_SPECIAL = {b".", b"..", b".git", b".kenning", b".gitignore", b".kenningignore"}
name_bytes = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in _SPECIAL
)
_PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(name=name_bytes)
def test_any_file_name_is_indexed_under_exactly_its_bytes(name: bytes) -> None:
    token = "qzpropertyxq"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        with open(os.fsencode(root) + b"/" + name, "wb") as f:
            f.write(f"def holder():\n    return '{token}'\n".encode())
        found = discover(root)
        assert [os.fsencode(e.path) for e in found.files] == [name]
        entry = found.files[0]
        text = path_to_text(entry.path)
        text.encode("utf-8")  # storable: valid text, whatever the bytes
        assert text_to_path(text) == entry.path
        source = read_source(entry)
        assert not isinstance(source, str) and token in source.text
        uri = path_to_uri(root / entry.path)
        assert uri.isascii() and uri_to_path(uri) == root / entry.path
        assert resolve_inside([root], root / entry.path) == (root, entry.path)
        with _engine(root, Path(tmp) / "store") as engine:
            report = scan(engine)
            assert report.files_changed == 1, report
            hits = search(engine, SearchQuery(text=token, mode="lexical")).hits
            assert [os.fsencode(text_to_path(h.path)) for h in hits] == [name]
            # The save of that one path finds it again (URI -> path -> stored text).
            with open(os.fsencode(root) + b"/" + name, "ab") as f:
                f.write(b"# more\n")
            assert scan(engine, [entry.path]).files_changed == 1


@_PROPERTY
@given(parts=st.lists(name_bytes, min_size=1, max_size=3))
def test_any_workspace_path_works(parts: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.fsdecode(os.fsencode(tmp) + b"/" + b"/".join(parts)))
        root.mkdir(parents=True)
        (root / "a #1?.py").write_text("def holder():\n    return 'qzwsxq'\n")
        found = discover(root)
        assert [e.path for e in found.files] == ["a #1?.py"]
        assert uri_to_path(path_to_uri(root)) == root
        with _engine(root, Path(tmp) / "store") as engine:  # the store's own path is plain
            scan(engine)
            hits = search(engine, SearchQuery(text="qzwsxq", mode="lexical")).hits
            assert [h.path for h in hits] == ["a #1?.py"]
            assert uri_to_path(path_to_uri(engine.root / hits[0].path)) == root.resolve() / "a #1?.py"


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            # No other lone surrogate (hypothesis 6.170 draws them here unless told): a name
            # read from disk holds none but the escapes below.
            st.characters(exclude_characters="/\0", exclude_categories=("Cs",)),
            st.integers(0xDC80, 0xDCFF).map(chr),  # what os.fsdecode makes of bytes not UTF-8
            st.integers(0x10FC7F, 0x10FD01).map(chr),  # the store's own escapes, and neighbours
        ),
        max_size=12,
    )
)
def test_stored_text_round_trips_every_string(name: str) -> None:
    """Any string discovery can produce (surrogate escapes, and the private-use characters the
    store uses for them) becomes valid UTF-8 text and comes back unchanged."""
    text = path_to_text(name)
    text.encode("utf-8")
    assert text_to_path(text) == name
    assert (text == name) == all(
        not ("\udc80" <= c <= "\udcff" or "\U0010fc80" <= c <= "\U0010fd00") for c in name
    )


def test_an_event_for_the_root_rescans_everything(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, "a.py")
    with _engine(root, tmp_path / "store") as engine:
        scan(engine)
        write(root, "b.py")
        (root / "a.py").unlink()
        report = scan(engine, ["."])
        assert (report.files_changed, report.files_deleted) == (1, 1), report
