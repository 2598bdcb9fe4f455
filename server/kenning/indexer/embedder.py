"""The embedding pass: vectors for every chunk whose exact model input has none yet.

Each batch's vectors are committed, then added to the graph; killed at any moment, the next pass
resumes where this one stopped. Vectors another store computed come from the shared cache, and a
configured index pack is imported into it first. The working set's chunks go first (see
``working_set``).
"""

from __future__ import annotations

import collections
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kenning.engine import Engine
from kenning.indexer.chunks import embed_input
from kenning.indexer.reports import (
    ORIGIN_COMPUTED,
    ORIGIN_PACK,
    ORIGIN_SHARED,
    EmbedReport,
    IndexProgress,
    Progress,
)
from kenning.indexer.working_set import FIRST_BATCH, FirstChunks, FirstPaths
from kenning.store.schema import EMBEDDED_THROUGH
from kenning.types import ShouldStop

if TYPE_CHECKING:
    from kenning.embedding.backend import EmbeddingBackend
    from kenning.embedding.shared import ModelCache

log = logging.getLogger(__name__)

EMBED_BATCH = 128
SAVE_VECTORS_EVERY_S = 30.0
# With defer_save, a pass that added fewer vectors than this leaves the graph file for later
# (the next pass after SAVE_VECTORS_EVERY_S, or close): rewriting the whole file after every
# saved edit cost 0.2-0.4 s at 100k chunks and held up the next edit. A crash in between loses
# nothing: the next start reconciles the older file with the vectors stored in SQLite.
SAVE_VECTORS_MIN_ADDED = 1000
PACK_IMPORTED = "pack_imported"  # meta: path, size, mtime and model of the last imported pack
SHARED_ORIGIN_PACK = 1  # kenning.embedding.shared.ORIGIN_PACK, without importing it eagerly


def embed_pending(
    engine: Engine,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    defer_save: bool = False,
    first: FirstPaths | None = None,
    only_first: bool = False,
) -> EmbedReport:
    """Embed every chunk that has no vector yet; resumable, cancellable between batches.

    The graph file is saved at the end unless ``defer_save`` (a long-running server's small
    jobs) and the pass added little (see ``SAVE_VECTORS_MIN_ADDED``).

    ``first`` gives the files to embed before the rest (the user's working set, see
    kenning.workset); it is asked again before every batch, so a file opened meanwhile moves
    to the front. ``only_first``: embed those files' chunks and stop.
    """
    try:
        return _embed_pending(engine, progress, should_stop, defer_save, first, only_first)
    except BaseException:
        engine.vectors_in_step = False  # vectors may be committed but not in the graph
        raise


def _embed_pending(
    engine: Engine,
    progress: Progress | None,
    should_stop: ShouldStop | None,
    defer_save: bool,
    first: FirstPaths | None = None,
    only_first: bool = False,
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
    ahead = FirstChunks(db, first, min(batch_rows, FIRST_BATCH) if only_first else batch_rows)
    rows = ahead.take(set()) if only_first else db.pending_chunks(batch_rows, after_id=through)
    if not rows:
        if not only_first:
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
    if only_first:
        rows = []  # taken again below, with the rest of the batch logic
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
                # The working set's chunks go first; they leave the id walk's mark alone (the
                # walk skips them later: they have vectors by then).
                ahead_rows = ahead.take(in_flight_keys)
                through_mark: int | None = None
                if ahead_rows:
                    rows_now = ahead_rows
                    rows = []  # fetched before: may hold these very chunks; the walk fetches anew
                else:
                    if only_first:
                        break
                    if not rows:
                        rows = db.pending_chunks(batch_rows, after_id=fetched_through)
                        if not rows:
                            break
                    rows_now, rows = rows, []
                    fetched_through = through_mark = rows_now[-1][0]
                inputs: dict[bytes, str] = {}
                for _cid, key, path, header, text in rows_now:
                    # A key already on its way is written with all its chunks by that batch.
                    if key not in in_flight_keys:
                        inputs.setdefault(key, embed_input(path, header, text))
                keys = list(inputs)
                # What the shared cache holds is not computed again (another worktree, a pack).
                hits = shared.lookup(keys) if shared is not None and keys else {}
                missing = [k for k in keys if k not in hits]
                texts = [inputs[k] for k in missing]
                in_flight_keys.update(keys)
                if submit is not None:
                    job = submit(texts, should_stop) if missing else None
                    in_flight.append(_Batch(through_mark, keys, hits, missing, job, None))
                else:
                    in_flight.append(_Batch(through_mark, keys, hits, missing, None, texts))
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
            # Rounded to the float16 the database and the shared cache keep, so that the graph
            # holds the same int8 codes however a vector came (computed, cached, from a pack,
            # a rebuild): from float32 one chunk in two differed by a code, and the searches
            # of two stores of one tree by a rank on 9 of RxJS's 132 sentences.
            computed = computed.astype(np.float16).astype(np.float32)
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
                # written in the order they were taken; working-set batches move no mark).
                if batch.through is not None:
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
    if not report.cancelled and not only_first:
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

    through: int | None  # None: a working-set batch, outside the id walk
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
    top = db.max_chunk_id()
    if top != recorded:
        with db.transaction() as conn:
            db.set_meta(conn, EMBEDDED_THROUGH, str(top))
