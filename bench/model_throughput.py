"""Embedding throughput: chunks per second of the original and the optimised graph.

Texts are real code windows cut from the Python standard library and trimmed to exactly N
tokens (special tokens included), so every batch is full-width and the numbers compare
graphs, not padding. Variants run interleaved within each repeat, so a noisy neighbour
slows both alike; the table shows medians.

    python bench/model_throughput.py [--tokens 128,256] [--batches 1,8,16,32] [--repeats 5]
    python bench/model_throughput.py --rss optimized     # RSS after load and after 2,000 chunks

Batch 1 is how the encoder runs the optimised graph (one text per call keeps its int8
vectors independent of batch-mates); the other rows show what batching would give.

Importing this module does nothing; :func:`measure` is the piece the benchmark suite calls.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kenning.embedding import Encoder

__all__ = ["code_windows", "main", "measure", "rss_mib", "rss_report"]


def measure(encoder: Encoder, texts: Sequence[str], repeats: int, *, warmup: bool = True) -> dict[str, Any]:
    """Embed ``texts`` ``repeats`` times (after a warm-up pass); median and best rates."""
    if not texts or repeats < 1:
        raise ValueError("measure needs texts and at least one repeat")
    if warmup:
        encoder.embed_documents(texts)  # first runs pay for lazy kernel setup
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        encoder.embed_documents(texts)
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    return {
        "model_id": encoder.model_id,
        "variant": encoder.variant,
        "chunks": len(texts),
        "repeats": repeats,
        "token_budget": encoder.token_budget,
        "seconds_median": median,
        "chunks_per_s": len(texts) / median,
        "chunks_per_s_best": len(texts) / min(seconds),
    }


def code_windows(encoder: Encoder, count: int, tokens: int, *, seed: int = 0) -> list[str]:
    """``count`` stdlib code windows that each encode to exactly ``tokens`` tokens."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(encoder.spec.tokenizer_path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    if not files:
        raise RuntimeError("no standard library sources found")
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(count * 50):
        if len(texts) == count:
            break
        lines = rng.choice(files).read_text(encoding="utf-8", errors="replace").splitlines()
        if len(lines) < 120:
            continue
        start = rng.randrange(0, len(lines) - 100)
        window = "\n".join(lines[start : start + 100])
        encoding = tokenizer.encode(window)
        body = tokens - 2  # [CLS] and [SEP]
        if len(encoding.ids) - 2 < body:
            continue
        # Cut at the end of the body's last token; re-tokenizing a cut word can change its
        # pieces, so keep only cuts that come out exact.
        text = window[: encoding.offsets[body][1]]
        if len(tokenizer.encode(text).ids) == tokens:
            texts.append(text)
    if len(texts) < count:
        raise RuntimeError(f"found only {len(texts)} windows of {tokens} tokens")
    return texts


def rss_mib() -> float:
    """This process's resident set size in MiB (Linux /proc; ru_maxrss elsewhere is peak)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def rss_report(encoder_factory: Any, chunks: int = 2000, *, seed: int = 0) -> dict[str, float]:
    """RSS (MiB) before loading, after loading and after embedding ``chunks`` code windows of
    mixed length (16-256 tokens), embedded 100 at a time as the indexer does."""
    before = rss_mib()
    encoder = encoder_factory()
    loaded = rss_mib()
    rng = random.Random(seed)
    lengths = [16, 32, 64, 128, 192, 256]
    texts: list[str] = []
    pools = {n: code_windows(encoder, 40, n, seed=seed + n) for n in lengths}
    while len(texts) < chunks:
        texts.append(rng.choice(pools[rng.choice(lengths)]))
    peak_after_batches = loaded
    started = time.perf_counter()
    for i in range(0, chunks, 100):
        encoder.embed_documents(texts[i : i + 100])
        peak_after_batches = max(peak_after_batches, rss_mib())
    return {
        "rss_start_mib": before,
        "rss_after_load_mib": loaded,
        "rss_after_embedding_mib": rss_mib(),
        "rss_max_between_batches_mib": peak_after_batches,
        "chunks": chunks,
        "seconds": time.perf_counter() - started,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model directory (default: packaged)")
    parser.add_argument("--tokens", default="128,256", help="chunk lengths in tokens")
    parser.add_argument("--batches", default="1,8,16,32", help="batch sizes")
    parser.add_argument("--texts", type=int, default=64, help="chunks per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads (0: all)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--rss",
        choices=("original", "optimized"),
        default=None,
        help="instead: measure RSS of one variant (run each in its own process)",
    )
    args = parser.parse_args(argv)
    tokens = [int(t) for t in args.tokens.split(",")]
    batches = [int(b) for b in args.batches.split(",")]

    from kenning.embedding import Encoder

    if args.rss:
        report = rss_report(lambda: Encoder.load(args.model, variant=args.rss, threads=args.threads))
        print(
            json.dumps({"variant": args.rss, **report})
            if args.json
            else "\n".join(f"{k}: {v:.1f}" for k, v in report.items())
        )
        return 0
    encoders = {
        v: Encoder.load(args.model, variant=v, threads=args.threads) for v in ("original", "optimized")
    }
    texts = {n: code_windows(encoders["original"], args.texts, n) for n in tokens}
    for encoder in encoders.values():
        encoder.embed_documents(texts[tokens[0]][: batches[0]])  # warm-up
    rows: dict[tuple[int, int, str], list[float]] = {}
    for _ in range(args.repeats):
        for n in tokens:
            for b in batches:
                for variant, encoder in encoders.items():
                    # Exactly b chunks of n tokens per onnxruntime call.
                    encoder.token_budget = b * n
                    encoder.max_batch = b
                    result = measure(encoder, texts[n], repeats=1, warmup=False)
                    rows.setdefault((n, b, variant), []).append(result["chunks_per_s"])
    table = [
        {
            "tokens": n,
            "batch": b,
            "original": statistics.median(rows[(n, b, "original")]),
            "optimized": statistics.median(rows[(n, b, "optimized")]),
            # best of the repeats: what a quiet machine gives (others slow it, never speed it)
            "original_best": max(rows[(n, b, "original")]),
            "optimized_best": max(rows[(n, b, "optimized")]),
        }
        for n in tokens
        for b in batches
    ]
    if args.json:
        print(json.dumps({"threads": args.threads, "texts": args.texts, "rows": table}))
        return 0
    print(f"chunks/s, {args.texts} chunks, {args.threads} threads, median (best) of {args.repeats}")
    print(f"{'tokens':>6} {'batch':>5} {'original':>15} {'optimized':>15} {'speedup':>7}")
    for row in table:
        speedup = row["optimized"] / row["original"]
        original = f"{row['original']:.1f} ({row['original_best']:.1f})"
        optimized = f"{row['optimized']:.1f} ({row['optimized_best']:.1f})"
        print(f"{row['tokens']:>6} {row['batch']:>5} {original:>15} {optimized:>15} {speedup:>6.2f}x")
    for variant, encoder in encoders.items():
        print(f"{variant}: {encoder.model_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
