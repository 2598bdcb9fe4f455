"""The language server object: one index per workspace folder, and the plumbing under the handlers.

``KenningServer`` holds the folders (a ``FolderIndex`` each), the options and the request pool;
``KenningProtocol`` makes pygls answer every request, even one whose params do not parse. The
handlers live beside it, one module per feature group (see ``kenning.lsp.main``); nothing here
decides how to index or rank.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, cast

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage

from kenning import __version__
from kenning.folder import FolderIndex
from kenning.lsp import protocol as P
from kenning.lsp.framing import (
    MAX_MESSAGE_BYTES,
    REFUSED_BODY,
    BoundedStdinReader,
    request_id_from_head,
)
from kenning.lsp.options import Options
from kenning.lsp.reporter import Reporter
from kenning.workspace import (
    display_path,
    resolve_inside,
    uri_to_path,
)

log = logging.getLogger("kenning")


_IGNORED = object()  # a message already answered while it was being parsed
_REFUSED = json.loads(REFUSED_BODY)  # what the read loop is given for a body it did not read

_LOG_LEVELS = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


class KenningProtocol(LanguageServerProtocol):
    """pygls' protocol, made to answer every request.

    pygls structures params of typed methods and, when that fails, logs and sends no reply at all
    (the client hangs). kenning's custom requests keep their params as plain JSON (validated in
    the handlers), and a typed request that fails to parse gets a -32602 reply.
    """

    def structure_message(self, data: Any) -> Any:
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data
        if "id" in data and data.get("method") in P.CUSTOM_REQUESTS:
            return JsonRPCRequestMessage(
                id=data["id"],
                method=data["method"],
                jsonrpc=data["jsonrpc"],
                params=data.get("params"),
            )
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if "id" in data and isinstance(data.get("method"), str):
                self._send_response(
                    data["id"],
                    error=T.ResponseError(
                        code=JsonRpcInvalidParams.CODE,
                        message=f"invalid params for {data['method']}",
                    ),
                )
                return _IGNORED
            raise

    def handle_message(self, message: Any) -> None:
        if message is _IGNORED or message == _REFUSED:
            return
        super().handle_message(message)

    def refuse_oversized(self, length: int, head: bytes) -> None:
        """Answer a message whose body was too large to read (see ``framing``)."""
        msg_id = request_id_from_head(head)
        log.error(
            "refused a message of %d bytes (the most is %d): %s",
            length,
            MAX_MESSAGE_BYTES,
            f"request {msg_id!r} answered -32600" if msg_id is not None else "no request id found",
        )
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "error": {
                    "code": -32600,
                    "message": f"message of {length} bytes refused: the most kenning reads is "
                    f"{MAX_MESSAGE_BYTES} bytes",
                },
            }
        )


class _LspLogHandler(logging.Handler):
    def __init__(self, server: KenningServer) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # A file name that is not UTF-8 (lone surrogates) must not break the JSON writer.
            msg = self.format(record).encode("utf-8", "backslashreplace").decode("utf-8")
        except Exception:
            return
        kind = (
            T.MessageType.Error
            if record.levelno >= logging.ERROR
            else T.MessageType.Warning
            if record.levelno >= logging.WARNING
            else T.MessageType.Info
            if record.levelno >= logging.INFO
            else T.MessageType.Log
        )
        self.server.call_on_loop(
            lambda: self.server.window_log_message(T.LogMessageParams(type=kind, message=msg))
        )


class KenningServer(LanguageServer):
    def __init__(self) -> None:
        # Handlers that block run in kenning's own pools; pygls' pool also reads stdin, so keep
        # it roomy (library-notes: a busy pool delays unrelated requests by seconds).
        super().__init__("kenning", __version__, protocol_cls=KenningProtocol, max_workers=8)
        self.options = Options()
        self.folders: dict[str, FolderIndex] = {}
        self.folders_lock = threading.Lock()
        self.request_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="kenning-request"
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.client_caps: T.ClientCapabilities | None = None
        self.parent_pid: int | None = None
        self.poll_interval: float | None = None  # set when the client cannot watch files
        self._log_handler = _LspLogHandler(self)
        self._log_handler.setFormatter(logging.Formatter("%(message)s"))

    # -- plumbing ----------------------------------------------------------------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' stdio server, reading through a reader that bounds every message."""
        self._stop_event = threading.Event()
        reader = BoundedStdinReader(
            stdin or sys.stdin.buffer, self.thread_pool, cast(KenningProtocol, self.protocol).refuse_oversized
        )
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(
                run_async(
                    stop_event=self._stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=logging.getLogger("pygls.server"),
                    error_handler=self.report_server_error,
                )
            )
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    def call_on_loop(self, fn: Callable[[], Any]) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is closing during shutdown
            loop.call_soon_threadsafe(fn)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Log, never pop up a dialog: a malformed message is the client's bug, not the user's.
        log.error("protocol error (%s): %s", getattr(source, "__name__", source), error)

    def supports_progress(self) -> bool:
        caps = self.client_caps
        return bool(caps and caps.window and caps.window.work_done_progress)

    def apply_log_level(self) -> None:
        log.setLevel(_LOG_LEVELS.get(self.options.log_level, logging.INFO))

    # -- folders -----------------------------------------------------------------------------

    def add_folder(self, uri: str, *, several: bool) -> None:
        path = uri_to_path(uri)
        if path is None or not path.is_dir():
            log.warning("ignoring workspace folder %s: not a local directory", uri[:200])
            return
        root = Path(os.path.realpath(path))
        with self.folders_lock:
            if uri in self.folders:
                return
            same = next((f for f in self.folders.values() if f.root == root), None)
            if same is not None:
                # Two URIs for one directory (a symlinked path): one index, or every hit twice.
                log.warning("workspace folder %s is %s again; indexed once", uri[:200], same.uri[:200])
                return
            folder = FolderIndex(
                uri, root, self.options.config_for(root, several_folders=several), Reporter(self)
            )
            self.folders[uri] = folder
            folder.exclude_dirs = _nested_dirs(root, [f.root for f in self.folders.values()])
        folder.poll_interval = self.poll_interval
        folder.start(index_now=self.options.index_on_startup)
        self._update_nesting()
        log.info(
            "workspace folder %s: index at %s", display_path(root), display_path(folder.engine.store_dir)
        )

    def remove_folder(self, uri: str) -> None:
        with self.folders_lock:
            folder = self.folders.pop(uri, None)
        if folder is not None:
            folder.mark_closing()  # no new requests; the ones in flight finish before it closes
            threading.Thread(target=folder.stop, daemon=True).start()
            log.info("workspace folder %s removed", uri[:200])
            self._update_nesting()

    def _update_nesting(self) -> None:
        """Each folder leaves the folders nested in it to their own index (see FolderIndex)."""
        folders = self.folder_list()
        roots = [f.root for f in folders]
        for f in folders:
            f.set_exclude_dirs(_nested_dirs(f.root, roots))

    def folder_list(self) -> list[FolderIndex]:
        with self.folders_lock:
            return list(self.folders.values())

    def locate(self, uri: str) -> tuple[FolderIndex, str] | None:
        """The folder and relative path of a client URI, or None for anything outside them."""
        path = uri_to_path(uri)
        if path is None:
            log.info("ignoring %s: not a file: URI", uri[:200])
            return None
        folders = self.folder_list()
        found = resolve_inside([f.root for f in folders], path)
        if found is None:
            log.info("ignoring %s: outside every workspace folder", uri[:200])
            return None
        root, rel = found
        # The innermost folder wins when folders nest.
        owner = max((f for f in folders if f.root == root), key=lambda f: len(str(f.root)))
        return owner, rel

    def stop_all(self) -> None:
        folders = self.folder_list()
        threads = [threading.Thread(target=f.stop, daemon=True) for f in folders]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)

    def index_summary(self) -> dict[str, Any]:
        order = {"error": 0, "scanning": 1, "embedding": 2, "ready": 3}
        states, files, chunks, embedded, pending = [], 0, 0, 0, 0
        for f in self.folder_list():
            st = f.status()
            states.append(st.state)
            files += st.files
            chunks += st.chunks
            embedded += st.embedded
            pending += st.pending
        state = min(states, key=lambda s: order.get(s, 0)) if states else "ready"
        return {"state": state, "files": files, "chunks": chunks, "embedded": embedded, "pending": pending}


def _nested_dirs(root: Path, roots: list[Path]) -> tuple[str, ...]:
    """The roots strictly inside ``root``, relative to it (as discovery spells paths)."""
    prefix = str(root).rstrip("/") + "/"
    return tuple(sorted(str(r)[len(prefix) :] for r in roots if str(r).startswith(prefix)))


server = KenningServer()
