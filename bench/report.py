"""Turning one run's results into the summary table (printed) and the results section of
docs/performance.md (written between two marker comments, so the analysis around it stays)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

START = "<!-- bench:results:start -->"
END = "<!-- bench:results:end -->"

Row = tuple[str, str, str, str]  # measure, value, target, verdict


def _get(results: dict[str, Any], *path: str) -> Any:
    node: Any = results
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _num(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return format(value, fmt)


def _verdict(value: Any, ok: Callable[[float], bool], miss: Callable[[float], str]) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not measured"
    return "met" if ok(value) else "missed: " + miss(value)


def _model_rows(r: dict[str, Any]) -> list[Row]:
    """Step 1: the model's throughput on the optimised and original graphs."""
    rows: list[Row] = []
    graph = {(row["tokens"], row["batch"]): row for row in r.get("model", {}).get("graphs", [])}
    g256 = graph.get((256, "default"))
    if g256:
        v = g256["optimized"]
        rows.append(
            (
                "embedding, optimised graph, 256 tokens (chunks/s)",
                _num(v, ".1f"),
                "≥ 60",
                _verdict(v, lambda x: x >= 60, lambda x: f"{x / 60:.2f}× of it"),
            )
        )
        rows.append(
            (
                "  original graph, 256 tokens (chunks/s)",
                _num(g256["original"], ".1f"),
                "",
                f"optimised is {v / g256['original']:.2f}×",
            )
        )
    g128 = graph.get((128, "default"))
    if g128:
        rows.append(
            ("embedding, optimised graph, 128 tokens (chunks/s)", _num(g128["optimized"], ".1f"), "", "")
        )
    return rows


def _index_rows(r: dict[str, Any]) -> list[Row]:
    """Steps 1b/2: indexing against the bare model, and a fresh stdlib over LSP."""
    rows: list[Row] = []
    ab = _get(r, "index", "ab")
    if ab:
        v = ab["ratio"]
        rows.append(
            (
                f"indexing ÷ model, same calls ({ab['chunks']:,} chunks, median of {ab['repeats']})",
                _num(v, ".2f"),
                "≥ 0.9",
                _verdict(v, lambda x: x >= 0.9, lambda x: f"by {0.9 - x:.2f}"),
            )
        )
        rows.append(
            (
                "  indexing ÷ separate bare-model runs, alternated",
                _num(ab.get("ratio_alternated"), ".2f"),
                "",
                "",
            )
        )
    ratio = _get(r, "index", "ratio_embed")
    if ratio is not None:
        rows.append(
            (
                "  fresh stdlib over LSP: embedding phase ÷ raw sample (before/after)",
                _num(ratio, ".2f"),
                "",
                "",
            )
        )
        rows.append(
            (
                "  the same in CPU time (raw CPU/chunk ÷ server CPU/chunk)",
                _num(_get(r, "index", "ratio_embed_cpu"), ".2f"),
                "",
                "",
            )
        )
    fresh = _get(r, "index", "fresh")
    if fresh:
        v = fresh.get("first_lexical_s")
        rows.append(
            (
                "start → first lexical result, fresh stdlib (s)",
                _num(v, ".2f"),
                "≤ 15",
                _verdict(v, lambda x: x <= 15, lambda x: f"by {x - 15:.1f} s"),
            )
        )
        rows.append(
            ("start → whole stdlib lexically searchable (s)", _num(fresh.get("scan_done_s"), ".1f"), "", "")
        )
        rows.append(("start → ready (all embedded) (s)", _num(fresh.get("ready_s"), ".0f"), "", ""))
    return rows


def _first_rows(r: dict[str, Any]) -> list[Row]:
    """The opened files searchable first on a fresh index (the working set)."""
    rows: list[Row] = []
    first = r.get("first")
    if first:
        v = first.get("all_found_s")
        rows.append(
            (
                f"start → {len(first['opened'])} opened files semantically searchable, fresh "
                f"{first['corpus_files']:,}-file stdlib (s)",
                _num(v, ".1f"),
                "≤ 10",
                _verdict(v, lambda x: x <= 10, lambda x: f"by {x - 10:.1f} s"),
            )
        )
        rows.append(
            ("  start → the first of them searchable (s)", _num(first.get("first_found_s"), ".1f"), "", "")
        )
        rows.append(("  server CPU time until then (s)", _num(first.get("server_cpu_s"), ".1f"), "", ""))
        rows.append(
            (
                "  chunks with vectors at that moment / chunks then known",
                f"{first.get('embedded_then')}/{first.get('chunks_then')}",
                "",
                "",
            )
        )
    return rows


def _restart_rows(r: dict[str, Any]) -> list[Row]:
    """Step 3: an unchanged restart and re-index."""
    rows: list[Row] = []
    v = _get(r, "restart", "server", "ready_s", "p50")
    if v is not None:
        rows.append(
            (
                "unchanged restart: server start → ready, p50 (s)",
                _num(v, ".2f"),
                "≤ 1",
                _verdict(v, lambda x: x <= 1, lambda x: f"by {x - 1:.2f} s"),
            )
        )
        rows.append(
            (
                "  server start → first lexical answer, p50 (s)",
                _num(_get(r, "restart", "server", "first_lexical_s", "p50"), ".2f"),
                "",
                "",
            )
        )
    v = _get(r, "restart", "cli", "wall_s", "p50")
    if v is not None:
        rows.append(
            (
                "unchanged re-index: `kenning index`, p50 (s)",
                _num(v, ".2f"),
                "≤ 1",
                _verdict(v, lambda x: x <= 1, lambda x: f"by {x - 1:.2f} s"),
            )
        )
    return rows


def _save_rows(r: dict[str, Any]) -> list[Row]:
    """Step 4: didSave → findable."""
    rows: list[Row] = []
    save = r.get("save")
    if save:
        v = _get(save, "lexical_ms", "p50")
        rows.append(
            (
                f"didSave → findable, lexical, {save['lines']}-line file, p50 (ms)",
                _num(v, ".0f"),
                "≤ 500",
                _verdict(v, lambda x: x <= 500, lambda x: f"by {x - 500:.0f} ms"),
            )
        )
        rows.append(
            ("didSave → findable, semantic, p50 (ms)", _num(_get(save, "semantic_ms", "p50"), ".0f"), "", "")
        )
    return rows


def _latency_rows(r: dict[str, Any]) -> list[Row]:
    """Steps 5-7: search latency at each size, symbol latency, memory and disk at each size, the
    idle server. The targets are set at 100k chunks."""
    search: list[Row] = []
    memory: list[Row] = []
    for size in ("10k", "100k"):
        lat = _get(r, "latency", size)
        if not lat:
            continue
        targeted = size == "100k"
        for mode in ("hybrid", "semantic", "lexical", "hybrid+filter", "semantic+filter", "lexical+filter"):
            s = _get(lat, "search_ms", mode)
            if not s:
                continue
            label = f"semanticSearch {mode} @ {lat['chunks']:,} chunks, p50 / p95 (ms)"
            value = f"{s['p50']:.1f} / {s['p95']:.1f}"
            cpu = _get(lat, "search_cpu_ms", mode)
            if cpu is not None:
                value += f" (CPU {cpu:.1f})"
            if targeted:
                ok = s["p50"] <= 15 and s["p95"] <= 40
                why = []
                if s["p50"] > 15:
                    why.append(f"p50 by {s['p50'] - 15:.1f} ms")
                if s["p95"] > 40:
                    why.append(f"p95 by {s['p95'] - 40:.1f} ms")
                search.append((label, value, "≤ 15 / ≤ 40", "met" if ok else "missed: " + ", ".join(why)))
            else:
                search.append((label, value, "", ""))
        peak = _get(lat, "memory_mib", "VmHWM")
        target, verdict = "", ""
        if targeted:
            target = "≤ 400"
            verdict = _verdict(
                peak, lambda x: x <= 400 / 1.048576, lambda x: f"by {x * 1.048576 - 400:.0f} MB"
            )
        memory.append(
            (
                f"server peak RSS @ {lat['chunks']:,} chunks (MiB)",
                _num(peak, ".0f"),
                target + (" MB" if target else ""),
                verdict,
            )
        )
        memory.append(
            (
                f"index on disk @ {lat['chunks']:,} chunks (bytes/chunk)",
                _num(lat.get("disk_per_chunk"), ",.0f"),
                "",
                "",
            )
        )
    rows = search
    sym = _get(r, "latency", "symbols")
    if sym and sym.get("symbol_ms"):
        v = sym["symbol_ms"]["p50"]
        rows.append(
            (
                f"workspace/symbol @ {sym['symbols']:,} symbols, p50 / p95 (ms)",
                f"{v:.1f} / {sym['symbol_ms']['p95']:.1f}",
                "p50 ≤ 10",
                _verdict(v, lambda x: x <= 10, lambda x: f"by {x - 10:.1f} ms"),
            )
        )
        if sym.get("symbol_cpu_ms") is not None:
            rows.append(("  server CPU per workspace/symbol (ms)", _num(sym["symbol_cpu_ms"], ".1f"), "", ""))
    rows += memory
    idle = _get(r, "latency", "100k", "idle") or _get(r, "index", "fresh", "idle")
    if idle:
        ok = idle["cpu_s"] <= 0.05 and idle["write_bytes"] == 0
        rows.append(
            (
                f"idle server, {idle['seconds']:.0f} s: CPU s / bytes written",
                f"{idle['cpu_s']:.2f} / {idle['write_bytes']:,}",
                "0 / 0",
                "met" if ok else "missed",
            )
        )
    return rows


def _quality_rows(r: dict[str, Any]) -> list[Row]:
    """Retrieval quality, and the optimised graph's gate."""
    rows: list[Row] = []
    q = r.get("quality")
    if q:
        for mode, s in q.get("optimized", {}).items():
            rows.append(
                (
                    f"quality, {mode}: MRR@10 / R@1 / R@10",
                    f"{s['mrr@10']:.3f} / {s['recall@1']:.3f} / {s['recall@10']:.3f}",
                    "",
                    "",
                )
            )
        gate = q.get("gate")
        if gate:
            rows.append(
                (
                    "optimised-graph gate: faster and MRR@10 within 0.01",
                    f"Δ semantic {gate['delta_semantic']:+.3f}, speed {_speedup(gate)}",
                    "",
                    _gate_verdict(gate),
                )
            )
    return rows


def _speedup(gate: dict[str, Any]) -> str:
    """The gate's speed ratio, or why there is none: ``--only quality`` skips the model step."""
    speedup = gate.get("speedup")
    return "not measured (no model step in this run)" if speedup is None else f"{speedup:.2f}×"


def _speed_clause(gate: dict[str, Any]) -> str:
    if gate.get("speedup") is None:
        return f"speed {_speedup(gate)}"
    return f"optimised graph {_speedup(gate)} the original's speed at 256 tokens"


def _gate_verdict(gate: dict[str, Any]) -> str:
    if gate.get("speedup") is None:
        return "passes on quality" if gate["passes"] else "fails on quality"
    return "passes" if gate["passes"] else "fails"


def _endpoint_rows(r: dict[str, Any]) -> list[Row]:
    """The embedding endpoint step (bench/endpoint.py)."""
    rows: list[Row] = []
    if r.get("endpoint"):
        from bench.endpoint import summary_rows as endpoint_rows

        rows += endpoint_rows(r["endpoint"])
    return rows


def _mcp_rows(r: dict[str, Any]) -> list[Row]:
    """The MCP step (bench/mcp_latency.py)."""
    rows: list[Row] = []
    if r.get("mcp"):
        from bench.mcp_latency import summary_rows as mcp_rows

        rows += mcp_rows(r["mcp"])
    return rows


def _sharing_rows(r: dict[str, Any]) -> list[Row]:
    """The shared embedding cache across two clones."""
    rows: list[Row] = []
    sh = r.get("sharing")
    if sh:
        v = sh["ratio"]
        rows.append(
            (
                f"second clone's first index ÷ first clone's ({sh['chunks']:,} chunks, shared cache)",
                _num(v, ".3f"),
                "≤ 0.10",
                _verdict(v, lambda x: x <= 0.10, lambda x: f"{x / 0.10:.1f}× the target"),
            )
        )
        u = sh["unchanged_ms"]
        rows.append(
            (
                "  unchanged re-index, shared cache on / off (ms)",
                f"{u['shared_on']:.0f} / {u['shared_off']:.0f}",
                "no worse",
                "",
            )
        )
        q = sh["query_ms"].get("hybrid")
        if q:
            rows.append(
                (
                    "  hybrid search p50, vectors computed / from the cache (ms)",
                    f"{q['computed_p50']:.1f} / {q['from_cache_p50']:.1f}",
                    "no worse",
                    "",
                )
            )
    return rows


def _scale_latency_verdict(s: dict[str, float]) -> str:
    """Issue 15's million-chunk search target (p50 ≤ 30, p95 ≤ 80 ms) against a summary."""
    why = [f"p50 by {s['p50'] - 30:.1f} ms"] if s["p50"] > 30 else []
    why += [f"p95 by {s['p95'] - 80:.1f} ms"] if s["p95"] > 80 else []
    return "missed: " + ", ".join(why) if why else "met"


def scale_rows(r: dict[str, Any]) -> list[Row]:
    """The monorepo step's measures against issue 15's targets (bench/scale.py)."""
    sc = r.get("scale")
    if not sc or not sc.get("warm"):
        return []
    rows: list[Row] = []
    w, b = sc["warm"], sc["built"]
    n = f"{w['chunks']:,} chunks"
    for mode, what in (("hybrid", ""), ("hybrid+filter", f", filter {sc['filter']['glob']}")):
        s = _get(w, "search_ms", mode)
        if not s:
            continue
        cpu = _get(w, "search_cpu_ms", mode)
        rows.append(
            (
                f"scale: semanticSearch hybrid @ {n}{what}, p50 / p95 (ms)",
                f"{s['p50']:.1f} / {s['p95']:.1f}" + (f" (CPU {cpu:.1f})" if cpu is not None else ""),
                "≤ 30 / ≤ 80",
                _scale_latency_verdict(s),
            )
        )
    sym = w.get("symbol_ms")
    if sym:
        v = sym["p50"]
        rows.append(
            (
                f"scale: workspace/symbol @ {b['symbols']:,} symbols, p50 / p95 (ms)",
                f"{v:.1f} / {sym['p95']:.1f}",
                "p50 ≤ 20",
                _verdict(v, lambda x: x <= 20, lambda x: f"by {x - 20:.1f} ms"),
            )
        )
        rows.append(
            (
                "  first workspace/symbol (builds the symbol index) (ms)",
                _num(w.get("symbol_first_ms"), ",.0f"),
                "",
                "",
            )
        )
    rss = _get(w, "rss_ready_mib", "VmRSS")
    rows.append(
        (
            f"scale: server RSS after ready @ {n} (MiB)",
            _num(rss, ",.0f"),
            "≤ 1,536",
            _verdict(rss, lambda x: x <= 1536, lambda x: f"by {x - 1536:,.0f} MiB"),
        )
    )
    rows.append(
        (
            "  RSS after the queries / peak (MiB)",
            _num(_get(w, "memory_mib", "VmRSS"), ",.0f")
            + " / "
            + _num(_get(w, "memory_mib", "VmHWM"), ",.0f"),
            "",
            "",
        )
    )
    rows.append(
        (
            f"scale: store on disk (bytes/chunk, {w['disk_bytes'] / 2**30:.2f} GiB)",
            _num(w.get("disk_per_chunk"), ",.0f"),
            "",
            "",
        )
    )
    v = _get(sc, "restart", "ready_s", "p50")
    rows.append(
        (
            f"scale: unchanged restart → ready @ {n}, p50 (s)",
            _num(v, ".2f"),
            "≤ 3",
            _verdict(v, lambda x: x <= 3, lambda x: f"by {x - 3:.2f} s"),
        )
    )
    cold = sc.get("cold")
    if cold:
        v = _get(cold, "ready_s", "p50")
        rows.append(
            (
                "scale: the same restart cold (tree's and store's pages evicted) → ready, p50 (s)",
                _num(v, ".2f"),
                "≤ 3",
                _verdict(v, lambda x: x <= 3, lambda x: f"by {x - 3:.2f} s"),
            )
        )
        now, later = _get(cold, "search_ms", "at_ready"), _get(cold, "search_ms", "paused")
        first_now, first_later = _get(cold, "first_ms", "at_ready"), _get(cold, "first_ms", "paused")
        pause = cold.get("pause_s", 5)
        if now and first_now:
            rows.append(
                (
                    "  cold: hybrid queries sent at ready, p50 / p95; the first (ms)",
                    f"{now['p50']:.1f} / {now['p95']:.1f}; {first_now['p50']:,.0f}",
                    "",
                    "",
                )
            )
        if later and first_later:
            rows.append(
                (
                    f"  cold: hybrid queries sent {pause:.0f} s after ready, p50 / p95; the first (ms)",
                    f"{later['p50']:.1f} / {later['p95']:.1f}; {first_later['p50']:,.0f}",
                    "≤ 30 / ≤ 80",
                    _scale_latency_verdict(later),
                )
            )
    v = _get(sc, "cli", "wall_s", "p50")
    rows.append(
        (
            f"scale: unchanged `kenning index` @ {b['files']:,} files, p50 (s)",
            _num(v, ".2f"),
            "≤ 3",
            _verdict(v, lambda x: x <= 3, lambda x: f"by {x - 3:.2f} s"),
        )
    )
    rows.append(
        (f"scale: HNSW build from the stored vectors @ {n} (s)", _num(b.get("graph_s"), ".0f"), "", "")
    )
    rb = sc.get("rebuild")
    if rb:
        d = rb["during_ms"]
        rows.append(
            (
                "scale: graph rebuilt at start → ready (s); hybrid queries during it, p50 / p95 (ms)",
                f"{rb['ready_s']:.0f}; {d['p50']:.1f} / {d['p95']:.1f} (n {d['n']})",
                "answered, p95 ≤ 80",
                _verdict(
                    d["p95"] if d["n"] else None, lambda x: x <= 80, lambda x: f"p95 by {x - 80:.0f} ms"
                ),
            )
        )
    return rows


_FILES_KINDS = (("walk", "a plain tree"), ("git", "a git repository"))


def files_rows(r: dict[str, Any]) -> list[Row]:
    """The many-files step's measures against issue 15's per-file targets (bench/manyfiles.py)."""
    fs = r.get("files")
    if not fs or not fs.get("built"):
        return []
    rows: list[Row] = []
    n = f"{fs['built']['files']:,} files"
    for kind, what in _FILES_KINDS:
        m = fs.get(kind)
        if not m:
            continue
        v = _get(m, "cli", "wall_s", "p50")
        rows.append(
            (
                f"many files: unchanged `kenning index` @ {n}, {what}, p50 (s)",
                _num(v, ".2f"),
                "≤ 3",
                _verdict(v, lambda x: x <= 3, lambda x: f"by {x - 3:.2f} s"),
            )
        )
        rows.append(
            (
                "  server start → first lexical answer / ready, p50 (s)",
                _num(_get(m, "restart", "first_lexical_s", "p50"), ".2f")
                + " / "
                + _num(_get(m, "restart", "ready_s", "p50"), ".2f"),
                "",
                "",
            )
        )
        v = _get(m, "save", "lexical_ms", "p50")
        rows.append(
            (
                f"  didSave → findable, lexical / semantic, {_get(m, 'save', 'lines')}-line file, p50 (ms)",
                _num(v, ".0f") + " / " + _num(_get(m, "save", "semantic_ms", "p50"), ".0f"),
                "≤ 500",
                _verdict(v, lambda x: x <= 500, lambda x: f"by {x - 500:.0f} ms"),
            )
        )
    return rows


def files_markdown(r: dict[str, Any]) -> list[str]:
    fs = r.get("files")
    if not fs:
        return []
    head = f"#### 9. {fs['target_files']:,} files (`--only files`)"
    if not fs.get("built"):
        return [head, "", _table_or_missing([], [], r, "files"), ""]
    b = fs["built"]
    rows = [list(row[:3]) for row in files_rows(r)]
    return [
        head,
        "",
        f"{b['files']:,} files, {b['chunks']:,} chunks, {b['symbols']:,} symbols: the corpus's "
        f"{fs['small_files']} `.py` files of at most {fs['small_chunks']} chunks, {b['copies']:,} "
        f"replicas of them, and `{fs['edited']}`, the file each save edits. "
        + CONSTRUCTION
        + _built_text(b)
        + " Measured twice: as a plain directory (kenning walks it) and as a git repository"
        " (kenning asks `git ls-files`; every file staged, the store excluded in"
        f" `.git/info/exclude`; `git init` and `git add` took {_num(fs.get('git_add_s'), '.0f')} s).",
        "",
        _md_table(["measure", "value", "target"], rows),
        "",
    ]


# Each step's rows, in the order the summary lists them.
SUMMARY_STEPS: tuple[Callable[[dict[str, Any]], list[Row]], ...] = (
    _model_rows,
    _index_rows,
    _first_rows,
    _restart_rows,
    _save_rows,
    _latency_rows,
    _quality_rows,
    scale_rows,
    files_rows,
    _endpoint_rows,
    _mcp_rows,
    _sharing_rows,
)


def summary_rows(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for step in SUMMARY_STEPS:
        rows += step(r)
    return rows


def _cold_text(cold: dict[str, Any] | None) -> str:
    if not cold:
        return ""
    text = (
        f" Cold restarts: before each, every file of the tree and its store evicted from the page"
        f" cache (`posix_fadvise` DONTNEED on {cold.get('files_dropped', 0):,} files; directory"
        " entries and inodes stay cached), the server started, and the hybrid queries sent once,"
        f" at ready or {cold.get('pause_s', 5):.0f} s after it (one start each, "
        f"{_get(cold, 'ready_s', 'n') or 0} starts in all)."
    )
    if cold.get("read_ahead"):
        text += f' The server\'s log: "{cold["read_ahead"]}".'
    return text


def _built_text(b: dict[str, Any]) -> str:
    """What building a large tree took (``bench.scale.build_tree``'s record)."""
    return (
        f" Built in {b['total_s']:.0f} s: files written {b['write_s']:.0f} s, scan {b['scan_s']:.0f} s, "
        f"vectors seeded {b['seed_s']:.0f} s, HNSW graph built and saved {b['graph_s']:.0f} s"
        + (f" (the tree built at {b.get('built_at')}, reused by this run)." if b.get("reused") else ".")
    )


def scale_markdown(r: dict[str, Any]) -> list[str]:
    sc = r.get("scale")
    if not sc:
        return []
    head = f"#### 8. A monorepo: about {sc['target']:,} chunks (`--only scale`)"
    if not sc.get("warm"):
        return [head, "", _table_or_missing([], [], r, "scale"), ""]
    b = sc["built"]
    rb = sc.get("rebuild") or {}
    rows = [list(row[:3]) for row in scale_rows(r)]
    return [
        head,
        "",
        f"{b['files']:,} files ({b['copies']} replicas of the base corpus), {b['chunks']:,} chunks, "
        f"{b['symbols']:,} symbols; vectors: {b['exact']:,} exact, {b['perturbed']:,} perturbed. "
        + CONSTRUCTION
        + _built_text(b),
        "",
        "Queries: the latency step's (docstring sentences and identifiers), over LSP, warm; the "
        f"filter selects {sc['filter']['chunks']:,} of {sc['filter']['total']:,} chunks. The rebuild: "
        "the saved graph file deleted, the server started, hybrid queries sent back to back until "
        f"it reported ready ({rb.get('during_with_dense', 0)} of {_get(rb, 'during_ms', 'n') or 0} "
        "answered with dense hits: until the graph is back a query gets the lexical half), then "
        f"the same queries again: p50 {_num(_get(rb, 'after_ms', 'p50'), '.1f')} ms."
        + _cold_text(sc.get("cold")),
        "",
        _md_table(["measure", "value", "target"], rows),
        "",
    ]


def table(rows: list[Row]) -> str:
    head = ("measure", "value", "target", "verdict")
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


CONSTRUCTION = (
    "The larger indexes are built without embedding them (bench/seeded.py): the base corpus and "
    "`copy<N>/` replicas of its `.py` files are written to disk and scanned by kenning itself "
    "(files, chunks, symbols and FTS rows are what kenning makes of them); each chunk's vector "
    "is the base index's vector of the same chunk (exact) or, for a replica, of the chunk at the "
    "same place in the original file plus Gaussian noise (sigma 0.01 per dimension, cosine ~0.98), "
    "normalised; kenning then builds and saves the HNSW graph from the stored vectors."
)


def _table_or_missing(head: list[str], rows: list[list[str]], r: dict[str, Any], step: str) -> str:
    """A table, or — when the step produced no rows — a line saying so and why, never an empty
    table that reads like a result."""
    if rows:
        return _md_table(head, rows)
    why = [e for e in r.get("errors", []) if e.startswith(f"{step}:")]
    return "Not measured in this run" + (f": {why[0]}" if why else ".")


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def _model_section(r: dict[str, Any]) -> list[str]:
    """1. Model throughput."""
    parts: list[str] = []
    graphs = _get(r, "model", "graphs")
    if graphs:
        parts += [
            "#### 1. Model throughput (chunks/s, median of "
            f"{r['model']['repeats']} interleaved repeats, {r['model']['texts']} texts of exactly "
            "N tokens; batch `default` = how the encoder runs each graph)",
            "",
            _md_table(
                ["tokens", "batch", "original", "optimised", "optimised ÷ original"],
                [
                    [
                        str(g["tokens"]),
                        str(g["batch"]),
                        f"{g['original']:.1f}",
                        f"{g['optimized']:.1f}",
                        f"{g['optimized'] / g['original']:.2f}×",
                    ]
                    for g in graphs
                ],
            ),
            "",
        ]
    return parts


def _index_section(r: dict[str, Any]) -> list[str]:
    """1b/2. Indexing the standard library from scratch over LSP."""
    parts: list[str] = []
    idx = r.get("index")
    if idx and idx.get("fresh") and idx.get("raw_before") and idx.get("raw_after"):
        raw_b, raw_a = idx["raw_before"], idx["raw_after"]
        tok = idx.get("tokens", {})
        fresh = idx["fresh"]
        parts += [
            "#### 1b/2. Indexing the standard library from scratch over LSP",
            "",
            _md_table(
                ["what", "value"],
                [
                    [
                        "files / chunks / embedded",
                        f"{fresh['files']:,} / {fresh['chunks']:,} / {fresh['embedded']:,}",
                    ],
                    [
                        "model input tokens per chunk: mean / median / share over the limit",
                        f"{tok.get('mean_tokens', 0):.0f} / {tok.get('median_tokens', 0):.0f} / "
                        f"{tok.get('over_limit_share', 0):.1%}",
                    ],
                    [
                        "raw model on a sample of these inputs, before / after (chunks/s)",
                        f"{raw_b['median']:.1f} / {raw_a['median']:.1f} "
                        f"({raw_b['chunks']} chunks, median of {idx['raw_repeats']})",
                    ],
                    ["server: initialize answered (s)", f"{fresh['initialize_s']:.2f}"],
                    ["server: first lexical result (s)", _num(fresh["first_lexical_s"], ".2f")],
                    ["server: scan done (s)", f"{fresh['scan_done_s']:.1f}"],
                    [
                        "server: embedding phase (s) / rate (chunks/s)",
                        f"{fresh['embed_phase_s']:.0f} / {fresh['embed_rate']:.1f}",
                    ],
                    ["server: ready (s)", f"{fresh['ready_s']:.0f}"],
                    ["end-to-end embedding rate ÷ raw", f"{idx['ratio_embed']:.2f}"],
                    *(
                        [
                            [
                                f"in process, {idx['ab']['chunks']:,} chunks ×{idx['ab']['repeats']}: "
                                "indexing / bare model alternated (chunks/s)",
                                f"{idx['ab']['pipeline']:.1f} / {idx['ab']['raw']:.1f} (per pair "
                                + ", ".join(f"{x:.2f}" for x in idx["ab"]["ratios"])
                                + "); share of the "
                                "indexing time inside the model: "
                                + ", ".join(f"{x:.3f}" for x in idx["ab"]["in_model"]),
                            ]
                        ]
                        if idx.get("ab")
                        else []
                    ),
                    [
                        "CPU per chunk: raw (before/after) / server's embedding phase (ms)",
                        f"{raw_b.get('cpu_per_chunk', 0) * 1000:.1f} / "
                        f"{raw_a.get('cpu_per_chunk', 0) * 1000:.1f} / "
                        f"{fresh.get('cpu_embed_phase_s', 0) / max(fresh['embedded'], 1) * 1000:.1f}",
                    ],
                    ["whole pipeline rate ÷ raw", f"{idx['ratio_pipeline']:.2f}"],
                    [
                        "server RSS after ready: now / peak (MiB)",
                        f"{fresh['memory_mib'].get('VmRSS', 0):.0f} / "
                        f"{fresh['memory_mib'].get('VmHWM', 0):.0f}",
                    ],
                ],
            ),
            "",
        ]
    return parts


# The restart step's rows: (which run, which measure, its label, its format).
RESTART_ROWS = (
    ("server", "first_lexical_s", "server start → first lexical answer (s)", ".2f"),
    ("server", "ready_s", "server start → ready (s)", ".2f"),
    ("server", "cpu_at_ready_s", "  the server's CPU time until ready (s)", ".2f"),
    ("cli", "wall_s", "`kenning index`, whole process (s)", ".2f"),
    ("cli", "cpu_s", "  its CPU time (s)", ".2f"),
    ("cli", "scan_s", "  of which the scan (s)", ".3f"),
)


def _restart_section(r: dict[str, Any]) -> list[str]:
    """3. Unchanged restart and re-index: each measure's p50, max and count."""
    rs = r.get("restart")
    if not rs:
        return []
    rows = []
    for run, measure, label, fmt in RESTART_ROWS:
        s = _get(rs, run, measure)
        if s:
            rows.append([label, format(s["p50"], fmt), format(s["max"], fmt), str(s["n"])])
    return [
        "#### 3. Unchanged restart and re-index (stdlib)",
        "",
        _md_table(["what", "p50", "max", "n"], rows),
        "",
    ]


def _save_section(r: dict[str, Any]) -> list[str]:
    """4. didSave → findable."""
    parts: list[str] = []
    save = r.get("save")
    if save:
        parts += [
            f"#### 4. didSave → findable (`{save['file']}`, {save['lines']} lines; a function "
            "appended, then polled every 10 ms)",
            "",
            _md_table(
                ["half", "p50 (ms)", "max (ms)", "n"],
                [
                    [k.split("_")[0], f"{save[k]['p50']:.0f}", f"{save[k]['max']:.0f}", str(save[k]["n"])]
                    for k in ("lexical_ms", "semantic_ms")
                    if save[k]["n"]
                ],
            ),
            "",
        ]
    return parts


def _latency_section(r: dict[str, Any]) -> list[str]:
    """5. workspace/semanticSearch, and the large indexes it ran on."""
    parts: list[str] = []
    lat = r.get("latency")
    if lat:
        rows = []
        for size in ("10k", "100k"):
            x = lat.get(size)
            if not x:
                continue
            for mode, s in x["search_ms"].items():
                cpu = x.get("search_cpu_ms", {}).get(mode)
                rows.append(
                    [
                        f"{x['chunks']:,}",
                        mode,
                        f"{s['p50']:.1f}",
                        f"{s['p95']:.1f}",
                        f"{s['max']:.1f}",
                        _num(cpu, ".1f"),
                        str(s["n"]),
                    ]
                )
        parts += [
            "#### 5. workspace/semanticSearch, warm, over LSP (ms; query embedding included; "
            "the server's CPU time per query is the median over rounds of its CPU time across "
            "a round divided by the queries in it, all threads)",
            "",
            "Filters: "
            + (", ".join(f"{k}: {v}" for k, v in lat.get("filters", {}).items()) or "none")
            + ". "
            + CONSTRUCTION,
            "",
            _table_or_missing(
                ["chunks", "mode", "p50", "p95", "max", "server CPU per query", "n"], rows, r, "latency"
            ),
            "",
        ]
        built = lat.get("built", {})
        if built:
            parts += [
                "Large indexes (scan by kenning, vectors reused from the base corpus):",
                "",
                _md_table(
                    [
                        "index",
                        "files",
                        "chunks",
                        "symbols",
                        "exact vectors",
                        "perturbed vectors",
                        "embedded by the model",
                        "build (s)",
                    ],
                    [
                        [
                            k,
                            f"{b['files']:,}",
                            f"{b['chunks']:,}",
                            f"{b['symbols']:,}",
                            f"{b['exact']:,}",
                            f"{b['perturbed']:,}",
                            f"{b['embedded_by_model']:,}",
                            f"{b['total_s']:.0f}",
                        ]
                        for k, b in built.items()
                    ],
                ),
                "",
            ]
    return parts


def _symbols_section(r: dict[str, Any]) -> list[str]:
    """6. workspace/symbol side by side with other servers."""
    parts: list[str] = []
    sym = r.get("symbols")
    if sym:
        rows = []
        for name, x in sym.items():
            if not isinstance(x, dict):
                continue
            if x.get("skipped"):
                rows.append([name, x.get("version", ""), "—", "—", "—", "—", x["skipped"]])
                continue
            s = x["symbol_ms"]
            rows.append(
                [
                    name,
                    x.get("version", ""),
                    _num(x.get("first_query_ms"), ",.0f"),
                    f"{s['p50']:.1f}",
                    f"{s['p95']:.1f}",
                    # No default: a missing count shows as "—", never as a plausible 0.
                    _num(x.get("results_mean"), ".0f"),
                    str(x.get("errors", 0)),
                ]
            )
        parts += [
            f"#### 6. workspace/symbol side by side on the stdlib workspace "
            f"({sym.get('queries', 0)} queries, warm after a first one)",
            "",
            _md_table(
                [
                    "server",
                    "version",
                    "first query (ms)",
                    "p50 (ms)",
                    "p95 (ms)",
                    "results (mean)",
                    "errors / notes",
                ],
                rows,
            ),
            "",
        ]
    return parts


def _memory_section(r: dict[str, Any]) -> list[str]:
    """7. Memory and disk, and the idle server."""
    parts: list[str] = []
    lat = r.get("latency")
    if lat:
        rows = []
        for key in ("10k", "100k", "symbols"):
            x = lat.get(key)
            if not x:
                continue
            mem = x.get("memory_mib", {})
            rows.append(
                [
                    key,
                    f"{x['chunks']:,}",
                    f"{x['ready_s']:.1f}",
                    f"{mem.get('VmRSS', 0):.0f}",
                    f"{mem.get('VmHWM', 0):.0f}",
                    f"{x['disk_bytes'] / 2**20:.0f}",
                    f"{x['disk_per_chunk']:,.0f}",
                ]
            )
        parts = [
            "#### 7. Memory and disk (server started on the prebuilt index, after the queries)",
            "",
            _table_or_missing(
                [
                    "index",
                    "chunks",
                    "start → ready (s)",
                    "RSS (MiB)",
                    "peak RSS (MiB)",
                    "store (MiB)",
                    "bytes/chunk",
                ],
                rows,
                r,
                "latency",
            ),
            "",
        ]
        idle = _get(lat, "100k", "idle")
        if idle:
            parts += [
                f"Idle at 100k chunks for {idle['seconds']:.0f} s: {idle['cpu_s']:.2f} s of CPU, "
                f"{idle['write_bytes']:,} bytes written to disk ({idle['wchar']:,} bytes through "
                "write calls, pipes included).",
                "",
            ]
    return parts


def _quality_section(r: dict[str, Any]) -> list[str]:
    """Retrieval quality."""
    parts: list[str] = []
    q = r.get("quality")
    if q:
        rows = []
        labels = {"original": "original, no query adapter", "no query adapter": "optimized, no query adapter"}
        for variant in ("optimized", "no query adapter", "original"):
            for mode, s in q.get(variant, {}).items():
                rows.append(
                    [
                        labels.get(variant, variant),
                        mode,
                        f"{s['mrr@10']:.3f}",
                        f"{s['recall@1']:.3f}",
                        f"{s['recall@10']:.3f}",
                        str(s["n"]),
                    ]
                )
        parts += [
            f"#### Retrieval quality ({q['queries']} docstring queries, seed {q['seed']}, "
            f"{q['chunks']:,} chunks without docstrings)",
            "",
            _md_table(["graph", "mode", "MRR@10", "Recall@1", "Recall@10", "queries"], rows),
            "",
        ]
        gate = q.get("gate")
        if gate:
            parts += [
                f"Gate: {_speed_clause(gate)}; "
                f"semantic MRR@10 {gate['delta_semantic']:+.3f}, hybrid "
                f"{gate['delta_hybrid']:+.3f} against the original (both without the query adapter) → "
                f"**{_gate_verdict(gate)}** (needs faster and semantic MRR@10 no more than 0.01 below).",
                "",
            ]
        t = q.get("tuning")
        if t:

            def point(p: dict[str, Any]) -> str:
                return (
                    f"RRF_K {p['RRF_K']:g}, LEXICAL_WEIGHT {p['LEXICAL_WEIGHT']:g} "
                    f"(DENSE_WEIGHT 1), NAME_BOOST {p['boost']:g}/(RRF_K+1), "
                    f"COMMON_TERM_SHARE {p['COMMON_TERM_SHARE']:g}"
                )

            parts += [
                f"Fusion tuning (hybrid MRR@10; {t['points']} grid points on "
                f"{t['tune_queries']} queries, checked on the other {t['held_out_queries']}):",
                "",
                _md_table(
                    ["constants", "tuning queries", "held-out queries"],
                    [
                        [
                            "now: " + point(t["default"]),
                            f"{t['default']['tune_mrr']:.3f}",
                            f"{t['default']['held_mrr']:.3f}",
                        ],
                        [
                            "best: " + point(t["best"]),
                            f"{t['best']['tune_mrr']:.3f}",
                            f"{t['best']['held_mrr']:.3f}",
                        ],
                    ],
                ),
                "",
            ]
    return parts


def _endpoint_section(r: dict[str, Any]) -> list[str]:
    """The embedding endpoint step (bench/endpoint.py)."""
    parts: list[str] = []
    if r.get("endpoint"):
        from bench.endpoint import markdown as endpoint_markdown

        parts += endpoint_markdown(r["endpoint"])
    return parts


def _mcp_section(r: dict[str, Any]) -> list[str]:
    """The MCP step (bench/mcp_latency.py)."""
    parts: list[str] = []
    if r.get("mcp"):
        from bench.mcp_latency import markdown as mcp_markdown

        parts += mcp_markdown(r["mcp"])
    return parts


def _errors_section(r: dict[str, Any]) -> list[str]:
    """The steps that failed, with their errors."""
    parts: list[str] = []
    if r.get("errors"):
        parts += ["#### Steps that failed in this run", "", *(f"- `{e}`" for e in r["errors"]), ""]
    return parts


# Each step's section after the summary, in the order the report gives them.
SECTIONS: tuple[Callable[[dict[str, Any]], list[str]], ...] = (
    _model_section,
    _index_section,
    _restart_section,
    _save_section,
    _latency_section,
    _symbols_section,
    _memory_section,
    scale_markdown,
    files_markdown,
    _quality_section,
    _endpoint_section,
    _mcp_section,
    _errors_section,
)


def markdown(r: dict[str, Any]) -> str:
    m = r["machine"]
    parts = [
        START,
        f"### Run: `{r['command']}` — {m['date']}",
        "",
        f"Machine: {m['cpu']} ({m['cpu_family_model']}), {m['cores']} cores, "
        f"{m['memory_gib']:.0f} GiB; SIMD: {', '.join(m['flags']) or 'none listed'}; "
        f"{m['os']}; Python {m['python']}, SQLite {m['sqlite']}, "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + f". Load average at start {m['load_at_start'][0]:.1f}, at the end "
        f"{r.get('load_at_end', 0.0):.1f}; total run {r.get('seconds', 0) / 60:.0f} min.",
        "",
        f"Corpus: {r['corpus']}",
        "",
        "#### Summary",
        "",
        _md_table(["measure", "value", "target", "verdict"], [list(row) for row in summary_rows(r)]),
        "",
    ]
    for section in SECTIONS:
        parts += section(r)
    parts.append(END)
    return "\n".join(parts)


def write(path: Path, section: str, *, start: str = START, end: str = END) -> None:
    """Replace the section between ``start`` and ``end`` in ``path`` (appended when absent; the
    file created if needed)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + section + tail
    else:
        text = (text.rstrip("\n") + "\n\n" if text else "# kenning performance\n\n") + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
