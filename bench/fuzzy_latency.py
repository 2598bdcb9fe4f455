"""Latency of ``kenning.fuzzy.FuzzyIndex`` at 100,000 symbol names (``workspace/symbol``).

Names: every function and class name defined in the running interpreter's standard library
(parsed with ``ast``), made unique and repeated with common suffixes (``Impl``, ``_helper``, ``2``,
…) up to the requested count. Queries: a seeded mix of what people type into a symbol box —
prefixes, camel-hump initials, multi-word ("retry pol"), substrings, in-order letters, exact names
and misses.

    .venv/bin/python bench/fuzzy_latency.py [--names 100000] [--queries 1000] [--limit 200]
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import statistics
import sys
import sysconfig
import time
from pathlib import Path

SUFFIXES = (
    *("", "2", "_v2", "Impl", "_helper", "Base"),
    *("_async", "Mixin", "_cb", "Test", "_x", "Handler"),
)


def stdlib_names() -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    names: set[str] = set()
    for path in root.rglob("*.py"):
        if "site-packages" in path.parts or "test" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
    return sorted(names)


def expand(base: list[str], count: int) -> list[str]:
    out = [name + suffix for suffix in SUFFIXES for name in base]
    while len(out) < count:  # a small stdlib: keep going with numbered copies
        out += [f"{name}{len(out)}" for name in base]
    return out[:count]


def _segments(name: str) -> list[str]:
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)


def make_queries(names: list[str], count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(kind, query) pairs, a fixed mix of the ways people search for a symbol."""
    rng = random.Random(seed)
    queries: list[tuple[str, str]] = []
    while len(queries) < count:
        name = rng.choice(names)
        segs = _segments(name) or [name]
        kind = rng.choices(
            ["prefix", "hump", "words", "substring", "subsequence", "exact", "miss"],
            weights=[25, 20, 10, 15, 10, 10, 10],
        )[0]
        if kind == "prefix":
            q = name[: rng.randint(1, 8)]
        elif kind == "hump":
            picked = sorted(rng.sample(range(len(segs)), min(len(segs), rng.randint(2, 4))))
            q = "".join(segs[i][: rng.choice((1, 1, 2))] for i in picked).lower()
        elif kind == "words":
            picked = sorted(rng.sample(range(len(segs)), min(len(segs), 2)))
            q = " ".join(segs[i][: rng.randint(2, 5)].lower() for i in picked)
        elif kind == "substring":
            start = rng.randint(0, max(0, len(name) - 3))
            q = name[start : start + rng.randint(3, 8)].lower()
        elif kind == "subsequence":
            picks = sorted(rng.sample(range(len(name)), min(len(name), rng.randint(3, 6))))
            q = "".join(name[i] for i in picks).lower()
        elif kind == "exact":
            q = name
        else:
            q = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 5)))
        if q.strip():
            queries.append((kind, q))
    return queries


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from kenning.fuzzy import FuzzyIndex, fuzzy_score

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args(argv)

    base = stdlib_names()
    names = expand(base, args.names)
    fuzzy_score("warm", "up")  # builds the one-off Unicode table outside the timings

    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        index = FuzzyIndex(names)
        builds.append(time.perf_counter() - t0)
    queries = make_queries(names, args.queries)
    for _, q in queries[:20]:  # warm the regex cache like a running server would be
        index.search(q, args.limit)

    by_kind: dict[str, list[float]] = {}
    all_ms: list[float] = []
    cpu_ms: list[float] = []  # this thread's CPU time: what the search costs on a busy machine
    for kind, q in queries:
        t0, c0 = time.perf_counter(), time.thread_time()
        index.search(q, args.limit)
        ms = (time.perf_counter() - t0) * 1000
        cpu_ms.append((time.thread_time() - c0) * 1000)
        all_ms.append(ms)
        by_kind.setdefault(kind, []).append(ms)

    print(
        f"{len(names):,} names ({len(base):,} distinct stdlib names), "
        f"{len(queries)} queries, limit {args.limit}"
    )
    print(f"build: best {min(builds) * 1000:.0f} ms, worst {max(builds) * 1000:.0f} ms")
    if hasattr(os, "getloadavg"):
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"search: p50 {statistics.median(all_ms):.2f} ms  p95 {_pct(all_ms, 95):.2f} ms"
        f"  max {max(all_ms):.2f} ms"
    )
    print(
        f"search CPU time: p50 {statistics.median(cpu_ms):.2f} ms  p95 {_pct(cpu_ms, 95):.2f} ms"
        f"  max {max(cpu_ms):.2f} ms"
    )
    for kind, values in sorted(by_kind.items()):
        print(
            f"  {kind:12s} n={len(values):4d}  p50 {statistics.median(values):6.2f} ms"
            f"  p95 {_pct(values, 95):6.2f} ms  max {max(values):6.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
