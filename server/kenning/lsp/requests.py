"""Serving a request: its params parsed (a bad field answered -32602), its work run off the event
loop, cancellable and safe against a closing folder."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcInvalidParams

from kenning.folder import FolderIndex
from kenning.lsp import protocol as P
from kenning.lsp.server import KenningServer
from kenning.search import SearchCancelled, SearchError
from kenning.store.db import StoreClosed
from kenning.workspace import (
    display_path,
)

log = logging.getLogger("kenning")


class FolderClosed(Exception):
    """The folder was removed (its index closed) while a request was reading it."""


_R = TypeVar("_R")


def parse_params(ls: KenningServer, parse: Callable[[Any, int], _R], params: Any) -> _R:
    """``parse(params, max_results)`` (one of ``protocol``'s parsers, with the user's result
    cap); its ``InvalidParams`` becomes the -32602 reply, whose message names the field."""
    try:
        return parse(params, ls.options.max_results)
    except P.InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


@contextlib.contextmanager
def unless_closed(folder: FolderIndex) -> Iterator[None]:
    """Read a folder's engine for one request. The folder is not closed while the request runs
    (FolderIndex.begin_read), nor is its database (``Database.in_use``: the engine may also reopen
    its store, as after ``git clean -fdx``); a folder already closing, or any failure caused by
    its closing, becomes FolderClosed: the request answers without that folder, never -32603."""
    if not folder.begin_read():  # closing, or not open yet: the engine must not be touched
        raise FolderClosed
    db = folder.engine.db
    try:
        if db is None:
            raise StoreClosed(f"{folder.root} is not open")
        with db.in_use():
            yield
    except (SearchError, SearchCancelled):
        raise
    except Exception:
        if folder.closing or not folder.usable:
            log.info("%s was closed during a request; answering without it", display_path(folder.root))
            raise FolderClosed from None
        raise
    finally:
        folder.end_read()


async def run_cancellable(ls: KenningServer, work: Callable[[threading.Event], _R]) -> _R:
    """Run blocking work in kenning's pool; a cancelled request stops it at its next checkpoint."""
    cancel = threading.Event()
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(ls.request_pool, work, cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise
