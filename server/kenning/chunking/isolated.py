"""Chunking a workspace file in the chunk worker (``worker.py``), so that a file tree-sitter
cannot get through costs that file, not the server.

One worker serves the whole process and is started on first use. Files are handed to it ahead
of need (``chunk_later``): it parses the next files on its own core while the indexer writes
the last ones, and answers in the order they were sent. When it takes longer over a file than
that file's size allows (``time_limit``), runs out of its memory or dies, it is killed and
``ParserLimitError`` says so for that file (the indexer then windows it and counts it); the files
sent after it go to a new worker. Where no worker can be started at all, files are chunked in
this process as before.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from kenning.chunking import chunk_source
from kenning.chunking.model import ChunkedFile
from kenning.chunking.pipe import ChunkerFailure, read_message, write_message

log = logging.getLogger(__name__)

# Seconds a file may take: TIMEOUT_BASE, and TIMEOUT_PER_MIB more per MiB of it, TIMEOUT at most.
# Real code is chunked at 3 s a MiB or faster on this shared machine's slow, busy cores (the
# slowest of its 120 largest parsed files: Effect's 0.9 MB `Effect.ts`, 2.7 s), so the limit
# leaves ten times that. What takes longer is a parser gone quadratic (tree-sitter-lua on 8,000
# lines of `#ifdef A`: 9 s; twice the lines, four times the time), and it then costs what its size
# allows, not a minute: a 70 KB file 7 s.
TIMEOUT = 60.0
TIMEOUT_BASE = 5.0
TIMEOUT_PER_MIB = 30.0


def time_limit(size: int) -> float:
    """Seconds the worker may spend on a file of ``size`` characters."""
    return min(TIMEOUT, TIMEOUT_BASE + TIMEOUT_PER_MIB * size / 2**20)


_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding `kenning/`


class ParserLimitError(Exception):
    """The chunk worker could not chunk a file within its limits; the message says how."""


class _Job:
    """One file for the worker, and its answer once it comes: chunks, why there are none (a
    ``str``), or ``_SEND_AGAIN`` when the worker died over a file sent before this one."""

    def __init__(self, path: str, text: str, language: str) -> None:
        self.request = (path, text, language)
        # `or`: a text that is none (a caller's bug) is the worker's to answer for, not this thread's.
        self.limit = time_limit(len(text or ""))
        self.answered = threading.Event()
        self.answer: ChunkedFile | ChunkerFailure | str | object = None


_SEND_AGAIN = object()


class _Worker:
    """One child process running ``kenning.chunking.worker``, a thread writing the files sent
    to it and a thread reading its answers. Writing is a thread of its own because a pipe fills
    up: a caller blocked writing a 2 MiB file to a worker stuck in a parse could never time it
    out."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # The child imports the same kenning as this process, installed or not.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kenning.chunking.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            # `-m` puts the working directory first on the child's import path, and the server's
            # may be the workspace: a repository's own `kenning/` or `tree_sitter.py` would be
            # imported. The child works in the directory kenning itself is imported from.
            cwd=_PACKAGE_ROOT,
        )
        self.lock = threading.Lock()  # guards the fields below
        self.sent: collections.deque[_Job] = collections.deque()  # unanswered, in the order sent
        self.head_since = time.monotonic()  # when the worker got to sent[0]
        self.gone = False
        self.killed_over: _Job | None = None  # the file it was killed for taking too long over
        self.stopped = False
        self.unwritten: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=self._write, name="kenning-chunk-requests", daemon=True).start()
        threading.Thread(target=self._read, name="kenning-chunk-answers", daemon=True).start()

    def send(self, job: _Job) -> bool:
        """Queue ``job`` for the worker; False when it is gone."""
        with self.lock:
            if self.gone:
                return False
            if not self.sent:
                self.head_since = time.monotonic()
            self.sent.append(job)
            self.unwritten.put(job)
        return True

    def _write(self) -> None:
        requests = self.process.stdin
        assert requests is not None
        try:
            while (job := self.unwritten.get()) is not None:
                write_message(requests, pickle.dumps(job.request, pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass  # the worker is gone; the reader answers for every file sent
        finally:
            with contextlib.suppress(OSError):  # what is left unflushed has no reader
                requests.close()

    def _read(self) -> None:
        answers = self.process.stdout
        assert answers is not None
        with answers:  # closed here, at the end, not under a read in progress
            while (answer := read_message(answers)) is not None:
                with self.lock:
                    job = self.sent.popleft()
                    self.head_since = time.monotonic()
                try:
                    job.answer = pickle.loads(answer)
                except Exception as error:  # never expected; a reader that raised would hang its waiters
                    job.answer = ChunkerFailure(f"its answer could not be read: {error!r}")
                job.answered.set()
        code = self.process.wait()
        with self.lock:
            self.gone = True
            lost = list(self.sent)
            self.sent.clear()
        self.unwritten.put(None)
        for job in lost:
            job.answer = _SEND_AGAIN
        if self.stopped:
            for job in lost:
                job.answer = "the chunk worker was stopped"
        elif lost and self.killed_over is lost[0]:
            lost[0].answer = f"it took longer than {lost[0].limit:.0f} s"
        elif lost and self.killed_over is None:
            # Answers come in order, so the worker died over the first file it did not answer.
            lost[0].answer = f"the chunk worker stopped (exit status {code}: out of memory or crashed)"
        for job in lost:
            job.answered.set()

    def wait(self, job: _Job) -> None:
        """Until ``job`` is answered. Whoever waits kills the worker once it has spent longer on
        one file, this one or one sent before it, than that file's limit."""
        while True:
            with self.lock:
                deadline = self.head_since + (self.sent[0].limit if self.sent else TIMEOUT)
            if job.answered.wait(max(0.0, deadline - time.monotonic())):
                return
            with self.lock:
                head = self.sent[0] if self.sent else None
                overdue = head is not None and time.monotonic() - self.head_since >= head.limit
                if self.killed_over is None and overdue:
                    self.killed_over = head
                    # The reader sees the end and answers for every file sent (the one killed
                    # over may still get its chunks, if they were on their way).
                    self.process.kill()
                killed = self.killed_over is not None
            if killed:
                job.answered.wait()
                return

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
        self.process.kill()
        self.process.wait()


_lock = threading.Lock()  # guards the two below
_worker: _Worker | None = None
_unavailable = False  # no worker could be started: chunk in this process


def _send(job: _Job) -> _Worker | None:
    """``job`` sent to the worker (started if need be); None where none can be started."""
    global _worker, _unavailable
    with _lock:
        while not _unavailable:
            if _worker is None or _worker.gone:
                try:
                    _worker = _Worker()
                except OSError as error:
                    log.warning("no chunk worker (%s); chunking in the server's own process", error)
                    _unavailable = True
                    break
            if _worker.send(job):
                return _worker
            _worker = None
    return None


class PendingChunks:
    """A file on its way through the chunk worker."""

    def __init__(self, path: str, text: str, language: str) -> None:
        self._job = _Job(path, text, language)
        self._worker = _send(self._job)

    def result(self) -> ChunkedFile:
        """The file's chunks, as ``chunk_source`` makes them; ``ParserLimitError`` when the
        worker failed over this file, ``RuntimeError`` when the chunker raised."""
        while self._worker is not None:
            self._worker.wait(self._job)
            if self._job.answer is not _SEND_AGAIN:
                break
            # The worker died over an earlier file: this one goes to the next worker.
            self._job = _Job(*self._job.request)
            self._worker = _send(self._job)
        answer = self._job.answer
        if self._worker is None:
            return chunk_source(*self._job.request)
        if isinstance(answer, ChunkedFile):
            return answer
        if isinstance(answer, ChunkerFailure):
            raise RuntimeError(f"the chunker failed in the chunk worker:\n{answer.traceback}")
        raise ParserLimitError(answer)


def chunk_later(path: str, text: str, language: str) -> PendingChunks:
    """``chunk_source(path, text, language)`` started in the chunk worker; its ``result()``
    waits for it. Files sent one after another are chunked while the caller goes on."""
    return PendingChunks(path, text, language)


def chunk_isolated(path: str, text: str, language: str) -> ChunkedFile:
    """``chunk_source(path, text, language)``, run in the chunk worker; ``ParserLimitError``
    when the worker fails over this file."""
    return chunk_later(path, text, language).result()


def stop_worker() -> None:
    """Stop the chunk worker, if one runs (at exit, and in tests). A file being chunked ends
    now, with ``ParserLimitError`` (the indexer windows it), so an exit never waits on a
    runaway parse."""
    global _worker
    with _lock:
        running, _worker = _worker, None
    if running is not None:
        running.stop()


atexit.register(stop_worker)
