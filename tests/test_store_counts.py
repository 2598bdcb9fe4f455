"""Database.counts answers from a cache between commits, and never a stale one after them."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from kenning.store.db import Database
from kenning.store.rows import NewChunk


def _chunk(i: int) -> NewChunk:
    return NewChunk(
        start_line=i,
        end_line=i,
        kind="window",
        symbol=None,
        header="",
        text=f"line {i}",
        idents="",
        embed_key=i.to_bytes(16, "big"),
    )


def test_counts_follow_every_commit(tmp_path: Path) -> None:
    db = Database(tmp_path / "k.sqlite3", token="t")
    try:
        assert db.counts()["chunks"] == 0
        assert db.counts()["chunks"] == 0  # from the cache
        with db.transaction() as conn:
            fid = db.upsert_file(
                conn,
                path="a.py",
                size=1,
                mtime_ns=1,
                content_hash="h",
                language="python",
                skip_reason=None,
                line_count=3,
            )
            db.replace_chunks(conn, fid, [_chunk(1), _chunk(2), _chunk(3)])
        assert db.counts()["chunks"] == 3 and db.counts()["pending"] == 3
        with db.transaction() as conn:
            db.put_embeddings(conn, [(1).to_bytes(16, "big")], np.ones((1, 4), dtype=np.float32))
        counts = db.counts()
        assert counts["embedded"] == 1 and counts["pending"] == 2
        counts["chunks"] = -1  # a caller's copy, not the cache
        assert db.counts()["chunks"] == 3

        seen: list[dict[str, int]] = []
        other = threading.Thread(target=lambda: seen.append(db.counts()))
        other.start()
        other.join()
        assert seen[0]["embedded"] == 1  # another thread's reader counts for itself
        with db.transaction() as conn:
            db.delete_files(conn, [fid])
        assert db.counts()["chunks"] == 0
    finally:
        db.close()
