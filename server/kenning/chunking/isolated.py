"""Chunking a workspace file in the chunk worker (``worker.py``), so that a file tree-sitter
cannot get through costs that file, not the server.

One worker serves the whole process, one file at a time, and is started on first use. When it
takes longer than ``TIMEOUT`` seconds over a file, runs out of its memory or dies, it is killed,
``ParserLimitError`` says so (the indexer then windows the file and counts it), and the next
file starts a new worker. Where no worker can be started at all, files are chunked in this
process as before.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from pathlib import Path

from kenning.chunking import chunk_source
from kenning.chunking.model import ChunkedFile
from kenning.chunking.worker import read_message, write_message

log = logging.getLogger(__name__)

# Seconds a file may take. The largest file parsed (2 MiB) takes a few seconds on a slow core;
# what takes longer is a parser gone quadratic, which would take hours.
TIMEOUT = 60.0

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding `kenning/`


class _Worker:
    """One child process running ``kenning.chunking.worker``, and a thread reading its answers
    (a pipe cannot be read with a timeout everywhere; a queue can)."""

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
        self.answers: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, name="kenning-chunk-answers", daemon=True).start()

    def _read(self) -> None:
        answers = self.process.stdout
        assert answers is not None
        with answers:  # closed here, at the end, not under a read in progress
            while (answer := read_message(answers)) is not None:
                self.answers.put(answer)
        self.answers.put(None)  # the worker is gone

    def chunk(self, path: str, text: str, language: str) -> ChunkedFile | str:
        """The file's chunks, or why there are none (the worker is then unusable)."""
        assert self.process.stdin is not None
        try:
            write_message(self.process.stdin, pickle.dumps((path, text, language), pickle.HIGHEST_PROTOCOL))
        except OSError as error:
            return f"the chunk worker could not be reached ({error})"
        try:
            answer = self.answers.get(timeout=TIMEOUT)
        except queue.Empty:
            return f"it took longer than {TIMEOUT:.0f} s"
        if answer is None:
            code = self.process.wait()
            return f"the chunk worker stopped (exit status {code}: out of memory or crashed)"
        result = pickle.loads(answer)
        assert isinstance(result, ChunkedFile)
        return result

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()


class ParserLimitError(Exception):
    """The chunk worker could not chunk a file within its limits; the message says how."""


_lock = threading.Lock()
_worker: _Worker | None = None
_unavailable = False  # no worker could be started: chunk in this process


def chunk_isolated(path: str, text: str, language: str) -> ChunkedFile:
    """``chunk_source(path, text, language)``, run in the chunk worker; ``ParserLimitError``
    when the worker fails over this file."""
    global _worker, _unavailable
    with _lock:
        if _unavailable:
            return chunk_source(path, text, language)
        if _worker is None:
            try:
                _worker = _Worker()
            except OSError as error:
                log.warning("no chunk worker (%s); chunking in the server's own process", error)
                _unavailable = True
                return chunk_source(path, text, language)
        result = _worker.chunk(path, text, language)
        if isinstance(result, ChunkedFile):
            return result
        _worker.stop()
        _worker = None
    raise ParserLimitError(result)


def stop_worker() -> None:
    """Stop the chunk worker, if one runs (at exit, and in tests)."""
    global _worker
    running = _worker
    if running is not None:
        # Killed before the lock is taken: a file being chunked ends now (the indexer windows
        # it), not after TIMEOUT, so that an exit never waits on a runaway parse.
        running.process.kill()
    with _lock:
        if _worker is not None:
            _worker.stop()
            _worker = None


atexit.register(stop_worker)
