"""The benchmark suite still runs: ``python -m bench --smoke`` end to end, into a temp file.

Asserts that every measure produced a result and the results section was written; nothing about
speed (that is what the full run and docs/performance.md are for).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_smoke_runs_every_measure(tmp_path: Path) -> None:
    output = tmp_path / "performance.md"
    output.write_text(
        "# notes kept around the results\n\n<!-- bench:results:start -->\nold\n"
        "<!-- bench:results:end -->\n\ntrailing analysis\n"
    )
    results = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--output", str(output), "--json", str(results)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    r = json.loads(results.read_text())
    assert r["errors"] == []
    assert r["model"]["graphs"] and r["index"]["fresh"]["embedded"] > 0
    assert r["index"]["fresh"]["first_lexical_s"] is not None
    assert r["first"]["all_found_s"] is not None and r["first"]["embedded_then"] > 0
    assert r["index"]["ab"]["chunks"] > 0 and r["index"]["ab"]["ratio"] > 0
    assert r["restart"]["server"]["ready_s"]["n"] == 1 and r["restart"]["cli"]["wall_s"]["n"] == 1
    assert r["save"]["lexical_ms"]["n"] == 1
    for size in ("10k", "100k"):
        modes = r["latency"][size]["search_ms"]
        assert {"hybrid", "semantic", "lexical", "hybrid+filter"} <= set(modes)
    assert r["latency"]["symbols"]["symbol_ms"]["n"] > 0
    assert r["symbols"]["kenning"]["symbol_ms"]["n"] > 0
    assert r["symbols"]["kenning"]["results_mean"] > 0 and r["symbols"]["kenning"]["first_query_ms"] > 0
    scale = r["scale"]
    assert scale["built"]["chunks"] >= 2_000 and scale["built"]["copies"] >= 1
    assert {"hybrid", "hybrid+filter"} <= set(scale["warm"]["search_ms"])
    assert scale["warm"]["symbol_ms"]["n"] > 0 and scale["warm"]["rss_ready_mib"]["VmRSS"] > 0
    assert scale["restart"]["ready_s"]["n"] == 1 and scale["cli"]["wall_s"]["n"] == 1
    cold = scale["cold"]
    assert cold["ready_s"]["n"] == 2 and cold["files_dropped"] > 0
    assert cold["search_ms"]["paused"]["n"] > 0 and cold["read_ahead"].startswith("store read-ahead:")
    # A graph this small may be rebuilt before the first query arrives: no count asserted.
    assert scale["rebuild"]["removed"] and scale["rebuild"]["ready_s"] > 0
    files = r["files"]
    assert files["built"]["files"] >= 300 and files["small_files"] > 0
    for kind in ("walk", "git"):
        assert files[kind]["cli"]["wall_s"]["n"] == 1 and files[kind]["restart"]["ready_s"]["n"] == 1
        assert files[kind]["save"]["lexical_ms"]["n"] == 1 and files[kind]["save"]["misses"] == 0
    assert set(r["quality"]["optimized"]) == {"lexical", "semantic", "hybrid"}
    assert r["sharing"]["second"]["computed"] == 0 and r["sharing"]["first"]["computed"] > 0
    text = output.read_text()
    assert text.startswith("# notes kept around the results")
    assert "trailing analysis" in text and "\nold\n" not in text
    assert "#### Summary" in text and "semanticSearch hybrid" in text
    assert "#### 8. A monorepo" in text and "#### 9. 300 files" in text and "Not measured" not in text
    assert "measure" in proc.stdout  # the table was printed
