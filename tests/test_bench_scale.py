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


def test_the_filter_is_a_directory_when_one_holds_about_the_share(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import seeded

    counts = {f"pkg{d}/m{i}.py": 10 for d in range(10) for i in range(10)}  # 10 dirs x 100 chunks
    monkeypatch.setattr(seeded, "chunk_counts", lambda _db: counts)
    assert seeded.filter_glob(Path("unused"), share=0.1) == ("pkg0/**", 100, 1000)


def test_the_filter_is_a_range_of_names_when_no_directory_comes_near(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import seeded

    from kenning.search.types import path_spec

    # A replica of many small packages: none holds 5 % of the chunks, a range of letters does.
    counts = {f"copy1/{chr(97 + d)}pkg/m{i}.py": 2 for d in range(26) for i in range(5)}
    counts |= {f"copy2/{chr(97 + d)}pkg/m{i}.py": 2 for d in range(26) for i in range(5)}
    counts["copy1/_private.py"] = 7  # not a letter: in no range, as the glob would not match it
    monkeypatch.setattr(seeded, "chunk_counts", lambda _db: counts)
    glob, chunks, total = seeded.filter_glob(Path("unused"), share=0.05)
    assert glob == "copy1/[a-c]*" and total == 527
    spec = path_spec([glob])
    assert chunks == sum(n for path, n in counts.items() if spec.match_file(path)) == 30
