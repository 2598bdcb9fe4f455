"""The clean-close record: a database closed cleanly and untouched since opens without SQLite's
quick_check; anything else — a kill, a write, a forged or foreign record — is checked as before."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import scan
from kenning.store.clean_close import CLEAN_CLOSE_FILENAME


def _indexed(root: Path) -> Path:
    root.mkdir()
    for n in range(30):
        (root / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    with Engine(root, Config()).open() as engine:
        assert engine.db is not None and engine.db.quick_checked
        scan(engine)
    return root / ".kenning"


def _checked(root: Path) -> bool:
    with Engine(root, Config()).open() as engine:
        assert engine.db is not None
        return engine.db.quick_checked


def test_a_clean_close_vouches_for_the_next_open_only(tmp_path: Path) -> None:
    store = _indexed(tmp_path / "ws")
    assert (store / CLEAN_CLOSE_FILENAME).is_file()
    engine = Engine(tmp_path / "ws", Config()).open()
    assert engine.db is not None and not engine.db.quick_checked
    assert not (store / CLEAN_CLOSE_FILENAME).exists()  # consumed by the open
    # Killed here (never closed): the next open has no record and checks.
    engine._lock.release()
    assert _checked(tmp_path / "ws")
    assert not _checked(tmp_path / "ws")  # that one closed cleanly again


def test_a_write_after_the_close_is_checked_even_with_its_mtime_restored(tmp_path: Path) -> None:
    store = _indexed(tmp_path / "ws")
    db = store / "kenning.sqlite3"
    st = os.stat(db)
    data = bytearray(db.read_bytes())
    for i in range(len(data) // 2, len(data), 997):
        data[i] ^= 0xFF
    db.write_bytes(bytes(data))
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime as the close left them
    assert os.stat(db).st_size == st.st_size and os.stat(db).st_mtime_ns == st.st_mtime_ns
    with Engine(tmp_path / "ws", Config()).open() as engine:
        assert engine.db is not None and engine.db.quick_checked
    assert list(store.glob("kenning.sqlite3.corrupt-*")), "the damaged database was not set aside"


@pytest.mark.parametrize("record", ["forged", "other-store", "symlink", "oversized"])
def test_a_record_kenning_did_not_write_for_this_file_vouches_for_nothing(
    tmp_path: Path, record: str
) -> None:
    store = _indexed(tmp_path / "ws")
    path = store / CLEAN_CLOSE_FILENAME
    if record == "forged":
        path.write_text("0" * 64)
    elif record == "other-store":
        other = _indexed(tmp_path / "other")
        path.write_bytes((other / CLEAN_CLOSE_FILENAME).read_bytes())
    elif record == "symlink":
        real = tmp_path / "real-record"
        real.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(real)
    else:
        path.write_bytes(path.read_bytes() * 10)
    assert _checked(tmp_path / "ws")
    assert not path.is_symlink()


def test_frames_left_in_the_wal_are_checked(tmp_path: Path) -> None:
    store = _indexed(tmp_path / "ws")
    # Another process committed through SQLite after the close, leaving its frames in the WAL.
    conn = sqlite3.connect(store / "kenning.sqlite3")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('x', 'y')")
    conn.commit()
    assert os.path.getsize(store / "kenning.sqlite3-wal") > 0
    try:
        assert _checked(tmp_path / "ws")
    finally:
        conn.close()
