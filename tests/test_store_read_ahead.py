"""The read-ahead a server's store open starts: the b-tree walk that finds the pages the start
reads (checked against SQLite's own dbstat), the pass over the whole file, and everything it
must refuse or survive (a file too big for free memory, a symlink, a FIFO, damaged pages)."""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.engine.core import READ_FIRST
from kenning.indexer import scan
from kenning.store import read_ahead
from kenning.store.read_ahead import (
    ReadAhead,
    available_memory,
    btree_pages,
    child_pages,
    page_size_of,
    read_limit,
)

DONE_S = 30.0


def _database(path: Path, rows: int = 6000) -> Path:
    """A database whose table and index are three levels deep at 1 KiB pages, rows with
    overflow pages among them."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=1024")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, body BLOB)")
    conn.execute("CREATE INDEX t_name ON t(name)")
    conn.execute("CREATE TABLE other(id INTEGER PRIMARY KEY, body BLOB)")
    rng = random.Random(7)
    with conn:
        for i in range(rows):
            body = rng.randbytes(3000 if i % 50 == 0 else 40)
            conn.execute("INSERT INTO t(name, body) VALUES (?, ?)", (f"name-{rng.random():.12f}", body))
            conn.execute("INSERT INTO other(body) VALUES (?)", (rng.randbytes(60),))
    conn.close()
    return path


def _dbstat_pages(path: Path, name: str) -> set[int]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT pageno FROM dbstat WHERE name=? AND pagetype != 'overflow'", (name,))
        return {int(r[0]) for r in rows}
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat to check against")
    finally:
        conn.close()


def _roots(path: Path, *names: str) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        query = "SELECT rootpage FROM sqlite_schema WHERE name=?"
        return [conn.execute(query, (n,)).fetchone()[0] for n in names]
    finally:
        conn.close()


def _walk(path: Path, roots: list[int]) -> list[int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        size = page_size_of(os.pread(fd, 100, 0))
        return btree_pages(fd, size, os.fstat(fd).st_size // size, roots)
    finally:
        os.close(fd)


@pytest.mark.parametrize("name", ["t", "t_name", "other", "sqlite_schema"])
def test_the_walk_finds_every_page_of_a_btree_as_dbstat_does(tmp_path: Path, name: str) -> None:
    db = _database(tmp_path / "db.sqlite3")
    expected = _dbstat_pages(db, name)
    root = 1 if name == "sqlite_schema" else _roots(db, name)[0]
    assert set(_walk(db, [root])) == expected
    if name != "sqlite_schema":
        assert len(expected) > 100  # deep enough that the walk went past the root's children


def test_the_walk_of_several_btrees_is_their_union(tmp_path: Path) -> None:
    db = _database(tmp_path / "db.sqlite3")
    pages = _walk(db, _roots(db, "t", "t_name"))
    assert set(pages) == _dbstat_pages(db, "t") | _dbstat_pages(db, "t_name")
    assert pages == sorted(set(pages))


def test_the_walk_of_a_kenning_store_covers_what_the_start_reads(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(200):
        (root / f"m{n}.py").write_text(f"def f{n}(x):\n    return x + {n}\n\n\nclass C{n}:\n    pass\n")
    with Engine(root, Config()).open() as engine:
        scan(engine)
        assert engine.db is not None
        roots = engine.db.btree_roots(READ_FIRST)
    db = root / ".kenning" / "kenning.sqlite3"
    assert len(roots) == len(READ_FIRST)  # every name is one of the schema's b-trees
    expected: set[int] = set()
    for name in READ_FIRST:
        expected |= _dbstat_pages(db, name)
    assert set(_walk(db, roots)) == expected


def test_damaged_pages_end_the_walk_inside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "junk"
    page = 1024
    count = 64
    rng = random.Random(3)
    data = bytearray(rng.randbytes(page * count))
    # Page 2: an interior page naming itself, pages past the end and page 0 as its children.
    p2 = bytearray(page)
    p2[0] = 0x05
    p2[3:5] = (3).to_bytes(2, "big")
    p2[8:12] = (2).to_bytes(4, "big")  # itself, as the rightmost child
    for i, (offset, child) in enumerate([(200, 10_000), (300, 0), (400, 5)]):
        p2[12 + 2 * i : 14 + 2 * i] = offset.to_bytes(2, "big")
        p2[offset : offset + 4] = child.to_bytes(4, "big")
    data[page : 2 * page] = p2
    # Page 5: an interior page whose cell pointers point past the page's end.
    p5 = bytearray(page)
    p5[0] = 0x02
    p5[3:5] = (600).to_bytes(2, "big")  # more cells than the page holds
    p5[8:12] = (2).to_bytes(4, "big")  # back up: seen already
    data[4 * page : 5 * page] = p5
    path.write_bytes(bytes(data))
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = btree_pages(fd, page, count, [2, 0, count + 1])
    finally:
        os.close(fd)
    assert set(pages) <= set(range(1, count + 1))
    assert {2, 5} <= set(pages)
    # Random bytes where an interior page is expected: whatever they name stays in the file.
    for seed in range(20):
        blob = random.Random(seed).randbytes(page)
        for child in child_pages(bytes([0x05]) + blob[1:], 7) or ():
            assert isinstance(child, int)


def test_child_pages_of_a_leaf_or_a_short_page_is_none() -> None:
    assert child_pages(bytes([0x0D]) + bytes(100), 3) is None
    assert child_pages(bytes([0x05]) + bytes(5), 3) is None
    assert child_pages(bytes(4096), 1) is None  # page 1's header starts at byte 100
    assert page_size_of(bytes(16) + (1).to_bytes(2, "big")) == 65536


def test_the_pass_reads_the_whole_file_and_hints_the_first_btrees(tmp_path: Path) -> None:
    db = _database(tmp_path / "db.sqlite3")
    ahead = ReadAhead(db, first=_roots(db, "t_name")).start()
    assert ahead.done.wait(DONE_S)
    assert ahead.skipped is None
    assert ahead.bytes_read == db.stat().st_size
    assert ahead.hinted_pages == len(_dbstat_pages(db, "t_name"))


def _held_thread() -> tuple[threading.Thread, threading.Event]:
    """A running thread (a graph still loading) and the event that lets it finish."""
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(DONE_S,))
    thread.start()
    return thread, release


def test_the_pass_waits_for_the_thread_it_is_given(tmp_path: Path) -> None:
    db = _database(tmp_path / "db.sqlite3", rows=200)
    graph, release = _held_thread()
    ahead = ReadAhead(db, after=graph).start()
    assert not ahead.done.wait(0.3)
    assert ahead.bytes_read == 0
    release.set()
    assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == db.stat().st_size


def test_a_stopped_pass_reads_no_further(tmp_path: Path) -> None:
    db = _database(tmp_path / "db.sqlite3", rows=200)
    graph, release = _held_thread()
    ahead = ReadAhead(db, after=graph).start()
    ahead.stop()  # the store closed while the graph still loaded
    release.set()
    assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == 0


def _sparse(path: Path, blocks: int) -> Path:
    """A file of ``blocks`` read-ahead blocks of zeros, with no data on disk (read at memory speed)."""
    with path.open("wb") as f:
        f.truncate(blocks * read_ahead.BLOCK_BYTES)
    return path


def test_a_running_query_holds_the_pass_back_until_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_ahead, "QUERY_PAUSE_S", DONE_S)  # longer than the test waits
    big = _sparse(tmp_path / "big.sqlite3", 8)
    ahead = ReadAhead(big)
    with ahead.query():
        ahead.start()
        time.sleep(0.3)
        assert ahead.bytes_read == 0  # waiting for the query, not reading
        with ahead.query():  # a second, overlapping query
            pass
        time.sleep(0.2)
        assert ahead.bytes_read == 0  # the first still runs
    assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == big.stat().st_size
    with ahead.query():  # once done, a query waits for nothing
        pass


def test_a_query_that_never_ends_only_slows_the_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_ahead, "QUERY_PAUSE_S", 0.01)
    big = _sparse(tmp_path / "big.sqlite3", 4)
    ahead = ReadAhead(big)
    with ahead.query():
        ahead.start()
        assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == big.stat().st_size


def test_a_search_holds_the_engines_read_ahead_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    engine = Engine(root, Config(), read_ahead=True).open()
    try:
        ahead = engine.read_ahead
        assert ahead is not None
        with engine.query_reads():
            assert ahead._queries == 1 or ahead.done.is_set()
        assert ahead._queries == 0
    finally:
        engine.close()
    with engine.query_reads():  # closed: nothing to hold back
        pass


def test_a_file_larger_than_free_memory_allows_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _database(tmp_path / "db.sqlite3", rows=200)
    monkeypatch.setattr(read_ahead, "available_memory", lambda: 2 * db.stat().st_size - 2)
    ahead = ReadAhead(db, first=[1]).start()
    assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == 0 and ahead.hinted_pages == 0
    assert ahead.skipped is not None and "free memory" in ahead.skipped


def test_a_symlink_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    db = _database(tmp_path / "db.sqlite3", rows=200)
    link = tmp_path / "link.sqlite3"
    link.symlink_to(db)
    ahead = ReadAhead(link).start()
    assert ahead.done.wait(DONE_S)
    assert ahead.bytes_read == 0 and ahead.skipped is not None
    fifo = tmp_path / "fifo.sqlite3"
    os.mkfifo(fifo)
    ahead = ReadAhead(fifo).start()
    assert ahead.done.wait(DONE_S)  # not blocked waiting for a writer
    assert ahead.bytes_read == 0 and ahead.skipped == "not a regular file"


def test_available_memory_reads_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683568 kB\nMemFree:  1 kB\nMemAvailable:   2048 kB\n")
    assert available_memory(meminfo) == 2048 * 1024
    meminfo.write_text("MemTotal: 5 kB\n")
    assert available_memory(meminfo) is None
    assert available_memory(tmp_path / "absent") is None
    assert read_limit(None) == read_ahead.UNKNOWN_MEMORY_LIMIT
    assert read_limit(1000) == 500


def test_only_an_engine_asked_to_reads_ahead_and_close_stops_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    with Engine(root, Config()).open() as engine:
        scan(engine)
        assert engine.read_ahead is None  # `kenning index` and the other commands
    engine = Engine(root, Config(), read_ahead=True).open()
    try:
        ahead = engine.read_ahead
        assert ahead is not None
        assert ahead.done.wait(DONE_S)
        assert ahead.skipped is None
        assert ahead.bytes_read == (root / ".kenning" / "kenning.sqlite3").stat().st_size
        assert ahead.hinted_pages > 0
    finally:
        engine.close()
    assert engine.read_ahead is None


def test_a_server_folder_reads_its_store_ahead(tmp_path: Path) -> None:
    from kenning.folder import FolderIndex

    from .test_folder_start import QuietReporter, wait_state

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    folder = FolderIndex(root.as_uri(), root, Config(), QuietReporter())
    folder.start(index_now=True)
    try:
        wait_state(folder, "ready")
        ahead = folder.engine.read_ahead
        assert ahead is not None and ahead.done.wait(DONE_S) and ahead.skipped is None
    finally:
        folder.stop()
