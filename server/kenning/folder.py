"""One workspace folder kept indexed: its engine, its indexing thread, its queue of changes.

Used by every long-running interface (the language server and ``kenning mcp``); it knows nothing
of LSP or MCP: they report progress and status through the ``Reporter`` they pass in.

Indexing runs on a thread of its own (never pygls' pool, whose threads also read stdin), so the
event loop and the request handlers stay free. File events are coalesced: a burst of saves of one
file becomes one re-index, and a burst over many files (a branch switch) one incremental scan.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kenning import compounds
from kenning.config import Config
from kenning.engine import EncoderFactory, Engine, Status, default_encoder_factory
from kenning.indexer import EMBED_BATCH, FirstPaths, IndexProgress, embed_pending, scan, update
from kenning.state import Transition
from kenning.store.db import StoreCorrupt
from kenning.store.trust import StoreRefused
from kenning.symbols import SymbolSearch
from kenning.workset import WorkingSet, embed_order, recently_modified
from kenning.workspace import path_to_text, text_to_path

log = logging.getLogger(__name__)

# Wait this long after an event for more before starting work: bursts coalesce into one job.
DEBOUNCE_S = 0.05
# ... but while events keep coming (a burst of saves, a branch switch), wait at most this long.
MAX_DEBOUNCE_S = 0.5
# More changed paths than this in one batch: one incremental scan is cheaper than per-path work.
FULL_SCAN_THRESHOLD = 256
STATUS_INTERVAL_S = 1.0
# Without file watching from the client (Neovim on Linux), changes made outside the editor (a
# git checkout) are found by a quiet incremental scan this often: a stat per file, no writes.
POLL_INTERVAL_S = 30.0
# How long a stopping folder waits for a model still loading beside the open (see stop()).
MODEL_LOAD_JOIN_S = 30.0
# A reader checks this often whether the process writing its index has gone, to take over.
TAKEOVER_EVERY_S = 2.0
# A store locked by a writer that has not created it yet is tried again this often, this long.
OPEN_RETRY_EVERY_S = 0.25
OPEN_RETRY_FOR_S = 30.0
# What a status says while the store is not open (its counts are unknown, not zero).
OPENING_MESSAGE = "opening the index; counts follow"
CLOSING_MESSAGE = "closing the index"


class Reporter(Protocol):
    """What a folder tells the client; the server marshals these onto its event loop."""

    def status(self, folder: FolderIndex) -> None: ...
    def progress_begin(self, folder: FolderIndex, title: str) -> str | None: ...
    def progress_report(self, token: str, message: str, percentage: int) -> None: ...
    def progress_end(self, token: str, message: str) -> None: ...
    def progress_cancelled(self, token: str) -> bool: ...


@dataclass(slots=True)
class _Job:
    full: bool
    paths: set[str]
    show_progress: bool


class FolderIndex:
    def __init__(
        self,
        uri: str,
        root: Path,
        config: Config,
        reporter: Reporter,
        *,
        encoder_factory: EncoderFactory = default_encoder_factory,
    ) -> None:
        self.uri = uri
        self.root = root
        self.engine = Engine(root, config, encoder_factory=encoder_factory, read_ahead=True)
        self.symbols = SymbolSearch(self.engine)
        self.reporter = reporter
        self.working_set = WorkingSet()  # the editor's open files: embedded before the rest
        self.opened = threading.Event()
        self.open_error: str | None = None
        self.jobs_run = 0
        self._cond = threading.Condition()
        self._full = False
        self._full_progress = False
        self._dirty: set[str] = set()
        self._events = 0  # change events received; the debounce watches it
        self._stop = False
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kenning-index-{root.name}", daemon=True)
        self._model_load: threading.Thread | None = None
        self._last_status = 0.0
        self._last_state = ""
        self.poll_interval: float | None = None
        # Directories below the root that are workspace folders of their own: each file is
        # indexed once, by the innermost folder (whose index receives that file's events).
        self.exclude_dirs: tuple[str, ...] = ()
        # Requests read the engine from other threads. Closing it under them is not just an
        # error: SQLite connections closed while another thread runs a statement on them crash
        # the process. So a request registers (begin_read/end_read), a closing folder takes no
        # new ones, and the engine closes only when the last one has left.
        self.closing = False
        self._readers = 0
        self._reading = threading.Condition()
        # The embedding endpoint is down: a quiet job resumes embedding at this time.time().
        self._retry_at: float | None = None

    # -- control (any thread) ----------------------------------------------------------------

    def start(self, *, index_now: bool) -> None:
        if index_now:
            self._full = True
            self._full_progress = True
        self._thread.start()

    def request_full_scan(self) -> None:
        with self._cond:
            self._full = True
            self._full_progress = True
            self._cancel.clear()
            self._cond.notify()

    def set_exclude_dirs(self, dirs: tuple[str, ...]) -> None:
        """Nested folders changed: leave their files to them (or take them back) with a scan."""
        with self._cond:
            if dirs == self.exclude_dirs:
                return
            self.exclude_dirs = dirs
            if self._thread.is_alive():
                self._full = True
                self._cond.notify()

    def mark_dirty(self, paths: list[str]) -> None:
        with self._cond:
            self._dirty.update(paths)
            self._events += 1
            self._cond.notify()

    def file_opened(self, path: str) -> None:
        """The editor opened ``path`` (relative, as ``locate`` gives it): while the index
        embeds, that file's chunks go next."""
        self.working_set.opened(path_to_text(path))

    def cancel(self) -> None:
        """Stop the running job at its next checkpoint (lexical rows already written stay)."""
        self._cancel.set()

    def mark_closing(self) -> None:
        """Take no new requests (the ones in flight finish first; see ``stop``)."""
        with self._reading:
            self.closing = True

    def begin_read(self) -> bool:
        """Register a request that reads the engine; False when the folder is closing or not open."""
        with self._reading:
            if self.closing or not self.usable:
                return False
            self._readers += 1
            return True

    def end_read(self) -> None:
        with self._reading:
            self._readers -= 1
            if self._readers <= 0:
                self._reading.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        self.mark_closing()
        with self._cond:
            self._stop = True
            self._cancel.set()
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._thread.is_alive():
            return
        if self._model_load is not None:
            # A process that exits while onnxruntime is still building its session aborts
            # (SIGABRT): a folder refused at open is stopped within the model's load time.
            self._model_load.join(MODEL_LOAD_JOIN_S)
        with self._reading:
            # Requests are short (and cancellable); one that outlives this is stuck, and
            # leaving the engine open is better than closing connections under it.
            if not self._reading.wait_for(lambda: self._readers <= 0, timeout=30.0):
                log.error("%s: a request is still reading its index; not closing it", self.root)
                return
        self._close_engine()

    @property
    def usable(self) -> bool:
        if not (
            self.opened.is_set()
            and self.open_error is None
            and not self.closing
            and self.engine.db is not None
        ):
            return False
        if not self.engine.read_only and self.engine.store_lost() is not None:
            # Deleted or replaced under us (``git clean -fdx``): answering from the old files
            # while the new ones fill would mix two indexes. Say nothing until it is rebuilt.
            self.request_full_scan()
            return False
        return True

    def status(self) -> Status:
        if not self.begin_read():
            return self._placeholder_status()
        try:
            return self.engine.status()
        finally:
            self.end_read()

    def _placeholder_status(self) -> Status:
        # Before the store is open its counts are unknown, not zero: say so, or a client
        # (an agent above all) reads "0 chunks" as an empty index.
        return Status(
            state="error" if self.open_error else "scanning",
            files=0,
            chunks=0,
            embedded=0,
            pending=0,
            skipped=0,
            symbols=0,
            message=self.open_error or (CLOSING_MESSAGE if self.closing else OPENING_MESSAGE),
        )

    # -- the indexing thread -----------------------------------------------------------------

    def _close_engine(self) -> None:
        try:
            self.engine.close()
        except Exception:
            log.exception("closing the index of %s failed", self.root)

    def _run(self) -> None:
        if self.engine.config.embedding is None:
            # The local model loads (~0.25 s of CPU) while the store opens and the files are
            # checked: SQLite's quick_check, the graph's MAC and onnxruntime's session set-up
            # release the GIL, so on two cores the load is mostly off the path to "ready".
            self._model_load = threading.Thread(
                target=self.engine.encoder, name="kenning-model-load", daemon=True
            )
            self._model_load.start()
        if not self._open():
            return
        self.opened.set()
        compounds.warm()  # search splits names with it: load it now (~0.05 s), not in a query
        if self.engine.read_only:
            self.engine.states.ready(self.engine.read_only_reason)
            self._emit_status(force=True)
            self.symbols.warm()
            # Another process keeps this index current; we read it, and write it once it leaves.
            if not self._take_over_when_writer_leaves():
                return
        self._emit_status(force=True)
        while True:
            job = self._next_job()
            if job is None:
                return
            self.jobs_run += 1
            try:
                self._do(job)
            except Exception as exc:
                log.exception("indexing %s failed", self.root)
                self.engine.states.fail(f"indexing failed: {exc}")
                self._emit_status(force=True)

    def _open(self) -> bool:
        """Open the engine; False (with the error said) when it cannot be. A store that another
        process holds the writer lock of but has not created yet (two servers started at once on
        a new workspace) is tried again for a while: its writer is about to make it."""
        deadline = time.monotonic() + OPEN_RETRY_FOR_S
        waiting = False
        while True:
            try:
                self.engine.open()
                return True
            except (StoreCorrupt, StoreRefused, OSError) as exc:
                if self.engine.writer_elsewhere is None or time.monotonic() >= deadline:
                    self.open_error = f"cannot open the index of {self.root}: {exc}"
                    self.engine.states.fail(self.open_error)
                    log.error("%s", self.open_error)
                    self.opened.set()
                    self._emit_status(force=True)
                    return False
                if not waiting:
                    log.info("%s (%s); waiting for it", self.root, exc)
                    waiting = True
            if self._stopped_within(OPEN_RETRY_EVERY_S):
                return False

    def _take_over_when_writer_leaves(self) -> bool:
        """A reader because another process holds the writer lock: check every
        ``TAKEOVER_EVERY_S`` whether it has let go, and then reopen the store as its writer and
        catch up with a full scan (True). False when the folder stops first, or when this index
        is read-only for another reason (asked to be; a full disk), which a writer leaving
        does not change."""
        engine = self.engine
        while engine.writer_elsewhere is not None:
            if self._stopped_within(TAKEOVER_EVERY_S):
                return False
            if not engine.writer_gone():
                continue
            holder = engine.writer_elsewhere
            try:
                engine.reopen()
            except (StoreCorrupt, StoreRefused, OSError) as exc:
                # Closed by reopen: requests say "not open" until the next try succeeds.
                log.error("taking over the index of %s failed: %s", self.root, exc)
                engine.writer_elsewhere = holder
                continue
            if engine.read_only:  # another process took the lock first: follow it instead
                engine.states.ready(engine.read_only_reason)
                self._emit_status(force=True)
                continue
            log.info("%s: %s has let the index go; this server writes it now", self.root, holder)
            with self._cond:
                # Whatever changed while we only read: one incremental scan, with progress.
                self._full = True
                self._full_progress = True
            return True
        return False

    def _stopped_within(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (file events do not cut it short); True if stop() came."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self._stop:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def _next_job(self) -> _Job | None:
        with self._cond:
            while not (self._stop or self._full or self._dirty):
                wait = self.poll_interval
                if self._retry_at is not None:
                    left = max(0.0, self._retry_at - time.time())
                    wait = left if wait is None else min(wait, left)
                if not self._cond.wait(wait) and (
                    self.poll_interval or (self._retry_at is not None and time.time() >= self._retry_at)
                ):
                    self._retry_at = None
                    self._full = True  # a quiet poll (or the endpoint's retry): no progress UI
            if self._stop:
                return None
        if self._events:
            self._debounce()  # the first full scan has no burst to wait for
        with self._cond:
            if self._stop:
                return None
            job = _Job(self._full, self._dirty, self._full_progress)
            self._full = False
            self._full_progress = False
            self._dirty = set()
            self._cancel.clear()
        if not job.full and len(job.paths) > FULL_SCAN_THRESHOLD:
            job.full = True
        return job

    def _debounce(self) -> None:
        """Let the rest of a burst arrive: wait until no event came for DEBOUNCE_S, or at most
        MAX_DEBOUNCE_S. A lone save waits 50 ms; 10,000 saves in 5 s become ~10 jobs, not ~70."""
        deadline = time.monotonic() + MAX_DEBOUNCE_S
        while True:
            with self._cond:
                seen = self._events
            time.sleep(DEBOUNCE_S)
            with self._cond:
                if self._stop or self._events == seen:
                    return
            if time.monotonic() >= deadline:
                return

    def _should_stop(self, token: str | None) -> Callable[[], bool]:
        def should_stop() -> bool:
            if self._cancel.is_set() or self._stop:
                return True
            return token is not None and self.reporter.progress_cancelled(token)

        return should_stop

    def _do(self, job: _Job) -> None:
        engine = self.engine
        token = (
            self.reporter.progress_begin(self, f"kenning: indexing {self.root.name}")
            if job.show_progress
            else None
        )
        should_stop = self._should_stop(token)
        end_message = "done"
        try:
            lost = engine.store_lost() if engine.db is not None else "the index is not open"
            if lost is not None:
                log.warning("%s: reopening the index (rebuilt if it is gone)", lost)
                engine.reopen()
                job.full = True
                if engine.read_only:  # another process built the new store and still writes it
                    engine.states.ready(engine.read_only_reason)
                    return

            opened_done: set[str] = set()  # open files the working-set step has handled in this job
            embedding_began = False

            def on_phase(move: Transition) -> None:
                """A phase of the run began: tell the client now (its end is told below)."""
                nonlocal embedding_began
                if not move.began:
                    return
                self._emit_status(force=True)
                if move.new == "embedding":
                    embedding_began = True
                elif job.full:
                    # The files open in the editor are embedded before the full scan starts.
                    self._embed_opened_first(should_stop, token, opened_done, 0)

            def on_progress(p: IndexProgress) -> None:
                if p.phase == "embedding":
                    # The scan is done, so the symbols are final: index them beside a long
                    # embedding pass, not after "ready", when an idle server should be idle
                    # (a no-op while current or building; the warm() below then is too).
                    self.symbols.warm()
                if p.phase == "scanning" and job.full:
                    # A file opened while a long scan runs need not wait for its end either.
                    pct = int(100 * p.files_done / p.files_total) if p.files_total else 0
                    self._embed_opened_first(should_stop, token, opened_done, min(pct, 100) // 5)
                if token is not None:
                    if p.phase == "scanning":
                        pct = int(100 * p.files_done / p.files_total) if p.files_total else 0
                        msg = f"{p.files_done:,}/{p.files_total:,} files"
                        self.reporter.progress_report(token, msg, min(pct, 100) // 5)
                    else:
                        pct = int(100 * p.chunks_done / p.chunks_total) if p.chunks_total else 100
                        eta = f", ETA {p.eta_text()}" if p.eta_s else ""
                        msg = f"embedding {p.chunks_done:,}/{p.chunks_total:,} chunks{eta}"
                        self.reporter.progress_report(token, msg, 20 + min(pct, 100) * 4 // 5)
                self._emit_status()

            with engine.states.listening(on_phase):
                # An edit's few new vectors do not rewrite the whole graph file (defer_save); a
                # full scan does, so other readers of the store (a second server, the CLI) see
                # its graph.
                _, report = update(
                    engine,
                    None if job.full else sorted(job.paths),
                    progress=on_progress,
                    should_stop=should_stop,
                    exclude_dirs=self.exclude_dirs,
                    defer_save=not job.full,
                    first=self._first_paths(job.full),
                )
            if not embedding_began:
                end_message = "cancelled: lexical search works; run kenning.reindex to resume"
            elif report.unavailable is not None:
                # Stored vectors stay and search answers lexically; embedding resumes later.
                retry_at = report.retry_at or time.time() + 30
                when = time.strftime("%H:%M:%S", time.localtime(retry_at))
                end_message = f"{report.unavailable}; lexical results only, retrying at {when}"
                engine.states.note(end_message)
                self._retry_at = retry_at
                log.warning("%s", end_message)
            elif report.cancelled:
                end_message = "embedding cancelled: lexical search works; reindex to resume"
            elif engine.model_error:
                end_message = engine.model_error
        except Exception as exc:
            end_message = f"failed: {exc}"
            raise
        finally:
            if token is not None:
                self.reporter.progress_end(token, end_message)
            self._emit_status(force=True)
            # After "ready" is out, not on its path (a job that embedded nothing, such as an
            # unchanged restart): index the symbols on a background thread (a query before it
            # ends is answered from SQL).
            self.symbols.warm()

    def _embed_opened_first(
        self, should_stop: Callable[[], bool], token: str | None, done: set[str], percentage: int
    ) -> None:
        """Before and during a full scan: index and embed the files the editor has open (those
        not in ``done`` yet), so they are semantically searchable within seconds on a fresh (or
        long unembedded) index, not after the whole tree is scanned. A few stats when they are
        embedded already. The full scan meeting these files later finds them unchanged."""
        engine = self.engine
        opened = [p for p in self.working_set.paths() if p not in done]
        if not opened or engine.db is None:
            return
        done.update(opened)
        scan(
            engine, [text_to_path(p) for p in opened], should_stop=should_stop, exclude_dirs=self.exclude_dirs
        )
        if should_stop() or not engine.db.pending_chunks_in(opened, 1):
            return
        if token is not None:
            # The bar stays where the full scan has it: this is a detour, not a phase.
            self.reporter.progress_report(token, "embedding the open files first", percentage)
        embed_pending(
            engine, should_stop=should_stop, defer_save=True, first=self.working_set.paths, only_first=True
        )
        self._emit_status(force=True)

    def _first_paths(self, full: bool) -> FirstPaths:
        """What the embedding pass takes first: the open files, and after a full scan with more
        than a batch to embed, the most recently modified files (the user's working set). The
        recent files are looked up at the pass's first batch, when the scan has run."""
        recent: list[str] | None = None
        working_set = self.working_set

        def first() -> Sequence[str]:
            nonlocal recent
            if recent is None:
                db = self.engine.db
                pending = db.counts()["pending"] if full and db is not None else 0
                recent = recently_modified(self.engine) if pending > EMBED_BATCH else []
            return embed_order(working_set.paths(), recent)

        return first

    def _emit_status(self, *, force: bool = False) -> None:
        now = time.monotonic()
        state = self.engine.state
        if not force and state == self._last_state and now - self._last_status < STATUS_INTERVAL_S:
            return
        self._last_status = now
        self._last_state = state
        try:
            self.reporter.status(self)
        except Exception:
            log.exception("sending the index status failed")
