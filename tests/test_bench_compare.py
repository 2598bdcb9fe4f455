"""bench.compare: the before → after table of two bench.multilang runs (pure logic, no sources)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import compare


def _lang(ranks: list[int | None], identifier: float = 0.95) -> dict[str, Any]:
    mrr = sum(1 / r for r in ranks if r and r <= 10) / len(ranks)
    return {
        "queries": {"descriptive": len(ranks), "identifier": 10},
        "kenning": {
            "descriptive": {"hybrid": {"mrr@10": mrr}},
            "identifier": {"hybrid": {"mrr@10": identifier}},
        },
        "per_query": {
            "descriptive": [
                {"query": f"q{i}", "path": "a.go", "name": f"f{i}", "kenning": r} for i, r in enumerate(ranks)
            ]
        },
    }


def _run(**langs: dict[str, Any]) -> dict[str, Any]:
    return {"langs": {name.replace("_", "-"): v for name, v in langs.items()}}


def test_moved_counts_queries_by_their_reciprocal_rank() -> None:
    before = _lang([1, 2, None, 5, 3])
    after = _lang([1, 1, 3, None, 3])
    assert compare.moved(before, after) == (2, 1)  # q1 and q2 up, q3 (rank 5 → none) down
    # A query only one run asked (another sample of targets) is not counted.
    after["per_query"]["descriptive"][0]["query"] = "another"
    assert compare.moved(before, after) == (2, 1)


def test_the_table_has_a_row_per_language_the_group_and_the_lowest_identifier() -> None:
    before = _run(
        go=_lang([1, 2, None, 4]),
        rust=_lang([1, None]),
        typescript=_lang([2, 2]),
        ts_libs=_lang([1, 1], identifier=0.9),
        java={"error": "sources not found"},
    )
    after = _run(
        go=_lang([1, 1, 2, 4]),
        rust=_lang([None, None]),
        typescript=_lang([2, 2]),
        ts_libs=_lang([1, 1], identifier=0.92),
        java=_lang([1]),
    )
    text = compare.table([("dev stripped", before, after), ("seed 8", before, _run(go=_lang([1, 1, 1, 1])))])
    lines = text.splitlines()
    assert lines[0] == "| language | dev stripped | seed 8 |"
    assert lines[2] == "| Go | 0.438 → 0.688 (+2 / −0) | 0.438 → 1.000 (+3 / −0) |"
    assert lines[3] == "| Rust | 0.500 → 0.000 (+0 / −1) | — |"
    assert lines[5].startswith("| TypeScript: Zod, TanStack, ProseMirror | 1.000 → 1.000 (+0 / −0) |")
    assert not any(line.startswith("| Java") for line in lines)  # not measured before
    # The group: Go, Rust and the mean of the two TypeScript sources; "—" where one is missing.
    group_before = (0.4375 + 0.5 + (0.5 + 1.0) / 2) / 3
    group_after = (0.6875 + 0.0 + (0.5 + 1.0) / 2) / 3
    assert lines[-2] == f"| **Go + Rust + TypeScript** | {group_before:.3f} → **{group_after:.3f}** | — |"
    assert lines[-1] == "| lowest identifier MRR@10 | 0.900 → 0.920 | 0.900 → 0.950 |"


def test_the_command_reads_the_runs_it_is_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_run(go=_lang([2]))), "utf-8")
    after.write_text(json.dumps(_run(go=_lang([1]))), "utf-8")
    assert compare.main(["--sample", "dev", str(before), str(after)]) == 0
    assert "| Go | 0.500 → 1.000 (+1 / −0) |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        compare.main([])  # a sample is required
