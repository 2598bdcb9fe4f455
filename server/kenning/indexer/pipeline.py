"""The one indexing sequence every caller runs: scan, then the embedding pass, then pruning the
embedding cache."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kenning.engine import Engine
from kenning.indexer.embedder import embed_pending
from kenning.indexer.reports import EmbedReport, Progress, ScanReport
from kenning.indexer.scanner import scan
from kenning.types import ShouldStop


def update(
    engine: Engine,
    paths: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    embed: bool = True,
    exclude_dirs: Sequence[str] = (),
    defer_save: bool = False,
) -> tuple[ScanReport, EmbedReport]:
    """Bring the index in line with the disk: scan (everything, or ``paths``), then the embedding
    pass, then drop cached vectors nothing uses once they pile up. The one sequence every caller
    runs (the CLI, tests, benchmarks); ``engine.state`` follows it. ``embed=False`` stops after
    the scan (lexical only)."""
    engine.state = "scanning"
    scan_report = scan(engine, paths, progress=progress, should_stop=should_stop, exclude_dirs=exclude_dirs)
    embed_report = EmbedReport()
    if embed and not (should_stop is not None and should_stop()):
        engine.state = "embedding"
        embed_report = embed_pending(
            engine, progress=progress, should_stop=should_stop, defer_save=defer_save
        )
        engine.prune_embedding_cache()
    engine.state = "ready" if not embed_report.cancelled else "embedding"
    return scan_report, embed_report


# The old name, for branches and scripts written before update() (remove once none use it).
index_all = update
