"""Incremental indexing: bring the store in line with the files on disk, lexical rows first.

Two phases. ``scan`` discovers, reads and chunks what changed and commits chunks, symbols and
FTS rows in small transactions, so search works (lexically) within seconds. ``embed_pending``
then embeds every chunk whose exact model input has no cached vector, commits the vectors and
adds them to the graph; killed at any moment, it resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kenning.chunking import CHUNKER_VERSION, chunk_source
from kenning.engine import Engine
from kenning.languages import language_for_path
from kenning.lexical import name_parts, split_identifiers
from kenning.store.db import EMBEDDED_THROUGH, NewChunk, NewSymbol
from kenning.workspace import FileEntry, SkipReason, SourceText, discover, read_source

log = logging.getLogger(__name__)

# Commit a scan transaction after this many files or this many seconds, whichever comes first:
# small enough that a kill loses little work, large enough that fsyncs don't dominate.
CHUNKER_VERSION_KEY = "chunker_version"
SCAN_BATCH_FILES = 200
SCAN_BATCH_SECONDS = 0.5
EMBED_BATCH = 128
SAVE_VECTORS_EVERY_S = 30.0
# With defer_save, a pass that added fewer vectors than this leaves the graph file for later
# (the next pass after SAVE_VECTORS_EVERY_S, or close): rewriting the whole file after every
# saved edit cost 0.2-0.4 s at 100k chunks and held up the next edit. A crash in between loses
# nothing: the next start reconciles the older file with the vectors stored in SQLite.
SAVE_VECTORS_MIN_ADDED = 1000

Progress = Callable[["IndexProgress"], None]
ShouldStop = Callable[[], bool]


@dataclass(slots=True)
class IndexProgress:
    phase: str  # "scanning" | "embedding" | "ready"
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    eta_s: float | None = None

    def eta_text(self) -> str:
        """The remaining time as people say it: "40s", "12m", "1.5h"."""
        seconds = self.eta_s or 0.0
        if seconds < 60:
            return f"{seconds:.0f}s"
        if seconds < 3600:
            return f"{seconds / 60:.0f}m"
        return f"{seconds / 3600:.1f}h"


@dataclass(slots=True)
class ScanReport:
    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: int = 0
    files_written: int = 0  # rows written for skipped files (new or changed reason)
    chunks_added: int = 0
    chunks_removed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass(slots=True)
class EmbedReport:
    embedded: int = 0
    cached: int = 0
    cancelled: bool = False
    seconds: float = 0.0


def embed_input(path: str, header: str, text: str) -> str:
    """The exact text the model sees for a chunk: where it lives, then what it is."""
    return f"{path}\n{header}\n{text}" if header else f"{path}\n{text}"


def embed_key(model_input: str) -> bytes:
    return hashlib.blake2b(model_input.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _new_chunks(path: str, source: SourceText, language: str) -> tuple[list[NewChunk], list[NewSymbol]]:
    chunked = chunk_source(path, source.text, language)
    path_words = " ".join(name_parts(path))
    chunks = []
    for c in chunked.chunks:
        idents = split_identifiers(c.text)
        symbol_words = " ".join(name_parts(c.symbol)) if c.symbol else ""
        chunks.append(
            NewChunk(
                start_line=c.start_line,
                end_line=c.end_line,
                kind=c.kind,
                symbol=c.symbol,
                header=c.header,
                text=c.text,
                idents=f"{symbol_words} {path_words} {idents}".strip(),
                embed_key=embed_key(embed_input(path, c.header, c.text)),
            )
        )
    symbols = [
        NewSymbol(
            name=s.name,
            kind=s.kind,
            container=s.container,
            start_line=s.start_line,
            end_line=s.end_line,
            name_line=s.name_line,
            name_col=s.name_col,
        )
        for s in chunked.symbols
    ]
    return chunks, symbols


def scan(
    engine: Engine,
    paths: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> ScanReport:
    """Index what changed on disk: everything (``paths=None``) or just the given relative paths."""
    try:
        return _scan(engine, paths, progress=progress, should_stop=should_stop)
    except BaseException:
        engine.vectors_in_step = False  # committed changes may not have reached the graph
        raise


def _scan(
    engine: Engine,
    paths: Iterable[str] | None,
    *,
    progress: Progress | None,
    should_stop: ShouldStop | None,
) -> ScanReport:
    db = engine.db
    assert db is not None and not engine.read_only
    started = time.monotonic()
    report = ScanReport()
    config = engine.config
    known = db.all_files()
    # Files chunked by another chunker version are chunked again even when unchanged; only
    # a full scan that finishes records the new version.
    rechunk = db.get_meta(CHUNKER_VERSION_KEY) != str(CHUNKER_VERSION)
    if paths is None:
        found = discover(
            engine.root,
            store_dir=engine.store_dir,
            exclude=config.exclude,
            max_file_size=config.max_file_size,
        )
        entries: list[FileEntry] = found.files
        stat_skips = dict(found.skipped)
        present = {e.path for e in entries}
        gone = [row.id for p, row in known.items() if p not in present and p not in stat_skips]
    else:
        entries, stat_skips, gone = _entries_for(engine, paths, known)

    removed_ids: list[int] = []
    added_ids: list[int] = []
    if gone:
        with db.transaction() as conn:
            removed_ids.extend(db.delete_files(conn, gone))
        report.files_deleted = len(gone)

    total = len(entries) + len(stat_skips)
    report.files_seen = total
    if stat_skips:
        with db.transaction() as conn:
            for rel, reason in stat_skips.items():
                _record_skip(engine, conn, rel, str(reason.value), known, removed_ids, report)

    done = len(stat_skips)
    pending = list(entries)
    i = 0
    while i < len(pending):
        if should_stop is not None and should_stop():
            break
        batch_started = time.monotonic()
        with db.transaction() as conn:
            while i < len(pending):
                entry = pending[i]
                i += 1
                done += 1
                _index_file(engine, conn, entry, known, removed_ids, added_ids, report, rechunk)
                if i % SCAN_BATCH_FILES == 0 or time.monotonic() - batch_started > SCAN_BATCH_SECONDS:
                    break
        if _changed(report):
            engine.bump_generation()  # caches (symbols, filters) rebuild only after real changes
        if progress is not None:
            progress(IndexProgress("scanning", files_done=done, files_total=total))
    _apply_to_vectors(engine, removed_ids, added_ids)
    if rechunk and paths is None and i >= len(pending):
        with db.transaction() as conn:
            db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION))
    if _changed(report):
        engine.bump_generation()
    report.seconds = time.monotonic() - started
    return report


def _changed(report: ScanReport) -> bool:
    return bool(report.files_changed or report.files_deleted or report.files_written)


def _entries_for(
    engine: Engine, paths: Iterable[str], known: dict
) -> tuple[list[FileEntry], dict[str, SkipReason], list[int]]:
    """Entries for specific paths: the ones that still belong to the index, and the gone ones."""
    wanted = sorted(set(paths))
    config = engine.config
    # Re-running discovery keeps one definition of "belongs to the index" (ignore rules, store
    # dir, symlinks); it is cheap next to reading and chunking.
    found = discover(
        engine.root,
        store_dir=engine.store_dir,
        exclude=config.exclude,
        max_file_size=config.max_file_size,
    )
    by_path = {e.path: e for e in found.files}
    entries = [by_path[p] for p in wanted if p in by_path]
    skips = {p: found.skipped[p] for p in wanted if p in found.skipped}
    gone = [known[p].id for p in wanted if p in known and p not in by_path and p not in skips]
    return entries, skips, gone


def _record_skip(
    engine: Engine,
    conn,
    rel: str,
    reason: str,
    known: dict,
    removed_ids: list[int],
    report: ScanReport,
    size: int = 0,
    mtime_ns: int = 0,
) -> None:
    db = engine.db
    assert db is not None
    row = known.get(rel)
    report.files_skipped += 1
    report.skipped[reason] = report.skipped.get(reason, 0) + 1
    if row is not None and row.skip_reason == reason and row.size == size:
        return  # already recorded: an unchanged scan writes nothing
    if row is not None and row.skip_reason is None:
        removed_ids.extend(db.delete_files(conn, [row.id]))
    db.upsert_file(
        conn,
        path=rel,
        size=size,
        mtime_ns=mtime_ns,
        content_hash=None,
        language=language_for_path(rel),
        skip_reason=reason,
        line_count=0,
    )
    report.files_written += 1


def _index_file(
    engine: Engine,
    conn,
    entry: FileEntry,
    known: dict,
    removed_ids: list[int],
    added_ids: list[int],
    report: ScanReport,
    rechunk: bool = False,
) -> None:
    db = engine.db
    assert db is not None
    row = known.get(entry.path)
    if (
        not rechunk
        and row is not None
        and row.skip_reason is None
        and row.size == entry.size
        and row.mtime_ns == entry.mtime_ns
    ):
        report.files_unchanged += 1
        return
    source = read_source(entry, max_file_size=engine.config.max_file_size)
    if isinstance(source, SkipReason):
        _record_skip(
            engine,
            conn,
            entry.path,
            str(source.value),
            known,
            removed_ids,
            report,
            entry.size,
            entry.mtime_ns,
        )
        return
    if (
        not rechunk
        and row is not None
        and row.skip_reason is None
        and row.content_hash == source.content_hash
    ):
        db.touch_file(conn, row.id, source.size, source.mtime_ns)
        report.files_unchanged += 1
        return
    language = language_for_path(entry.path)
    try:
        chunks, symbols = _new_chunks(entry.path, source, language)
    except Exception:
        # A chunker bug must cost one file, not the whole index.
        log.exception("chunking %s failed; indexing it as plain text", entry.path)
        chunks, symbols = _new_chunks(entry.path, source, "text")
    file_id = db.upsert_file(
        conn,
        path=entry.path,
        size=source.size,
        mtime_ns=source.mtime_ns,
        content_hash=source.content_hash,
        language=language,
        skip_reason=None,
        line_count=source.text.count("\n") + 1,
    )
    removed, added = db.replace_chunks(conn, file_id, chunks)
    db.replace_symbols(conn, file_id, symbols)
    removed_ids.extend(removed)
    added_ids.extend(added)
    report.files_changed += 1
    report.chunks_added += len(added)
    report.chunks_removed += len(removed)


def _apply_to_vectors(engine: Engine, removed: Sequence[int], added: Sequence[int]) -> None:
    """Mirror chunk removals, and additions whose vector is already cached, in the graph."""
    vectors, db = engine.vectors, engine.db
    if vectors is None or db is None or not engine.model_matches():
        return
    if removed:
        engine.churn += vectors.remove(np.asarray(removed, dtype=np.uint64))
    for start in range(0, len(added), 4096):
        ids, vecs = db.vectors_for(added[start : start + 4096])
        if ids:
            vectors.add(np.asarray(ids, dtype=np.uint64), vecs)


def embed_pending(
    engine: Engine,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    defer_save: bool = False,
) -> EmbedReport:
    """Embed every chunk that has no vector yet; resumable, cancellable between batches.

    The graph file is saved at the end unless ``defer_save`` (a long-running server's small
    jobs) and the pass added little (see ``SAVE_VECTORS_MIN_ADDED``).
    """
    try:
        return _embed_pending(engine, progress, should_stop, defer_save)
    except BaseException:
        engine.vectors_in_step = False  # vectors may be committed but not in the graph
        raise


def _embed_pending(
    engine: Engine, progress: Progress | None, should_stop: ShouldStop | None, defer_save: bool
) -> EmbedReport:
    from kenning.embedding import EmbeddingCancelled

    db = engine.db
    assert db is not None and not engine.read_only
    started = time.monotonic()
    report = EmbedReport()
    encoder = engine.bind_model()
    if encoder is None:
        return report
    engine.prepare_vectors(should_stop)
    vectors = engine.vectors
    if vectors is None:
        return report
    # Chunks up to the recorded id all have vectors: on an unchanged index this is one short
    # query instead of a look-up per chunk (0.16 s at 29k chunks, on every job and restart).
    through = int(db.get_meta(EMBEDDED_THROUGH) or 0)
    rows = db.pending_chunks(EMBED_BATCH, after_id=through)
    if not rows:
        _record_embedded_through(engine, through)
        if defer_save and time.monotonic() - engine.vectors_saved_at > SAVE_VECTORS_EVERY_S:
            engine.save_vectors()  # removals by the scan, if any (a no-op when unchanged)
        report.seconds = time.monotonic() - started
        return report
    counts = db.counts()
    total_pending = counts["pending"]
    done_before = counts["embedded"]
    last_save = time.monotonic()
    done = 0
    while True:
        if should_stop is not None and should_stop():
            report.cancelled = True
            break
        if not rows:
            rows = db.pending_chunks(EMBED_BATCH, after_id=through)
            if not rows:
                break
        through = rows[-1][0]
        inputs: dict[bytes, str] = {}
        for _cid, key, path, header, text in rows:
            inputs.setdefault(key, embed_input(path, header, text))
        rows = []
        keys = list(inputs)
        try:
            vecs = encoder.embed_documents([inputs[k] for k in keys], should_stop=should_stop)
        except EmbeddingCancelled:
            report.cancelled = True
            break
        with db.transaction() as conn:
            db.put_embeddings(conn, keys, vecs)
            id_keys = db.chunk_ids_for_keys(keys, conn)
            # Every chunk up to this batch's last one now has a vector: the walk is in id order
            # from the mark and took every pending chunk on its way.
            db.set_meta(conn, EMBEDDED_THROUGH, str(through))
        index_of = {k: i for i, k in enumerate(keys)}
        ids = np.asarray([cid for cid, _ in id_keys], dtype=np.uint64)
        vectors.add(ids, vecs[[index_of[k] for _, k in id_keys]])
        done += len(id_keys)
        report.embedded += len(keys)
        if progress is not None:
            elapsed = time.monotonic() - started
            rate = done / elapsed if elapsed > 0 else 0.0
            left = max(total_pending - done, 0)
            progress(
                IndexProgress(
                    "embedding",
                    chunks_done=done_before + done,
                    chunks_total=done_before + total_pending,
                    eta_s=(left / rate) if rate > 0 else None,
                )
            )
        if time.monotonic() - last_save > SAVE_VECTORS_EVERY_S:
            engine.save_vectors()
            last_save = time.monotonic()
    if not report.cancelled:
        _record_embedded_through(engine, int(db.get_meta(EMBEDDED_THROUGH) or 0))
    if (
        report.cancelled
        or (done and not defer_save)
        or done >= SAVE_VECTORS_MIN_ADDED
        or (time.monotonic() - engine.vectors_saved_at > SAVE_VECTORS_EVERY_S)
    ):
        engine.save_vectors()
    report.seconds = time.monotonic() - started
    return report


def _record_embedded_through(engine: Engine, recorded: int) -> None:
    """After a complete pass every chunk has a vector: remember the highest chunk id (written
    only when it moved, so an unchanged index writes nothing)."""
    db = engine.db
    assert db is not None
    top = int(db.reader().execute("SELECT max(id) FROM chunks").fetchone()[0] or 0)
    if top != recorded:
        with db.transaction() as conn:
            db.set_meta(conn, EMBEDDED_THROUGH, str(top))


def index_all(
    engine: Engine,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    embed: bool = True,
) -> tuple[ScanReport, EmbedReport]:
    engine.state = "scanning"
    scan_report = scan(engine, progress=progress, should_stop=should_stop)
    embed_report = EmbedReport()
    if embed and not (should_stop is not None and should_stop()):
        engine.state = "embedding"
        embed_report = embed_pending(engine, progress=progress, should_stop=should_stop)
    engine.state = "ready" if not embed_report.cancelled else "embedding"
    return scan_report, embed_report
