"""The one indexing sequence every caller runs: scan, then the embedding pass, then pruning the
embedding cache; the index's state moved through it (``kenning.state``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kenning.engine import Engine
from kenning.indexer.embedder import embed_pending
from kenning.indexer.reports import EmbedReport, Progress, ScanReport
from kenning.indexer.scanner import scan
from kenning.indexer.working_set import FirstPaths
from kenning.types import ShouldStop

# Chunk removals by scans of some paths (saves) before the embedding cache is counted again.
PRUNE_AFTER_REMOVALS = 1_000


def update(
    engine: Engine,
    paths: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    embed: bool = True,
    exclude_dirs: Sequence[str] = (),
    defer_save: bool = False,
    first: FirstPaths | None = None,
) -> tuple[ScanReport, EmbedReport]:
    """Bring the index in line with the disk: scan (everything, or ``paths``), then the embedding
    pass (``first``: the files it takes first), then drop cached vectors nothing uses once they
    pile up. The one sequence every caller runs (the CLI, the folder worker, tests, benchmarks).
    ``embed=False`` stops after the scan (lexical only).

    ``engine.states`` follows it: each phase's start is a transition its listeners hear
    (``Transition.began``), then the end, ``ready`` or ``embedding`` while chunks still wait
    (cancelled, or the model or endpoint unavailable); ``progress`` hears the steps within.
    """
    states = engine.states
    states.begin_scan()
    scan_report = scan(engine, paths, progress=progress, should_stop=should_stop, exclude_dirs=exclude_dirs)
    if scan_report.note:
        states.note(scan_report.note)  # an empty index says why (status, CLI)
    if should_stop is not None and should_stop():
        assert engine.db is not None
        states.finish(pending=engine.db.counts()["pending"] > 0)
        return scan_report, EmbedReport()
    embed_report = EmbedReport()
    if embed:
        states.begin_embedding()
        embed_report = embed_pending(
            engine, progress=progress, should_stop=should_stop, defer_save=defer_save, first=first
        )
        # Only removed chunks leave vectors nothing uses, so an unchanged run (every restart)
        # does not count the cache: that walks two whole indexes (~0.1 s at 180k chunks, about
        # half a second per million). A save removes a chunk or two: its count waits until
        # removals add up, or the next full scan.
        engine.removed_since_prune += scan_report.chunks_removed
        removed = engine.removed_since_prune
        if removed and (paths is None or removed >= PRUNE_AFTER_REMOVALS):
            engine.removed_since_prune = 0
            engine.prune_embedding_cache()
    states.finish(pending=embed_report.cancelled or embed_report.unavailable is not None)
    return scan_report, embed_report


# The old name, for branches and scripts written before update() (remove once none use it).
index_all = update
