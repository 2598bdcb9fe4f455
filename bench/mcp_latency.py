"""Tool-call latency of ``kenning mcp`` as an agent sees it, and how big its answers are.

The MCP SDK's own client starts ``kenning mcp --root <corpus>`` over stdio, waits until the index
is ready (the corpus's store is reused when an earlier step built it), then times each tool call
end to end (request written to the answer parsed): ``search_code`` with default arguments on the
bench's queries, ``find_symbol`` on its symbol queries, ``find_similar`` on the top hit of each
search, ``index_status``. The cheap rescan before answering (at most every few seconds) is part of
what is timed, as it is part of what an agent waits for.

Sizes: a default ``search_code`` answer (characters of its text) against the same hits as plain
text (each hit's ``path:start-end`` line and the lines of its span, what an agent would read
without the previews) and against ``format: "json"``.

    .venv/bin/python -m bench.mcp_latency --root DIR [--queries 40] [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.server import summary


async def _call(session: Any, name: str, args: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    res = await session.call_tool(name, args, read_timeout_seconds=600)
    ms = (time.perf_counter() - started) * 1000
    if res.is_error:
        raise RuntimeError(f"{name}({args}) failed: {res.content[0].text}")
    return ms, res


async def _wait_ready(session: Any, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        _, res = await _call(session, "index_status", {"format": "json"})
        (root,) = res.structured_content["roots"]
        if root["state"] == "ready" and root["pending"] == 0 and root["chunks"]:
            return dict(root)
        if time.monotonic() > deadline:
            raise TimeoutError(f"the index was not ready in {timeout:.0f}s: {root}")
        await asyncio.sleep(0.5)


def _plain(ws: Path, results: Sequence[dict[str, Any]]) -> str:
    """The hits as plain text: the locator and the full lines of each span."""
    out = []
    for r in results:
        lines = (ws / r["path"]).read_text(encoding="utf-8", errors="replace").split("\n")
        out.append(f"{r['path']}:{r['start_line']}-{r['end_line']}")
        out.extend(lines[r["start_line"] - 1 : r["end_line"]])
    return "\n".join(out)


async def _measure(
    ws: Path, search_q: Sequence[str], symbol_q: Sequence[str], rounds: int, ready_timeout: float
) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kenning", "mcp", "--root", str(ws)], env=dict(os.environ)
    )
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as session:
            started = time.perf_counter()
            await session.initialize()
            out["initialize_ms"] = (time.perf_counter() - started) * 1000
            root = await _wait_ready(session, ready_timeout)
            out["ready_s"] = time.perf_counter() - started
            out["chunks"] = root["chunks"]
            for q in search_q[:5]:  # the model, page cache and code paths warm
                await _call(session, "search_code", {"query": q})
            times: dict[str, list[float]] = {}
            spans: list[dict[str, Any]] = []
            sizes: dict[str, list[int]] = {"text": [], "json": [], "plain": []}
            for _ in range(rounds):
                for q in search_q:
                    ms, res = await _call(session, "search_code", {"query": q})
                    times.setdefault("search_code", []).append(ms)
                    sizes["text"].append(len(res.content[0].text))
                    _, js = await _call(session, "search_code", {"query": q, "format": "json"})
                    hits = js.structured_content["results"]
                    sizes["json"].append(len(js.content[0].text))
                    sizes["plain"].append(len(_plain(ws, hits)))
                    if hits:
                        spans.append(hits[0])
                for q in symbol_q:
                    ms, _ = await _call(session, "find_symbol", {"query": q})
                    times.setdefault("find_symbol", []).append(ms)
                for h in spans[: len(search_q)]:
                    args = {"path": h["path"], "start_line": h["start_line"], "end_line": h["end_line"]}
                    ms, _ = await _call(session, "find_similar", args)
                    times.setdefault("find_similar", []).append(ms)
                for _ in range(10):
                    ms, _ = await _call(session, "index_status", {})
                    times.setdefault("index_status", []).append(ms)
    out["latency_ms"] = {k: summary(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in sizes.items() if v}
    out["answer_chars"] = {
        "search_code_default": med.get("text"),
        "search_code_json": med.get("json"),
        "same_hits_plain_text": med.get("plain"),
        "queries": len(sizes["text"]),
    }
    return out


def measure(
    ws: Path,
    search_queries: Sequence[str],
    symbol_queries: Sequence[str],
    *,
    rounds: int = 1,
    ready_timeout: float = 3600.0,
) -> dict[str, Any]:
    return asyncio.run(_measure(ws, search_queries, symbol_queries, rounds, ready_timeout))


def summary_rows(m: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The summary table's MCP rows (no targets: the issue asked for the numbers)."""
    lat = m["latency_ms"]
    size = m["answer_chars"]
    return [
        (
            "MCP `search_code` p50 / p95 (ms)",
            f"{lat['search_code']['p50']:.0f} / {lat['search_code']['p95']:.0f}",
            "",
            "",
        ),
        (
            "  MCP default answer ÷ the same hits as plain text (chars)",
            f"{size['search_code_default'] / max(size['same_hits_plain_text'] or 1, 1):.2f}",
            "",
            "",
        ),
    ]


def markdown(m: dict[str, Any]) -> list[str]:
    """The MCP section: every tool's latency through the real MCP SDK client over stdio."""
    lat = m["latency_ms"]
    size = m["answer_chars"]
    rows = [
        f"| `{tool}` | {v['p50']:.1f} | {v['p95']:.1f} | {v['max']:.1f} | {v['n']:.0f} |"
        for tool, v in lat.items()
    ]
    return [
        "#### `kenning mcp` through the MCP SDK's stdio client (ms, warm)",
        "",
        f"{m['chunks']:,} chunks; initialize {m['initialize_ms']:.0f} ms, ready {m['ready_s']:.1f} s after"
        " start (the index was built before).",
        "",
        "| tool | p50 | p95 | max | n |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"`search_code`'s default answer is {size['search_code_default']:.0f} characters (median of"
        f" {size['queries']} queries); JSON {size['search_code_json']:.0f}; the same hits' lines as plain"
        f" text {size['same_hits_plain_text']:.0f}.",
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the corpus (indexed on first use)")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    from bench.fuzzy_latency import make_queries

    names = sorted(
        {p.stem for p in args.root.rglob("*.py") if ".kenning" not in p.parts and not p.stem.startswith("_")}
    )
    search_q = [f"{n.replace('_', ' ')} module" for n in names[: args.queries]]
    symbol_q = [q for _, q in make_queries(names, args.queries, seed=7)]
    print(json.dumps(measure(args.root.resolve(), search_q, symbol_q, rounds=args.rounds), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
