"""The benchmark's report (bench/report.py) on results shaped as a run produces them: a failed step
is said to have failed (the published run once showed empty latency and memory tables), a
missing result count is not printed as 0 (it once listed kenning with 0 symbols per query), and
the monorepo step's section and summary rows come out with their targets."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import report

MACHINE = {
    "date": "2026-12-01 03:00 UTC",
    "cpu": "a CPU",
    "cpu_family_model": "family 0, model 0",
    "cores": 2,
    "flags": ["avx2"],
    "memory_gib": 24.0,
    "load_at_start": [0.5, 0.5, 0.5],
    "os": "Linux",
    "python": "3.11",
    "sqlite": "3.40",
    "versions": {"usearch": "2"},
}


def _summary(p50: float, p95: float, n: int = 10) -> dict[str, float]:
    return {"n": n, "p50": p50, "p95": p95, "max": p95}


def _run(**parts: Any) -> dict[str, Any]:
    return {"machine": MACHINE, "command": "python -m bench", "corpus": "a corpus", "errors": [], **parts}


def _scale() -> dict[str, Any]:
    return {
        "target": 1_000_000,
        "built": {
            "files": 30_000,
            "copies": 34,
            "chunks": 1_000_123,
            "symbols": 720_000,
            "exact": 29_000,
            "perturbed": 971_123,
            "write_s": 20.0,
            "scan_s": 400.0,
            "seed_s": 60.0,
            "graph_s": 300.0,
            "total_s": 760.0,
        },
        "filter": {"glob": "copy3/email/**", "chunks": 10_050, "total": 1_000_123},
        "warm": {
            "chunks": 1_000_123,
            "search_ms": {"hybrid": _summary(25.0, 70.0), "hybrid+filter": _summary(41.0, 90.0)},
            "search_cpu_ms": {"hybrid": 20.0, "hybrid+filter": 30.0},
            "symbol_ms": _summary(12.0, 30.0),
            "symbol_first_ms": 4200.0,
            "rss_ready_mib": {"VmRSS": 1200.0, "VmHWM": 1900.0},
            "memory_mib": {"VmRSS": 1300.0, "VmHWM": 1900.0},
            "disk_bytes": 3 * 2**30,
            "disk_per_chunk": 3221.0,
        },
        "restart": {"ready_s": _summary(2.5, 2.9, 3)},
        "cli": {"wall_s": _summary(3.5, 3.6, 3)},
        "cold": {
            "pause_s": 5.0,
            "files_dropped": 30_004,
            "ready_s": _summary(3.4, 3.6, 6),
            "search_ms": {"at_ready": _summary(36.0, 150.0, 120), "paused": _summary(18.0, 60.0, 120)},
            "first_ms": {"at_ready": _summary(1000.0, 1200.0, 3), "paused": _summary(80.0, 90.0, 3)},
            "read_ahead": "store read-ahead: 14,344 pages hinted, 1880 MB read in 4.1 s",
        },
        "rebuild": {
            "ready_s": 310.0,
            "during_ms": _summary(20.0, 60.0, 400),
            "during_with_dense": 0,
            "after_ms": _summary(25.0, 70.0),
        },
    }


def test_a_failed_latency_step_is_reported_not_left_as_an_empty_table() -> None:
    error = "latency: RuntimeError('the server exited: ModuleNotFoundError')"
    r = _run(latency={"built": {}, "filters": {"10k": "`ctypes/**` (96 of 10,242 chunks)"}}, errors=[error])
    text = report.markdown(r)
    five = text.split("#### 5.")[1].split("####")[0]
    assert "| chunks | mode |" not in five  # no header-only table
    assert "Not measured in this run: " + error in five
    assert "#### Steps that failed in this run" in text and error in text
    assert "copy<N>/" in five  # how the large indexes are built is said, not referred to


def test_symbol_comparison_shows_kenning_result_count_and_no_invented_zero() -> None:
    k = {
        "version": "this tree",
        "symbol_ms": _summary(3.0, 9.0),
        "first_query_ms": 180.0,
        "results_mean": 87.4,
    }
    other = {"version": "1.0", "symbol_ms": _summary(300.0, 900.0), "first_query_ms": 400.0}
    text = report.markdown(_run(symbols={"queries": 30, "kenning": k, "other-server": other}))
    six = text.split("#### 6.")[1].split("####")[0]
    row = next(line for line in six.splitlines() if line.startswith("| kenning "))
    assert row.split(" | ")[2:6] == ["180", "3.0", "9.0", "87"]
    other_row = next(line for line in six.splitlines() if line.startswith("| other-server "))
    assert other_row.split(" | ")[5] == "—"  # unknown, not "0"


def test_memory_table_follows_the_symbol_table() -> None:
    x = {
        "chunks": 100_000,
        "search_ms": {"hybrid": _summary(15.0, 40.0)},
        "ready_s": 1.0,
        "memory_mib": {"VmRSS": 300.0, "VmHWM": 320.0},
        "disk_bytes": 2**28,
        "disk_per_chunk": 2684.0,
    }
    k = {"version": "this tree", "symbol_ms": _summary(3.0, 9.0), "results_mean": 10.0}
    text = report.markdown(_run(latency={"100k": x, "filters": {}}, symbols={"queries": 5, "kenning": k}))
    assert text.index("#### 5.") < text.index("#### 6.") < text.index("#### 7.")
    seven = text.split("#### 7.")[1].split("####")[0]
    assert "| 100k | 100,000 | 1.0 | 300 | 320 | 256 | 2,684 |" in seven


def test_scale_rows_hold_issue_15_targets_and_verdicts() -> None:
    rows = {row[0]: row for row in report.scale_rows(_run(scale=_scale()))}
    hybrid = rows["scale: semanticSearch hybrid @ 1,000,123 chunks, p50 / p95 (ms)"]
    assert hybrid[1:] == ("25.0 / 70.0 (CPU 20.0)", "≤ 30 / ≤ 80", "met")
    filtered = rows["scale: semanticSearch hybrid @ 1,000,123 chunks, filter copy3/email/**, p50 / p95 (ms)"]
    assert filtered[3] == "missed: p50 by 11.0 ms, p95 by 10.0 ms"
    assert rows["scale: workspace/symbol @ 720,000 symbols, p50 / p95 (ms)"][3] == "met"
    assert rows["scale: server RSS after ready @ 1,000,123 chunks (MiB)"][1:] == ("1,200", "≤ 1,536", "met")
    assert rows["scale: unchanged restart → ready @ 1,000,123 chunks, p50 (s)"][3] == "met"
    assert rows["scale: unchanged `kenning index` @ 30,000 files, p50 (s)"][3] == "missed: by 0.50 s"
    cold = rows["scale: the same restart cold (tree's and store's pages evicted) → ready, p50 (s)"]
    assert cold[1:] == ("3.40", "≤ 3", "missed: by 0.40 s")
    assert rows["  cold: hybrid queries sent at ready, p50 / p95; the first (ms)"][1] == "36.0 / 150.0; 1,000"
    paused = rows["  cold: hybrid queries sent 5 s after ready, p50 / p95; the first (ms)"]
    assert paused[1:] == ("18.0 / 60.0; 80", "≤ 30 / ≤ 80", "met")
    rebuild = next(v for k, v in rows.items() if k.startswith("scale: graph rebuilt"))
    assert rebuild[1].startswith("310; 20.0 / 60.0 (n 400)") and rebuild[3] == "met"
    text = report.markdown(_run(scale=_scale()))
    assert "#### 8. A monorepo: about 1,000,000 chunks" in text and "HNSW graph built and saved 300 s" in text
    assert "DONTNEED on 30,004 files" in text and "1880 MB read in 4.1 s" in text


def test_a_failed_scale_step_says_so() -> None:
    r = _run(scale={"target": 1_000_000}, errors=["scale: MemoryError()"])
    assert report.scale_rows(r) == []
    eight = report.markdown(r).split("#### 8.")[1]
    assert "Not measured in this run: scale: MemoryError()" in eight


def _files_measures(cli_s: float, save_ms: float) -> dict[str, Any]:
    return {
        "cli": {"wall_s": _summary(cli_s, cli_s, 5)},
        "restart": {"first_lexical_s": _summary(1.5, 1.6, 5), "ready_s": _summary(4.0, 4.2, 5)},
        "save": {
            "lines": 1004,
            "lexical_ms": _summary(save_ms, save_ms, 5),
            "semantic_ms": _summary(300, 310, 5),
        },
    }


def test_files_rows_hold_the_100k_file_targets_for_a_walk_and_a_git_repository() -> None:
    files = {
        "target_files": 100_000,
        "small_files": 150,
        "small_chunks": 3,
        "edited": "xmlrpc/server.py",
        "git_add_s": 40.0,
        "built": {
            "files": 100_051,
            "copies": 666,
            "chunks": 200_000,
            "symbols": 150_000,
            "exact": 300,
            "perturbed": 199_700,
            "write_s": 60.0,
            "scan_s": 500.0,
            "seed_s": 30.0,
            "graph_s": 90.0,
            "total_s": 680.0,
        },
        "walk": _files_measures(3.4, 120.0),
        "git": _files_measures(2.1, 650.0),
    }
    rows = report.files_rows(_run(files=files))
    assert [r[0] for r in rows if not r[0].startswith("  ")] == [
        "many files: unchanged `kenning index` @ 100,051 files, a plain tree, p50 (s)",
        "many files: unchanged `kenning index` @ 100,051 files, a git repository, p50 (s)",
    ]
    assert rows[0][1:] == ("3.40", "≤ 3", "missed: by 0.40 s") and rows[3][3] == "met"
    assert rows[1][1] == "1.50 / 4.00"
    assert rows[2][1:] == ("120 / 300", "≤ 500", "met")
    assert rows[5][1:] == ("650 / 300", "≤ 500", "missed: by 150 ms")
    assert rows[0] in report.summary_rows(_run(files=files))
    text = report.markdown(_run(files=files)).split("#### 9. 100,000 files")[1]
    assert "150 `.py` files of at most 3 chunks, 666 replicas" in text and "took 40 s" in text


def test_a_failed_files_step_says_so() -> None:
    r = _run(files={"target_files": 100_000}, errors=["files: OSError()"])
    assert report.files_rows(r) == []
    assert "Not measured in this run: files: OSError()" in report.markdown(r).split("#### 9.")[1]


def test_mcp_latency_is_in_the_summary_and_has_its_section() -> None:
    # Issue 13's MCP numbers were measured but printed nowhere in the run's tables.
    mcp = {
        "initialize_ms": 850.0,
        "ready_s": 2.5,
        "chunks": 29_447,
        "latency_ms": {
            "search_code": _summary(22.0, 56.0),
            "find_symbol": _summary(3.0, 6.0),
            "find_similar": _summary(15.0, 30.0),
            "index_status": _summary(1.0, 2.0),
        },
        "answer_chars": {
            "search_code_default": 2_000.0,
            "search_code_json": 4_000.0,
            "same_hits_plain_text": 8_000.0,
            "queries": 20,
        },
    }
    rows = report.summary_rows(_run(mcp=mcp))
    assert ("MCP `search_code` p50 / p95 (ms)", "22 / 56", "", "") in rows
    text = report.markdown(_run(mcp=mcp))
    assert "#### `kenning mcp` through the MCP SDK's stdio client" in text
    assert "| `find_similar` | 15.0 | 30.0 | 30.0 | 10 |" in text


def _quality(speedup: float | None, delta_semantic: float) -> dict[str, Any]:
    scores = {"mrr@10": 0.5, "recall@1": 0.4, "recall@10": 0.7, "n": 300}
    return {
        "queries": 300,
        "seed": 13,
        "chunks": 26_910,
        "optimized": {"semantic": scores, "hybrid": scores},
        "no query adapter": {"semantic": scores},
        "original": {"semantic": scores},
        "gate": {"speedup": speedup, "delta_semantic": delta_semantic, "delta_hybrid": 0.0, "passes": True},
    }


def test_a_gate_without_the_model_step_says_its_speed_was_not_measured() -> None:
    """``--only quality`` skips the model step: the published gate once read "nan×" and "fails"."""
    unmeasured = report.markdown(_run(quality=_quality(None, -0.007)))
    assert "nan" not in unmeasured
    assert "speed not measured (no model step in this run)" in unmeasured
    assert "**passes on quality**" in unmeasured
    summary = report.table(report.summary_rows(_run(quality=_quality(None, -0.007))))
    assert "passes on quality" in summary and "nan" not in summary
    measured = report.markdown(_run(quality=_quality(3.5, -0.007)))
    assert "3.50× the original's speed" in measured and "**passes**" in measured
