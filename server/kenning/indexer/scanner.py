"""The scan: bring the store's files, chunks, symbols and FTS rows in line with the disk.

Discovers, reads and chunks what changed (everything, or the paths an editor's events name) and
commits in small transactions, so search works lexically within seconds; removed chunks leave the
graph at once, and added chunks whose exact model input already has a vector join it without a
model call. Vectors for the rest come from the embedding pass (``embedder``).
"""

from __future__ import annotations

import collections
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from kenning.chunking import CHUNKER_VERSION
from kenning.chunking.isolated import ParserLimitError
from kenning.engine import Engine
from kenning.indexer.chunks import FileChunks, new_chunks
from kenning.indexer.reports import ORIGIN_STORE, IndexProgress, Progress, ScanReport
from kenning.languages import language_for_path, language_of
from kenning.store.rows import FileRow
from kenning.types import ShouldStop
from kenning.workspace import (
    Discovery,
    FileEntry,
    SkipReason,
    SourceText,
    discover,
    path_to_text,
    read_source,
)

log = logging.getLogger(__name__)

CHUNKER_VERSION_KEY = "chunker_version"  # meta: the chunker that made the stored chunks
# Commit a scan transaction after this many files or this many seconds, whichever comes first:
# small enough that a kill loses little work, large enough that fsyncs don't dominate.
SCAN_BATCH_FILES = 200
SCAN_BATCH_SECONDS = 0.5
# Files read and handed to the chunk worker before the one being written. Enough to keep the
# worker busy while this process writes; at most this many file texts wait in memory.
READ_AHEAD = 8

# Reasons found by reading a file's content: while its size and mtime stay the same, reading it
# again would give the same answer (400 binary files of 2 MB cost 838 MB of reads per no-op scan).
CONTENT_SKIPS = frozenset({SkipReason.BINARY.value, SkipReason.GENERATED.value})


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
    if paths is not None:
        paths = list(paths)
        if any(p.strip("/") in ("", ".") for p in paths):
            paths = None  # an event for the root directory itself: everything may have changed
    # The stored rows the scan compares with: every file's, or (a save, a watched-file event)
    # only those at or below the given paths — all 100,000 of a large tree cost ~0.2 s.
    known = db.all_files() if paths is None else db.files_at({path_to_text(p).strip("/") for p in paths})
    # Files chunked by another chunker version are chunked again even when unchanged; only
    # a full scan that finishes records the new version. A store without files has nothing
    # another chunker made: record this one now, or a first index killed before it finished
    # would chunk its committed files all over again on the next start.
    rechunk = db.get_meta(CHUNKER_VERSION_KEY) != str(CHUNKER_VERSION)
    if rechunk and not (known if paths is None else db.has_files()):
        with db.transaction() as conn:
            db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION))
        rechunk = False
    if paths is None:
        found, stat_skips = _discover(engine, exclude_dirs)
        entries: list[FileEntry] = found.files
        present = {path_to_text(e.path) for e in entries}
        gone = [row for p, row in known.items() if p not in present and p not in stat_skips]
        report.note = found.note
        if found.note and not entries:
            log.info("%s: no files to index: %s", engine.root, found.note)
    else:
        entries, stat_skips, gone = _entries_for(engine, paths, known, exclude_dirs)

    # The stored paths changed since the last new generation: what caches keyed on it (the
    # symbol index) may update alone instead of rebuilding everything.
    changed: list[str] = []
    removed_ids: list[int] = []
    added_ids: list[int] = []
    if gone:
        with db.transaction() as conn:
            removed_ids.extend(db.delete_files(conn, [row.id for row in gone]))
        report.files_deleted = len(gone)
        changed += (row.path for row in gone)

    total = len(entries) + len(stat_skips)
    report.files_seen = total
    if stat_skips:
        with db.transaction() as conn:
            for rel, reason in stat_skips.items():
                written = _writes(report)
                _record_skip(engine, conn, rel, str(reason.value), known, removed_ids, report)
                if _writes(report) != written:
                    changed.append(rel)
    if changed:
        engine.bump_generation(changed)  # caches (symbols, filters) rebuild only after real changes
        changed = []

    done = len(stat_skips)
    reads = _read_ahead(entries, known, rechunk, engine.config.max_file_size)
    written_entries = 0
    while written_entries < len(entries):
        if should_stop is not None and should_stop():
            break
        batch_started = time.monotonic()
        in_batch = 0
        with db.transaction() as conn:
            for read in reads:
                done += 1
                in_batch += 1
                written_entries += 1
                written = _writes(report)
                _write_file(engine, conn, read, known, removed_ids, added_ids, report)
                if _writes(report) != written:
                    changed.append(read.path)
                if in_batch == SCAN_BATCH_FILES or time.monotonic() - batch_started > SCAN_BATCH_SECONDS:
                    break
        if changed:
            engine.bump_generation(changed)
            changed = []
        if progress is not None:
            progress(IndexProgress("scanning", files_done=done, files_total=total))
    _apply_to_vectors(engine, removed_ids, added_ids)
    if added_ids:
        report.chunks_reused = db.count_embedded(added_ids)
        if report.chunks_reused:
            with db.transaction() as conn:
                db.add_to_meta(conn, {ORIGIN_STORE: report.chunks_reused})
    if rechunk and paths is None and written_entries == len(entries):
        with db.transaction() as conn:
            db.set_meta(conn, CHUNKER_VERSION_KEY, str(CHUNKER_VERSION))
    if _writes(report) or report.files_deleted:
        # The graph has the changes now: caches that read vectors (a filter's exact scan)
        # start again. No file changed since the bumps above, so none is named.
        engine.bump_generation(())
    report.seconds = time.monotonic() - started
    return report


def _discover(
    engine: Engine, exclude_dirs: Sequence[str], paths: Sequence[str] | None = None
) -> tuple[Discovery, dict[str, SkipReason]]:
    """The files that belong to the index (all, or at and below ``paths``) under the engine's
    settings, and the ones skipped keyed by their stored text path (see ``path_to_text``;
    discovery's paths are file names)."""
    config = engine.config
    found = discover(
        engine.root,
        store_dir=engine.store_dir,
        exclude=config.exclude,
        max_file_size=config.max_file_size,
        exclude_dirs=exclude_dirs,
        paths=paths,
    )
    return found, {path_to_text(p): r for p, r in found.skipped.items()}


def _writes(report: ScanReport) -> int:
    """Files whose stored rows were (re)written so far: a file's call raised it if it wrote."""
    return report.files_changed + report.files_written


def _entries_for(
    engine: Engine, paths: Iterable[str], known: dict[str, FileRow], exclude_dirs: Sequence[str] = ()
) -> tuple[list[FileEntry], dict[str, SkipReason], list[FileRow]]:
    """Entries for specific paths (files or directories): the ones that still belong to the
    index, the ones skipped, and the stored files at or below them that are gone (``known``
    holds exactly the stored files at or below them: ``Queries.files_at``).

    Only these paths are judged (against the same ignore rules, nested ``.gitignore`` files
    and ``.kenningignore`` included), not the whole tree: a save in a 50k-file workspace costs
    a few stats, not a full discovery.
    """
    found, skips = _discover(engine, exclude_dirs, sorted(set(paths)))
    present = {path_to_text(e.path) for e in found.files} | set(skips)
    gone = [row for row in known.values() if row.path not in present]
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


@dataclass
class _Read:
    """What reading a file found, before anything is written: ``source`` is None for a file
    unchanged by its size and mtime (not read), the skip reason for one skipped, and ``chunks``
    the rows on their way for one to index."""

    entry: FileEntry
    path: str
    row: FileRow | None
    source: SourceText | SkipReason | None = None
    chunks: FileChunks | None = None


def _read_file(entry: FileEntry, known: dict[str, FileRow], rechunk: bool, max_file_size: int) -> _Read:
    path = path_to_text(entry.path)
    row = known.get(path)
    read = _Read(entry, path, row)
    if (
        row is not None
        # a file skipped for its content stays skipped whatever the chunker's version
        and (row.skip_reason in CONTENT_SKIPS or (row.skip_reason is None and not rechunk))
        and row.size == entry.size
        and row.mtime_ns == entry.mtime_ns
    ):
        return read
    read.source = read_source(entry, max_file_size=max_file_size)
    if isinstance(read.source, SkipReason):
        return read
    unchanged = row is not None and row.skip_reason is None and row.content_hash == read.source.content_hash
    if unchanged and not rechunk:
        return read  # touched, not chunked
    read.chunks = FileChunks(path, read.source, language_of(path, read.source.text))
    return read


def _read_ahead(
    entries: Iterable[FileEntry], known: dict[str, FileRow], rechunk: bool, max_file_size: int
) -> Iterator[_Read]:
    """Each entry read, ``READ_AHEAD`` entries before it is written: the chunk worker parses
    the next files on its own core while this process writes the last ones."""
    ahead: collections.deque[_Read] = collections.deque()
    for entry in entries:
        ahead.append(_read_file(entry, known, rechunk, max_file_size))
        if len(ahead) > READ_AHEAD:
            yield ahead.popleft()
    yield from ahead


def _write_file(
    engine: Engine,
    conn: sqlite3.Connection,
    read: _Read,
    known: dict[str, FileRow],
    removed_ids: list[int],
    added_ids: list[int],
    report: ScanReport,
) -> None:
    db = engine.db
    assert db is not None
    path, row, source = read.path, read.row, read.source
    if source is None:  # unchanged by size and mtime
        assert row is not None
        if row.skip_reason is not None:  # skipped for its content, which has not changed
            report.files_skipped += 1
            report.skipped[row.skip_reason] = report.skipped.get(row.skip_reason, 0) + 1
        else:
            report.files_unchanged += 1
        return
    if isinstance(source, SkipReason):
        size, mtime_ns = read.entry.size, read.entry.mtime_ns
        _record_skip(engine, conn, path, str(source.value), known, removed_ids, report, size, mtime_ns)
        return
    if read.chunks is None:  # the same content as stored
        assert row is not None
        db.touch_file(conn, row.id, source.size, source.mtime_ns)
        report.files_unchanged += 1
        return
    language = read.chunks.language
    try:
        chunks, symbols = read.chunks.rows()
    except ParserLimitError as error:
        # A file that sends a parser past its limits (chunking/isolated.py) is still indexed.
        log.warning("%s: not parsed, %s; indexing it in line windows", path, error)
        report.files_unparsed += 1
        chunks, symbols = new_chunks(path, source, "text")
    except Exception:
        # A chunker bug must cost one file, not the whole index.
        log.exception("chunking %s failed; indexing it as plain text", path)
        chunks, symbols = new_chunks(path, source, "text")
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
    if not removed and not added:
        return  # an unchanged tree: the graph may go on loading beside the rest of the job
    engine.adopt_loaded_vectors()
    vectors, db = engine.vectors, engine.db
    if vectors is None or db is None or not engine.model_matches():
        return
    if removed:
        engine.churn += vectors.remove(np.asarray(removed, dtype=np.uint64))
    for start in range(0, len(added), 4096):
        ids, vecs = db.vectors_for(added[start : start + 4096])
        if ids:
            vectors.add(np.asarray(ids, dtype=np.uint64), vecs)
