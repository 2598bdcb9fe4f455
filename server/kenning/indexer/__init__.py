"""Incremental indexing: bring the store in line with the files on disk, lexical rows first.

Two phases, run in order by :func:`update` (``pipeline``), the one sequence every caller runs.
``scan`` (``scanner``) discovers, reads and chunks what changed and commits chunks, symbols and FTS
rows in small transactions, so search works (lexically) within seconds. ``embed_pending``
(``embedder``) then embeds every chunk whose exact model input has no cached vector, the working
set's first (``working_set``), commits the vectors and adds them to the graph; killed at any
moment, it resumes where it stopped. ``chunks`` turns a file's text into rows; ``reports`` holds
what a run says about itself.

The submodules are named for the job, not the function (``scanner`` holds ``scan``), so that
``kenning.indexer.scan`` stays the function these re-exports give every existing import.
"""

from __future__ import annotations

from kenning.indexer.chunks import embed_input, embed_key
from kenning.indexer.embedder import (
    EMBED_BATCH,
    SAVE_VECTORS_EVERY_S,
    SAVE_VECTORS_MIN_ADDED,
    SHARED_ORIGIN_PACK,
    embed_pending,
    shared_cache,
)
from kenning.indexer.pipeline import index_all, update
from kenning.indexer.reports import (
    ORIGIN_COMPUTED,
    ORIGIN_KEYS,
    ORIGIN_PACK,
    ORIGIN_SHARED,
    ORIGIN_STORE,
    EmbedReport,
    IndexProgress,
    Progress,
    ScanReport,
)
from kenning.indexer.scanner import CHUNKER_VERSION_KEY, scan
from kenning.indexer.working_set import FirstPaths

__all__ = [
    "CHUNKER_VERSION_KEY",
    "EMBED_BATCH",
    "ORIGIN_COMPUTED",
    "ORIGIN_KEYS",
    "ORIGIN_PACK",
    "ORIGIN_SHARED",
    "ORIGIN_STORE",
    "SAVE_VECTORS_EVERY_S",
    "SAVE_VECTORS_MIN_ADDED",
    "SHARED_ORIGIN_PACK",
    "EmbedReport",
    "FirstPaths",
    "IndexProgress",
    "Progress",
    "ScanReport",
    "embed_input",
    "embed_key",
    "embed_pending",
    "index_all",
    "scan",
    "shared_cache",
    "update",
]
