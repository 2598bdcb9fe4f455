"""Measure 1a: the model alone — chunks per second of each graph, and on the index's own inputs.

Reuses ``bench/model_throughput.py`` (code windows of exactly N tokens, ``measure``). The rows
interleave the variants within every repeat so a noisy neighbour slows both alike.
"""

from __future__ import annotations

import random
import shutil
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.model_throughput import code_windows, measure


def load_encoders(threads: int = 0) -> dict[str, Any]:
    from kenning.embedding import Encoder

    return {v: Encoder.load(variant=v, threads=threads) for v in ("original", "optimized")}


def graph_rows(
    encoders: dict[str, Any], *, tokens: Sequence[int], batches: Sequence[int], texts: int, repeats: int
) -> list[dict[str, Any]]:
    """chunks/s per (tokens, batch, graph), medians; batch "default" is how the encoder runs
    by default (the optimised graph one text per call, the original under a token budget)."""
    windows = {n: code_windows(encoders["original"], texts, n) for n in tokens}
    defaults = {v: (e.token_budget, e.max_batch) for v, e in encoders.items()}
    for e in encoders.values():
        e.embed_documents(windows[tokens[0]][:4])  # lazy kernel set-up outside the timings
    samples: dict[tuple[int, str, str], list[float]] = {}
    try:
        for _ in range(repeats):
            for n in tokens:
                for b in ["default", *map(str, batches)]:
                    for variant, e in encoders.items():
                        if b == "default":
                            e.token_budget, e.max_batch = defaults[variant]
                        else:
                            e.token_budget, e.max_batch = int(b) * n, int(b)
                        got = measure(e, windows[n], repeats=1, warmup=False)
                        samples.setdefault((n, b, variant), []).append(got["chunks_per_s"])
    finally:
        for v, e in encoders.items():
            e.token_budget, e.max_batch = defaults[v]
    return [
        {
            "tokens": n,
            "batch": b,
            "original": statistics.median(samples[(n, b, "original")]),
            "optimized": statistics.median(samples[(n, b, "optimized")]),
        }
        for n in tokens
        for b in ["default", *map(str, batches)]
    ]


def index_inputs(root: Path, store: Path) -> list[str]:
    """The exact model inputs kenning makes of ``root`` (a lexical-only scan into ``store``)."""
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.indexer import embed_input, scan

    with Engine(root, Config(store=store)) as engine:
        scan(engine)
        assert engine.db is not None
        rows = (
            engine.db.reader()
            .execute(
                "SELECT f.path, c.header, c.text FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
            )
            .fetchall()
        )
    return [embed_input(p, h, t) for p, h, t in rows]


def inputs_rate(
    encoder: Any, inputs: Sequence[str], *, sample: int, repeats: int, batch: int = 128, seed: int = 5
) -> dict[str, float]:
    """chunks/s embedding a seeded sample of the index's inputs the way the indexer calls the
    encoder (``batch`` texts per ``embed_documents``); median and spread of ``repeats``."""
    rng = random.Random(seed)
    texts = rng.sample(list(inputs), min(sample, len(inputs)))
    encoder.embed_documents(texts[:8])
    rates, cpu = [], []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), batch):
            encoder.embed_documents(texts[i : i + batch])
        rates.append(len(texts) / (time.perf_counter() - started))
        cpu.append((time.process_time() - cpu_started) / len(texts))
    # CPU seconds per chunk (all of onnxruntime's threads): what contention cannot inflate much.
    return {
        "chunks": len(texts),
        "median": statistics.median(rates),
        "min": min(rates),
        "max": max(rates),
        "cpu_per_chunk": statistics.median(cpu),
    }


def token_stats(encoder: Any, inputs: Sequence[str]) -> dict[str, float]:
    counts = encoder.count_tokens(list(inputs))
    capped = [min(c, encoder.max_tokens) for c in counts]
    return {
        "mean_tokens": statistics.fmean(capped),
        "median_tokens": statistics.median(capped),
        "over_limit_share": sum(c > encoder.max_tokens for c in counts) / max(len(counts), 1),
    }


def pipeline_ab(
    encoder: Any, source: Path, work: Path, *, target_chunks: int, repeats: int, seed: int = 8
) -> dict[str, Any]:
    """Indexing (scan + embed, kenning's own pipeline, in process) against the bare model on
    exactly the same chunks.

    The workspace is a seeded sample of ``source``'s files holding about ``target_chunks``
    chunks; each indexing run starts from an empty store (embedding cache included). ``ratio``
    is the share of each run's wall time spent inside the model's calls (the model's own rate
    over the pipeline's, measured on the very same calls, so the machine's load cannot tilt it);
    ``ratio_alternated`` compares with separate bare-model runs over the same inputs (in the
    indexer's batches of 128) alternated with the indexing runs, which on a shared machine
    swings by +-15 % from run to run.
    """
    from bench import seeded
    from kenning.config import Config
    from kenning.engine import Engine
    from kenning.indexer import EMBED_BATCH, embed_input, index_all

    counts = seeded.chunk_counts(source / ".kenning" / "kenning.sqlite3")
    ws = work / "ab-workspace"
    shutil.rmtree(ws, ignore_errors=True)  # a kept --workdir holds the last run's
    seeded.write_sample(source, ws, seeded.sample_files(counts, target_chunks, seed=seed))
    pipeline: list[float] = []
    raw: list[float] = []
    in_model: list[float] = []  # share of each indexing run spent inside the model's calls
    inputs: list[str] = []
    chunks = 0
    real = encoder.embed_documents
    spent = [0.0]

    def timed(texts: Sequence[str], should_stop: Any = None) -> Any:
        started = time.perf_counter()
        try:
            return real(texts, should_stop=should_stop)
        finally:
            spent[0] += time.perf_counter() - started

    for i in range(repeats):
        store = work / f"ab-store-{i}"
        # From an empty store, every time: a store a kept --workdir held from the last run
        # embedded nothing (a ratio of 0.00 in the run of 2026-12-02 17:33).
        shutil.rmtree(store, ignore_errors=True)
        spent[0] = 0.0
        encoder.embed_documents = timed
        started = time.perf_counter()
        try:
            with Engine(ws, Config(store=store), encoder_factory=lambda _c: encoder) as engine:
                index_all(engine)
                assert engine.db is not None
                chunks = engine.status().embedded
                if not inputs:
                    inputs = [
                        embed_input(p, h, t)
                        for p, h, t in engine.db.reader().execute(
                            "SELECT f.path, c.header, c.text FROM chunks c JOIN files f"
                            " ON f.id = c.file_id ORDER BY c.id"
                        )
                    ]
            total = time.perf_counter() - started
        finally:
            encoder.embed_documents = real
        pipeline.append(chunks / total)
        in_model.append(spent[0] / total)
        started = time.perf_counter()
        for j in range(0, len(inputs), EMBED_BATCH):
            encoder.embed_documents(inputs[j : j + EMBED_BATCH])
        raw.append(len(inputs) / (time.perf_counter() - started))
    ratios = [p / r for p, r in zip(pipeline, raw, strict=True)]
    return {
        "chunks": chunks,
        "repeats": repeats,
        "pipeline": statistics.median(pipeline),
        "raw": statistics.median(raw),
        "ratio_alternated": statistics.median(ratios),
        "ratios": ratios,
        "ratio": statistics.median(in_model),
        "in_model": in_model,
    }
