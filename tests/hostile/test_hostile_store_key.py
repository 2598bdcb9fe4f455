"""The store key and the marker (``kenning.store.trust``): made safely, refused when not safe.

The key is what no repository can know; these tests check that it is made private, that a key
someone else could read or swap is refused with a message, and that a marker verifies only with
the key that made it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.store import trust


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "state"
    monkeypatch.setenv("KENNING_STATE_DIR", str(directory))
    trust._key_cache.clear()
    yield directory
    trust._key_cache.clear()


def test_the_key_is_made_once_and_private(state: Path) -> None:
    key = trust.store_key()
    assert len(key) == trust.KEY_BYTES
    path = state / trust.KEY_FILENAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    trust._key_cache.clear()
    assert trust.store_key() == key  # read back, not made again
    assert sorted(os.listdir(state)) == [trust.KEY_FILENAME]  # no temp file left


@pytest.mark.parametrize("damage", ["readable-by-others", "symlink", "wrong-size", "directory"])
def test_a_key_that_cannot_be_trusted_is_refused_with_a_message(
    state: Path, tmp_path: Path, damage: str
) -> None:
    state.mkdir(mode=0o700)
    path = state / trust.KEY_FILENAME
    if damage == "readable-by-others":
        path.write_bytes(os.urandom(trust.KEY_BYTES))
        os.chmod(path, 0o644)
    elif damage == "symlink":
        (tmp_path / "elsewhere").write_bytes(os.urandom(trust.KEY_BYTES))
        path.symlink_to(tmp_path / "elsewhere")
    elif damage == "wrong-size":
        path.write_bytes(b"short")
        os.chmod(path, 0o600)
    else:
        path.mkdir()
    with pytest.raises(trust.StoreRefused, match="store key"):
        trust.store_key()


def test_a_marker_verifies_only_with_its_key(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    mine, theirs = os.urandom(32), os.urandom(32)
    store_id = trust.write_marker(store, mine)
    assert trust.read_marker(store, mine) == store_id
    assert trust.read_marker(store, theirs) is None
    # A second writer (another process adopting the same new directory) gets the same id.
    assert trust.write_marker(store, mine) == store_id
    assert sorted(os.listdir(store)) == [trust.MARKER_FILENAME]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"kenning store 1\nid 00\nmac 00\n",
        b"kenning store 1\nid " + b"a" * 32 + b"\nmac " + b"0" * 64 + b"\n",
        b"\xff" * 5000,
        b"kenning store 2\n",
    ],
)
def test_forged_or_damaged_markers_are_not_kenning_s(tmp_path: Path, content: bytes) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / trust.MARKER_FILENAME).write_bytes(content)
    assert trust.read_marker(store, os.urandom(32)) is None


def test_a_marker_that_is_a_link_or_a_fifo_is_not_followed(tmp_path: Path) -> None:
    key = os.urandom(32)
    real = tmp_path / "real"
    real.mkdir()
    trust.write_marker(real, key)
    store = tmp_path / "store"
    store.mkdir()
    (store / trust.MARKER_FILENAME).symlink_to(real / trust.MARKER_FILENAME)
    assert trust.read_marker(store, key) is None
    fifo_store = tmp_path / "fifo"
    fifo_store.mkdir()
    os.mkfifo(fifo_store / trust.MARKER_FILENAME)
    assert trust.read_marker(fifo_store, key) is None  # and it did not block


def test_foreign_file_names_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "plain")
    os.link(tmp_path / "plain", tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    assert trust.foreign_file(tmp_path / "missing") is None
    assert trust.foreign_file(tmp_path / "link") == "is a symbolic link"
    assert trust.foreign_file(tmp_path / "fifo") == "is not a regular file"
    assert trust.foreign_file(tmp_path / "hard") == "has 2 hard links"
