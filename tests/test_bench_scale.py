"""The scale step reuses a finished tree only when its build record says so (bench/scale.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from bench import scale


def _finished_tree(tmp_path: Path, target: int) -> Path:
    dest = tmp_path / "wscale"
    (dest / ".kenning").mkdir(parents=True)
    record = {"target": target, "files": 3, "chunks": 7, "built_at": "2026-12-01 06:00 UTC"}
    (tmp_path / "wscale.built.json").write_text(json.dumps(record))
    return dest


def test_a_kept_tree_for_the_same_target_is_reused(tmp_path: Path) -> None:
    dest = _finished_tree(tmp_path, 1_000)
    built = scale.build_tree(tmp_path / "base", tmp_path / "base.db", dest, 1_000, reuse=True)
    assert built["reused"] is True and built["chunks"] == 7
    assert (dest / ".kenning").is_dir()


def test_without_reuse_the_record_and_tree_are_dropped_before_building(tmp_path: Path) -> None:
    dest = _finished_tree(tmp_path, 1_000)
    # The base index does not exist, so the build itself fails: by then the old tree and its
    # record must be gone, so a half-built tree can never be taken for a finished one.
    with pytest.raises(sqlite3.OperationalError):
        scale.build_tree(tmp_path / "base", tmp_path / "base.db", dest, 1_000, reuse=False)
    assert not (tmp_path / "wscale.built.json").exists()
    assert not (dest / ".kenning").exists()
