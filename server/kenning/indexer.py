"""Incremental indexing: bring the store in line with the files on disk, lexical rows first.

Two phases. ``scan`` discovers, reads and chunks what changed and commits chunks, symbols and
FTS rows in small transactions, so search works (lexically) within seconds. ``embed_pending``
then embeds every chunk whose exact model input has no cached vector, commits the vectors and
adds them to the graph; killed at any moment, it resumes where it stopped.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kenning.chunking import CHUNKER_VERSION, chunk_source
from kenning.engine import Engine
from kenning.languages import language_for_path
from kenning.lexical import name_parts, split_identifiers
from kenning.store.rows import FileRow, NewChunk, NewSymbol
from kenning.store.schema import EMBEDDED_THROUGH
from kenning.types import ShouldStop
from kenning.workspace import (
    FileEntry,
    SkipReason,
    SourceText,
    discover,
    path_to_text,
    read_source,
)

if TYPE_CHECKING:
    from kenning.embedding.backend import EmbeddingBackend
    from kenning.embedding.shared import ModelCache

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
PACK_IMPORTED = "pack_imported"  # meta: path, size, mtime and model of the last imported pack
SHARED_ORIGIN_PACK = 1  # kenning.embedding.shared.ORIGIN_PACK, without importing it eagerly

# Meta counters of where the store's vectors came from, since its model was bound: chunks that
# reused a vector the store held, vectors computed, taken from the shared cache, from a pack.
ORIGIN_STORE = "origin_store"
ORIGIN_COMPUTED = "origin_computed"
ORIGIN_SHARED = "origin_shared_cache"
ORIGIN_PACK = "origin_pack"
ORIGIN_KEYS = (ORIGIN_COMPUTED, ORIGIN_STORE, ORIGIN_SHARED, ORIGIN_PACK)

# Reasons found by reading a file's content: while its size and mtime stay the same, reading it
# again would give the same answer (400 binary files of 2 MB cost 838 MB of reads per no-op scan).
CONTENT_SKIPS = frozenset({SkipReason.BINARY.value, SkipReason.GENERATED.value})

Progress = Callable[["IndexProgress"], None]


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
    chunks_reused: int = 0  # added chunks whose vector the store already held (no model call)
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    note: str | None = None  # why the scan found nothing, when discovery can tell


@dataclass(slots=True)
class EmbedReport:
    embedded: int = 0  # vectors computed by the model in this pass
    cached: int = 0
    from_shared: int = 0  # vectors taken from the shared cache (computed by another store)
    from_pack: int = 0  # ... of which a pack had brought there
    pack_imported: int = 0  # vectors a pack import added to the shared cache in this pass
    cancelled: bool = False
    seconds: float = 0.0
    # The embedding endpoint is down: what failed, and when to try again (time.time()).
    # Vectors committed before it went down stay; the next pass resumes after them.
    unavailable: str | None = None
    retry_at: float | None = None


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
    exclude_dirs: Sequence[str] = (),
) -> ScanReport:
    """Index what changed on disk: everything (``paths=None``) or just the given relative paths
    (files or directories, as discovery gives them: surrogate-escaped when not UTF-8).

    ``exclude_dirs`` are directories below the root that another index owns (a workspace
    folder nested in this one): their files are left out, and dropped if indexed before.
    """
    try:
        return _scan(engine, paths, progress=progress, should_stop=should_stop, exclude_dirs=exclude_dirs)
    except BaseException:
        engine.vectors_in_step = False  # committed changes may not have reached the graph
        raise


def _scan(
    engine: Engine,
    paths: Iterable[str] | None,
    *,
    progress: Progress | None,
    should_stop: ShouldStop | None,
    exclude_dirs: Sequence[str] = (),
) -> ScanReport:
    db = engine.db
    assert db is not None and not engine.read_only
    started = time.monotonic()
    report = ScanReport()
    config = engine.config
    known = db.all_files()
    if paths is not None:
        paths = list(paths)
        if any(p.strip("/") in ("", ".") for p in paths):
            paths = None  # an event for the root directory itself: everything may have changed
    # Files chunked by another chunker version are chunked again even when unchanged; only
    # a full scan that finishes records the new version.
    rechunk = db.get_meta(CHUNKER_VERSION_KEY) != str(CHUNKER_VERSION)
    if paths is None:
        found = discover(
            engine.root,
            store_dir=engine.store_dir,
            exclude=config.exclude,
            max_file_size=config.max_file_size,
            exclude_dirs=exclude_dirs,
        )
        entries: list[FileEntry] = found.files
        # Stored paths are text (see workspace.path_to_text); discovery's are file names.
        stat_skips = {path_to_text(p): r for p, r in found.skipped.items()}
        present = {path_to_text(e.path) for e in entries}
        gone = [row.id for p, row in known.items() if p not in present and p not in stat_skips]
        report.note = found.note
        if found.note and not entries:
            log.info("%s: no files to index: %s", engine.root, found.note)
    else:
        entries, stat_skips, gone = _entries_for(engine, paths, known, exclude_dirs)

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
    if added_ids:
        report.chunks_reused = db.count_embedded(added_ids)
        if report.chunks_reused:
            with db.transaction() as conn:
                db.add_to_meta(conn, {ORIGIN_STORE: report.chunks_reused})
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
    engine: Engine, paths: Iterable[str], known: dict[str, FileRow], exclude_dirs: Sequence[str] = ()
) -> tuple[list[FileEntry], dict[str, SkipReason], list[int]]:
    """Entries for specific paths (files or directories): the ones that still belong to the
    index, the ones skipped, and the stored files at or below them that are gone.

    Only these paths are judged (against the same ignore rules, nested ``.gitignore`` files
    and ``.kenningignore`` included), not the whole tree: a save in a 50k-file workspace costs
    a few stats, not a full discovery.
    """
    wanted = sorted(set(paths))
    config = engine.config
    found = discover(
        engine.root,
        store_dir=engine.store_dir,
        exclude=config.exclude,
        max_file_size=config.max_file_size,
        exclude_dirs=exclude_dirs,
        paths=wanted,
    )
    skips = {path_to_text(p): r for p, r in found.skipped.items()}
    present = {path_to_text(e.path) for e in found.files} | set(skips)
    wanted_text = {path_to_text(p).strip("/") for p in wanted}
    affected = [known[w] for w in wanted_text if w in known]
    # A path the index does not hold as a file may be a directory it holds files under (a
    # deleted or renamed directory): those are affected too. One range query on the unique
    # path index each, instead of testing every stored path (0.4 s at 50k files).
    below = [w for w in wanted_text if w not in known]
    if below:
        assert engine.db is not None
        conn = engine.db.reader()
        for w in below:
            for (path,) in conn.execute(
                "SELECT path FROM files WHERE path > ? AND path < ?", (w + "/", w + "0")
            ):
                if path in known:
                    affected.append(known[path])
    gone = [row.id for row in affected if row.path not in present]
    return found.files, skips, gone


def _record_skip(
    engine: Engine,
    conn: sqlite3.Connection,
    rel: str,
    reason: str,
    known: dict[str, FileRow],
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
    if row is not None and row.skip_reason == reason and row.size == size and row.mtime_ns == mtime_ns:
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
    conn: sqlite3.Connection,
    entry: FileEntry,
    known: dict[str, FileRow],
    removed_ids: list[int],
    added_ids: list[int],
    report: ScanReport,
    rechunk: bool = False,
) -> None:
    db = engine.db
    assert db is not None
    path = path_to_text(entry.path)
    row = known.get(path)
    if (
        row is not None
        # a file skipped for its content stays skipped whatever the chunker's version
        and (row.skip_reason in CONTENT_SKIPS or (row.skip_reason is None and not rechunk))
        and row.size == entry.size
        and row.mtime_ns == entry.mtime_ns
    ):
        if row.skip_reason is not None:  # skipped for its content, which has not changed
            report.files_skipped += 1
            report.skipped[row.skip_reason] = report.skipped.get(row.skip_reason, 0) + 1
        else:
            report.files_unchanged += 1
        return
    source = read_source(entry, max_file_size=engine.config.max_file_size)
    if isinstance(source, SkipReason):
        _record_skip(
            engine,
            conn,
            path,
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
    language = language_for_path(path)
    try:
        chunks, symbols = _new_chunks(path, source, language)
    except Exception:
        # A chunker bug must cost one file, not the whole index.
        log.exception("chunking %s failed; indexing it as plain text", path)
        chunks, symbols = _new_chunks(path, source, "text")
    file_id = db.upsert_file(
        conn,
        path=path,
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
    from kenning.embedding.backend import EmbeddingUnavailable

    db = engine.db
    assert db is not None and not engine.read_only
    started = time.monotonic()
    report = EmbedReport()
    encoder = engine.bind_model()
    if encoder is None:
        if engine.embed_outage is not None:
            report.unavailable = str(engine.embed_outage)
            report.retry_at = engine.embed_outage.retry_at
        return report
    engine.prepare_vectors(should_stop)
    vectors = engine.vectors
    if vectors is None:
        return report
    # Chunks up to the recorded id all have vectors: on an unchanged index this is one short
    # query instead of a look-up per chunk (0.16 s at 29k chunks, on every job and restart).
    through = int(db.get_meta(EMBEDDED_THROUGH) or 0)
    # An endpoint takes one request's worth per batch, so each answer is committed on arrival.
    batch_rows = int(getattr(encoder, "preferred_batch", EMBED_BATCH))
    rows = db.pending_chunks(batch_rows, after_id=through)
    if not rows:
        _record_embedded_through(engine, through)
        if defer_save and time.monotonic() - engine.vectors_saved_at > SAVE_VECTORS_EVERY_S:
            engine.save_vectors()  # removals by the scan, if any (a no-op when unchanged)
        report.seconds = time.monotonic() - started
        return report
    shared = shared_cache(engine, encoder)
    if shared is not None:
        report.pack_imported = _import_configured_pack(engine, shared)
    elif engine.config.import_pack:
        log.warning("index pack %s not imported: the shared cache is off", engine.config.import_pack)
    counts = db.counts()
    total_pending = counts["pending"]
    done_before = counts["embedded"]
    last_save = time.monotonic()
    done = 0
    # A backend that answers in the background (an endpoint) gets the next batches while the
    # first is in flight; the local model computes each batch when it is asked (depth 1).
    submit = getattr(encoder, "submit_documents", None)
    depth = max(1, int(getattr(encoder, "pipeline_depth", 1))) if submit is not None else 1
    in_flight: collections.deque[_Batch] = collections.deque()
    in_flight_keys: set[bytes] = set()
    fetched_through = through
    try:
        while True:
            if should_stop is not None and should_stop():
                report.cancelled = True
                break
            while len(in_flight) < depth:
                if not rows:
                    rows = db.pending_chunks(batch_rows, after_id=fetched_through)
                    if not rows:
                        break
                fetched_through = rows[-1][0]
                inputs: dict[bytes, str] = {}
                for _cid, key, path, header, text in rows:
                    # A key already on its way is written with all its chunks by that batch.
                    if key not in in_flight_keys:
                        inputs.setdefault(key, embed_input(path, header, text))
                rows = []
                keys = list(inputs)
                # What the shared cache holds is not computed again (another worktree, a pack).
                hits = shared.lookup(keys) if shared is not None and keys else {}
                missing = [k for k in keys if k not in hits]
                texts = [inputs[k] for k in missing]
                in_flight_keys.update(keys)
                if submit is not None:
                    job = submit(texts, should_stop) if missing else None
                    in_flight.append(_Batch(fetched_through, keys, hits, missing, job, None))
                else:
                    in_flight.append(_Batch(fetched_through, keys, hits, missing, None, texts))
            if not in_flight:
                break
            batch = in_flight.popleft()
            if batch.job is not None:
                computed = batch.job.result()
            elif batch.texts:
                computed = encoder.embed_documents(batch.texts, should_stop=should_stop)
            else:
                computed = np.empty((0, encoder.dim), dtype=np.float32)
            in_flight_keys.difference_update(batch.keys)
            keys, missing = batch.keys, batch.missing
            row_of = {k: i for i, k in enumerate(keys)}
            vecs = np.empty((len(keys), encoder.dim), dtype=np.float32)
            for i, k in enumerate(missing):
                vecs[row_of[k]] = computed[i]
            from_pack = 0
            for k, (blob, origin) in batch.hits.items():
                vecs[row_of[k]] = np.frombuffer(blob, dtype="<f2")
                from_pack += origin == SHARED_ORIGIN_PACK
            with db.transaction() as conn:
                db.put_embeddings(conn, keys, vecs)
                db.add_to_meta(
                    conn,
                    {
                        ORIGIN_COMPUTED: len(missing),
                        ORIGIN_SHARED: len(batch.hits) - from_pack,
                        ORIGIN_PACK: from_pack,
                    },
                )
                id_keys = db.chunk_ids_for_keys(keys, conn)
                # Every chunk up to this batch's last one now has a vector: the walk is in id
                # order from the mark and took every pending chunk on its way (batches are
                # written in the order they were taken).
                db.set_meta(conn, EMBEDDED_THROUGH, str(batch.through))
            ids = np.asarray([cid for cid, _ in id_keys], dtype=np.uint64)
            vectors.add(ids, vecs[[row_of[k] for _, k in id_keys]])
            if shared is not None and missing:
                shared.put(missing, computed)  # after the store's commit: the store is the truth
            done += len(id_keys)
            report.embedded += len(missing)
            report.from_shared += len(batch.hits)
            report.from_pack += from_pack
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
    except EmbeddingCancelled:
        report.cancelled = True
    except EmbeddingUnavailable as exc:
        # Past its retries the endpoint is down: keep what was stored, say when to resume.
        report.cancelled = True
        report.unavailable = str(exc)
        report.retry_at = exc.retry_at
    finally:
        for batch in in_flight:
            if batch.job is not None:
                batch.job.cancel()
        if shared is not None:
            shared.flush()
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


@dataclass(slots=True)
class _Batch:
    """Chunks taken for embedding: the last chunk id, the distinct inputs' keys, those the
    shared cache answered (key -> (f16 bytes, origin)), those to compute, and either the
    background job computing them or their texts."""

    through: int
    keys: list[bytes]
    hits: dict[bytes, tuple[bytes, int]]
    missing: list[bytes]
    job: Any
    texts: list[str] | None


def shared_cache(engine: Engine, encoder: EmbeddingBackend) -> ModelCache | None:
    """The shared cache's vectors for the engine's model, opened once; None when off or unusable."""
    if not engine.config.shared_cache_on():
        return None
    from kenning.embedding.shared import SharedCache, SharedCacheError, model_identity

    model_id = encoder.model_id
    probe = getattr(encoder, "probe_fingerprint", None)
    if probe is not None:
        # An endpoint can swap the model behind a name: what it answers to the probe text is part
        # of the identity, so another model's vectors are never taken from the shared cache.
        model_id = f"{model_id}:{probe()}"
    identity = model_identity(model_id, encoder.dim)
    current = engine.shared_cache
    if current is not None and current.identity == identity:
        return None if current.broken else current
    if engine.shared_cache_error is not None:
        return None
    if current is not None:  # the engine's model changed: that model's handle is of no use now
        current.flush()
        current.cache.close()
        engine.shared_cache = None
    cache: SharedCache | None = None
    try:
        cache = SharedCache(max_bytes=engine.config.shared_cache_max)
        engine.shared_cache = cache.model(identity, encoder.dim)
    except (SharedCacheError, sqlite3.Error) as exc:
        if cache is not None:
            cache.close()
        engine.shared_cache_error = str(exc)
        log.warning("the shared embedding cache is off: %s", exc)
        return None
    return engine.shared_cache


def _import_configured_pack(engine: Engine, shared: ModelCache) -> int:
    """Import the configured pack into the shared cache, once per version of the pack file."""
    from kenning.embedding.pack import PackError, import_pack

    name = engine.config.import_pack
    db = engine.db
    if not name or db is None:
        return 0
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = engine.root / path
    try:
        st = path.stat()
    except OSError as exc:
        log.warning("the index pack %s cannot be read (%s); embedding without it", path, exc)
        return 0
    stamp = f"{path}:{st.st_size}:{st.st_mtime_ns}:{shared.identity}"
    if db.get_meta(PACK_IMPORTED) == stamp:
        return 0
    try:
        result = import_pack(path, shared)
    except PackError as exc:
        log.warning("index pack not imported: %s", exc)
        return 0
    log.info("imported %d vectors from %s (%d were already cached)", result.added, path, result.already)
    with db.transaction() as conn:
        db.set_meta(conn, PACK_IMPORTED, stamp)
    return result.added


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
