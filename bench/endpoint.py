"""Embedding through an OpenAI-compatible endpoint: kenning's indexing rate ÷ the server's own.

The test server (``tests/embedserver.py``, the real local model behind ``/v1/embeddings``) runs
with W workers on this machine. The same model inputs are sent twice: by a bare client (``in
flight`` threads, each posting ``batch size`` inputs at a time on a kept-alive connection; the
server's raw throughput) and by kenning's indexer (``embed_pending`` on a lexically indexed
store: pipelining, validation, SQLite commits and graph updates included). Raw runs before and
after kenning's, and their mean is the divisor, so drift on a shared machine shows as spread.
Then query latency through the endpoint: the query embedding alone (LRU misses), and the whole
hybrid search.
"""

from __future__ import annotations

import http.client
import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: Chunks embedded per run, per plan.
SIZES = {"smoke": 48, "quick": 800, "full": 4000}
BATCH_SIZE = 16
IN_FLIGHT = 4
WORKERS = 2
QUERIES = [
    "retry a failed request with backoff",
    "parse command line arguments",
    "read a configuration file",
    "compress data with zlib",
    "format a date as a string",
    "walk a directory tree",
    "escape html special characters",
    "compute a checksum of a file",
    "open a socket and send bytes",
    "split a path into directory and name",
    "sort items by a key function",
    "decode base64 text",
    "copy a file preserving metadata",
    "wait for a subprocess to finish",
    "match a regular expression",
    "serialize an object to json",
]


def _pick_files(source: Path, target: Path, chunks: int) -> int:
    """Copy .py files from ``source`` until they hold about ``chunks`` definitions."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    estimate = 0
    for path in sorted(source.rglob("*.py")):
        if ".kenning" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        defs = text.count("\ndef ") + text.count("\n    def ") + text.count("\nclass ") + 1
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        estimate += defs
        if estimate >= chunks:
            break
    return estimate


def _start_server(workers: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.embedserver", "--workers", str(workers), "--threads", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        proc.kill()
        raise RuntimeError(f"the embedding test server did not start: {line!r}")
    return proc, int(line.split()[-1])


def _raw_rate(port: int, inputs: list[str], batch: int, in_flight: int) -> float:
    """Inputs per second a bare client gets: ``in_flight`` threads, kept-alive connections."""
    batches = [inputs[i : i + batch] for i in range(0, len(inputs), batch)]
    lock = threading.Lock()
    errors: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if not batches:
                    break
                texts = batches.pop()
            body = json.dumps({"model": "bench", "input": texts}).encode()
            conn.request("POST", "/v1/embeddings", body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            if response.status != 200 or len(json.loads(data)["data"]) != len(texts):
                errors.append(f"HTTP {response.status}")
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(in_flight)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"raw client: {errors[:3]}")
    return len(inputs) / seconds


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(source: Path, work: Path, plan: str) -> dict[str, Any]:
    from kenning.config import Config
    from kenning.embedding.endpoint_config import EndpointSettings
    from kenning.engine import Engine
    from kenning.indexer import embed_input, embed_pending, scan
    from kenning.search import SearchQuery, search

    ws = work / "endpoint-ws"
    _pick_files(source, ws, SIZES[plan])
    proc, port = _start_server(WORKERS)
    try:
        settings = EndpointSettings(
            url=f"http://127.0.0.1:{port}/v1", model="bench", batch_size=BATCH_SIZE, in_flight=IN_FLIGHT
        )
        config = Config(store=work / "endpoint-store", embedding=settings)
        shutil.rmtree(work / "endpoint-store", ignore_errors=True)
        with Engine(ws, config) as engine:
            scan(engine)
            assert engine.db is not None
            rows = engine.db.pending_chunks(10**9)
            inputs = list(
                {key: embed_input(p, h, t)[: settings.max_chars] for _, key, p, h, t in rows}.values()
            )
            # Warm the server (and its graph cache) outside the measure.
            _raw_rate(port, inputs[: BATCH_SIZE * 2], BATCH_SIZE, IN_FLIGHT)
            raw_before = _raw_rate(port, inputs, BATCH_SIZE, IN_FLIGHT)
            report = embed_pending(engine)
            kenning_rate = report.embedded / report.seconds if report.seconds else 0.0
            raw_after = _raw_rate(port, inputs, BATCH_SIZE, IN_FLIGHT)
            status = engine.status()
            if report.unavailable or status.embedded != status.chunks:
                raise RuntimeError(f"indexing through the endpoint did not finish: {report.unavailable}")
            encoder = engine.encoder()
            assert encoder is not None
            embed_ms: list[float] = []
            for q in QUERIES:
                t0 = time.perf_counter()
                encoder.embed_query(q + " ?")  # a form not seen before: an LRU miss
                embed_ms.append((time.perf_counter() - t0) * 1000)
            search_ms: list[float] = []
            lexical_only = 0
            for q in QUERIES:
                t0 = time.perf_counter()
                response = search(engine, SearchQuery(q))
                search_ms.append((time.perf_counter() - t0) * 1000)
                lexical_only += response.lexical_only
            cached_ms: list[float] = []
            for q in QUERIES:
                t0 = time.perf_counter()
                search(engine, SearchQuery(q))
                cached_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    raw = statistics.mean([raw_before, raw_after])
    return {
        "workers": WORKERS,
        "batch_size": BATCH_SIZE,
        "in_flight": IN_FLIGHT,
        "inputs": len(inputs),
        "chunks": status.chunks,
        "raw_rate": [raw_before, raw_after],
        "kenning_rate": kenning_rate,
        "ratio": kenning_rate / raw if raw else float("nan"),
        "query_embed_ms": {"p50": _pct(embed_ms, 0.5), "p95": _pct(embed_ms, 0.95), "n": len(embed_ms)},
        "search_ms": {"p50": _pct(search_ms, 0.5), "p95": _pct(search_ms, 0.95), "n": len(search_ms)},
        "search_cached_ms": {"p50": _pct(cached_ms, 0.5), "p95": _pct(cached_ms, 0.95), "n": len(cached_ms)},
        "lexical_only": lexical_only,
    }


def summary_rows(e: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    ratio = e["ratio"]
    verdict = "met" if ratio >= 0.9 else f"missed by {0.9 - ratio:.2f}"
    return [
        (
            f"endpoint indexing ÷ server's raw rate ({e['inputs']:,} inputs, {e['workers']} workers)",
            f"{ratio:.2f}",
            "≥ 0.9",
            verdict,
        ),
        (
            "  query embedding through the endpoint p50 / p95 (ms)",
            f"{e['query_embed_ms']['p50']:.1f} / {e['query_embed_ms']['p95']:.1f}",
            "",
            "",
        ),
    ]


def markdown(e: dict[str, Any]) -> list[str]:
    raw = e["raw_rate"]
    return [
        "#### Embedding through an OpenAI-compatible endpoint (tests/embedserver.py, the same model)",
        "",
        f"{e['inputs']:,} distinct model inputs ({e['chunks']:,} chunks); the server with {e['workers']}"
        f" workers; batches of {e['batch_size']}, {e['in_flight']} requests in flight.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| server's raw rate, before / after (inputs/s) | {raw[0]:.1f} / {raw[1]:.1f} |",
        f"| kenning's indexing rate through it (inputs/s) | {e['kenning_rate']:.1f} |",
        f"| ratio (target ≥ 0.9) | {e['ratio']:.2f} |",
        f"| query embedding, LRU miss, p50 / p95 (ms) | {e['query_embed_ms']['p50']:.1f} /"
        f" {e['query_embed_ms']['p95']:.1f} |",
        f"| hybrid search incl. query embedding, p50 / p95 (ms) | {e['search_ms']['p50']:.1f} /"
        f" {e['search_ms']['p95']:.1f} |",
        f"| the same queries again (LRU hit), p50 / p95 (ms) | {e['search_cached_ms']['p50']:.1f} /"
        f" {e['search_cached_ms']['p95']:.1f} |",
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.endpoint [smoke|quick|full] [SOURCE]``: this step alone, printed."""
    import tempfile

    from bench.corpus import stdlib_root

    args = argv if argv is not None else sys.argv[1:]
    plan = args[0] if args else "smoke"
    source = Path(args[1]) if len(args) > 1 else stdlib_root()
    with tempfile.TemporaryDirectory(prefix="kenning-bench-endpoint-") as tmp:
        result = measure(source, Path(tmp), plan)
    print(json.dumps(result, indent=1))
    print("\n".join(markdown(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
