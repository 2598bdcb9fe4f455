"""The language server: pygls handlers over the engine, one index per workspace folder.

Powers, in the editor: the `Kenning: Semantic Search` palette (``workspace/semanticSearch``),
`Go to Symbol in Workspace` (``workspace/symbol``), `Find Similar Code` (``kenning/similar``),
the indexing progress notification and the status-bar item (``kenning/indexStatus``).
Handlers validate, call the engine off the event loop, and convert to LSP shapes; nothing here
decides how to index or rank.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage

from kenning import __version__
from kenning.folder import POLL_INTERVAL_S, FolderIndex
from kenning.lsp import protocol as P
from kenning.lsp.framing import (
    MAX_MESSAGE_BYTES,
    REFUSED_BODY,
    BoundedStdinReader,
    request_id_from_head,
)
from kenning.lsp.options import Options, parse_options
from kenning.search import SearchCancelled, SearchError, SearchResponse, search, similar
from kenning.store.db import StoreClosed
from kenning.workset import WorkingSet
from kenning.workspace import (
    display_path,
    path_to_text,
    path_to_uri,
    resolve_inside,
    text_to_path,
    uri_to_path,
)

log = logging.getLogger("kenning")

_IGNORED = object()  # a message already answered while it was being parsed
_REFUSED = json.loads(REFUSED_BODY)  # what the read loop is given for a body it did not read

SYMBOL_KINDS: dict[str, T.SymbolKind] = {
    "class": T.SymbolKind.Class,
    "interface": T.SymbolKind.Interface,
    "struct": T.SymbolKind.Struct,
    "enum": T.SymbolKind.Enum,
    "trait": T.SymbolKind.Interface,
    "type": T.SymbolKind.TypeParameter,
    "function": T.SymbolKind.Function,
    "method": T.SymbolKind.Method,
    "constructor": T.SymbolKind.Constructor,
    "module": T.SymbolKind.Module,
    "namespace": T.SymbolKind.Namespace,
    "constant": T.SymbolKind.Constant,
    "variable": T.SymbolKind.Variable,
    "field": T.SymbolKind.Field,
    "property": T.SymbolKind.Property,
    "macro": T.SymbolKind.Function,
}

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
        # URIs the editor has open (didOpen may arrive before the folder is added): each
        # folder embeds its open files first (kenning.workset).
        self.open_uris = WorkingSet()
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
                uri, root, self.options.config_for(root, several_folders=several), _Reporter(self)
            )
            self.folders[uri] = folder
            folder.exclude_dirs = _nested_dirs(root, [f.root for f in self.folders.values()])
        folder.poll_interval = self.poll_interval
        for opened in reversed(self.open_uris.paths()):  # the oldest first: the newest ends first
            path = uri_to_path(opened)
            inside = resolve_inside([root], path) if path is not None else None
            if inside is not None:
                folder.file_opened(inside[1])
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


class _Reporter:
    """Sends a folder's status and progress to the client, always from the event loop."""

    def __init__(self, server: KenningServer) -> None:
        self.server = server
        self.shown: set[str] = set()

    def status(self, folder: FolderIndex) -> None:
        payload = P.status_to_wire(folder.uri, folder.status())
        self.server.call_on_loop(lambda: self.server.protocol.notify(P.INDEX_STATUS, payload))
        # Only what the user must act on becomes a dialog: a model that cannot load, or an
        # index that cannot be opened (unwritable store). Each is shown once.
        for problem in (folder.open_error, folder.engine.model_error):
            if problem and problem not in self.shown:
                self.shown.add(problem)
                params = T.ShowMessageParams(type=T.MessageType.Error, message=f"kenning: {problem}")
                self.server.call_on_loop(functools.partial(self.server.window_show_message, params))

    def progress_begin(self, folder: FolderIndex, title: str) -> str | None:
        server = self.server
        if not server.supports_progress() or server.loop is None:
            return None
        token = f"kenning-index-{uuid.uuid4().hex[:12]}"
        future = asyncio.run_coroutine_threadsafe(server.work_done_progress.create_async(token), server.loop)
        try:
            future.result(timeout=10)
        except Exception as exc:
            log.info("the client did not create a progress token: %s", exc)
            return None
        server.call_on_loop(
            lambda: server.work_done_progress.begin(
                token,
                T.WorkDoneProgressBegin(title=title, percentage=0, cancellable=True, message="scanning"),
            )
        )
        return token

    def progress_report(self, token: str, message: str, percentage: int) -> None:
        server = self.server
        server.call_on_loop(
            lambda: server.work_done_progress.report(
                token, T.WorkDoneProgressReport(message=message, percentage=percentage)
            )
        )

    def progress_end(self, token: str, message: str) -> None:
        server = self.server

        def end() -> None:
            server.work_done_progress.end(token, T.WorkDoneProgressEnd(message=message))
            server.work_done_progress.tokens.pop(token, None)

        server.call_on_loop(end)

    def progress_cancelled(self, token: str) -> bool:
        fut = self.server.work_done_progress.tokens.get(token)
        return fut is not None and fut.cancelled()


server = KenningServer()


# -- lifecycle -------------------------------------------------------------------------------


@server.feature(T.INITIALIZE)
def on_initialize(ls: KenningServer, params: T.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    ls.client_caps = params.capabilities
    ls.parent_pid = params.process_id
    logging.getLogger("kenning").addHandler(ls._log_handler)
    options, problems = parse_options(params.initialization_options)
    ls.options = options
    ls.apply_log_level()
    for problem in problems:
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=problem))
        log.warning("%s", problem)


@server.feature(T.INITIALIZED)
async def on_initialized(ls: KenningServer, params: T.InitializedParams) -> None:
    caps = ls.client_caps
    if caps and caps.workspace and caps.workspace.configuration:
        await _pull_configuration(ls)
    folders = list(ls.workspace.folders.values())
    uris = [f.uri for f in folders]
    if not uris and ls.workspace.root_uri:
        uris = [ls.workspace.root_uri]
    watch = caps and caps.workspace and caps.workspace.did_change_watched_files
    ls.poll_interval = None if watch and watch.dynamic_registration else POLL_INTERVAL_S
    for uri in uris:
        ls.add_folder(uri, several=len(uris) > 1)
    if watch and watch.dynamic_registration:
        try:
            await ls.client_register_capability_async(
                T.RegistrationParams(
                    registrations=[
                        T.Registration(
                            id="kenning-watch",
                            method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=T.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[T.FileSystemWatcher(glob_pattern="**/*")]
                            ),
                        )
                    ]
                )
            )
        except Exception as exc:
            log.info("the client declined file watching: %s", exc)
    if ls.parent_pid:
        threading.Thread(target=_watch_parent, args=(ls, ls.parent_pid), daemon=True).start()


async def _pull_configuration(ls: KenningServer) -> bool:
    """Read the `kenning` section; True when it changed something that needs a re-index."""
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                T.ConfigurationParams(items=[T.ConfigurationItem(section="kenning")])
            ),
            timeout=5,
        )
    except Exception as exc:
        log.info("workspace/configuration failed: %s", exc)
        return False
    raw = result[0] if isinstance(result, list | tuple) and result else None
    if hasattr(raw, "_asdict"):
        raw = _namedtuple_to_dict(raw)
    if not isinstance(raw, dict) or not raw:
        return False
    return _apply_options(ls, raw)


def _namedtuple_to_dict(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _namedtuple_to_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_namedtuple_to_dict(v) for v in value]
    return value


def _apply_options(ls: KenningServer, raw: dict[str, Any]) -> bool:
    before = ls.options
    options, problems = parse_options(raw, before)
    for problem in problems:
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=problem))
    ls.options = options
    ls.apply_log_level()
    index_keys: tuple[str, ...] = ("store_path", "model", "exclude", "max_file_size", "embed_threads")
    index_keys += ("embedding", "shared_cache", "shared_cache_max_size", "import_pack")
    return any(getattr(before, k) != getattr(options, k) for k in index_keys)


@server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_did_change_configuration(ls: KenningServer, params: T.DidChangeConfigurationParams) -> None:
    settings = params.settings
    changed = False
    if isinstance(settings, dict) and isinstance(settings.get("kenning"), dict):
        changed = _apply_options(ls, settings["kenning"])
    else:
        caps = ls.client_caps
        if caps and caps.workspace and caps.workspace.configuration:
            changed = await _pull_configuration(ls)
    if changed:
        log.info("settings that shape the index changed: reopening every folder")
        uris = [f.uri for f in ls.folder_list()]
        await asyncio.get_running_loop().run_in_executor(None, ls.stop_all)
        with ls.folders_lock:
            ls.folders.clear()
        for uri in uris:
            ls.add_folder(uri, several=len(uris) > 1)


@server.feature(T.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_did_change_folders(ls: KenningServer, params: T.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        ls.remove_folder(removed.uri)
    several = len(ls.folder_list()) + len(params.event.added) > 1
    for added in params.event.added:
        ls.add_folder(added.uri, several=several)


@server.feature(T.SHUTDOWN)
async def on_shutdown(ls: KenningServer, params: Any) -> None:
    await asyncio.get_running_loop().run_in_executor(None, ls.stop_all)


def _watch_parent(ls: KenningServer, pid: int) -> None:
    """Exit when the editor that started us is gone (pygls 2 no longer watches processId)."""
    import time

    while True:
        time.sleep(2)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            log.warning("the client process %d is gone; exiting", pid)
            ls.stop_all()
            os._exit(0)
        except PermissionError:
            pass  # alive, owned by someone else


# -- keeping the index current ---------------------------------------------------------------


def _mark(ls: KenningServer, uris: list[str]) -> None:
    by_folder: dict[str, tuple[FolderIndex, list[str]]] = {}
    for uri in uris:
        found = ls.locate(uri)
        if found is None:
            continue
        folder, rel = found
        by_folder.setdefault(folder.uri, (folder, []))[1].append(rel)
    for folder, rels in by_folder.values():
        folder.mark_dirty(rels)


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def on_did_open(ls: KenningServer, params: T.DidOpenTextDocumentParams) -> None:
    """An open file is embedded before the rest of a large index (see kenning.workset)."""
    uri = params.text_document.uri
    ls.open_uris.opened(uri)
    found = ls.locate(uri) if ls.folder_list() else None
    if found is not None:
        found[0].file_opened(found[1])


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def on_did_save(ls: KenningServer, params: T.DidSaveTextDocumentParams) -> None:
    _mark(ls, [params.text_document.uri])


@server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched_files(ls: KenningServer, params: T.DidChangeWatchedFilesParams) -> None:
    _mark(ls, [c.uri for c in params.changes])


@server.feature(T.WORKSPACE_DID_RENAME_FILES)
def on_did_rename(ls: KenningServer, params: T.RenameFilesParams) -> None:
    _mark(ls, [u for f in params.files for u in (f.old_uri, f.new_uri)])


@server.feature(T.WORKSPACE_DID_DELETE_FILES)
def on_did_delete(ls: KenningServer, params: T.DeleteFilesParams) -> None:
    _mark(ls, [f.uri for f in params.files])


# -- search ----------------------------------------------------------------------------------


class _FolderClosed(Exception):
    """The folder was removed (its index closed) while a request was reading it."""


_R = TypeVar("_R")


@contextlib.contextmanager
def _unless_closed(folder: FolderIndex) -> Iterator[None]:
    """Read a folder's engine for one request. The folder is not closed while the request runs
    (FolderIndex.begin_read), nor is its database (``Database.in_use``: the engine may also reopen
    its store, as after ``git clean -fdx``); a folder already closing, or any failure caused by
    its closing, becomes _FolderClosed: the request answers without that folder, never -32603."""
    if not folder.begin_read():  # closing, or not open yet: the engine must not be touched
        raise _FolderClosed
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
            raise _FolderClosed from None
        raise
    finally:
        folder.end_read()


async def _run_cancellable(ls: KenningServer, work: Callable[[threading.Event], _R]) -> _R:
    """Run blocking work in kenning's pool; a cancelled request stops it at its next checkpoint."""
    cancel = threading.Event()
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(ls.request_pool, work, cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise


def _merged(
    ls: KenningServer, responses: list[tuple[FolderIndex, SearchResponse]], limit: int
) -> dict[str, Any]:
    hits: list[tuple[float, dict[str, Any]]] = []
    lexical_only = False
    for folder, response in responses:
        lexical_only = lexical_only or response.lexical_only
        for note in response.notes:
            log.info("%s: %s", folder.root.name, note)
        hits.extend(
            (h.score, P.hit_to_wire(h, path_to_uri(folder.root / text_to_path(h.path))))
            for h in response.hits
        )
    hits.sort(key=lambda sh: -sh[0])
    index = ls.index_summary()
    if lexical_only:
        index["lexicalOnly"] = True
    return {"results": [h for _, h in hits[:limit]], "index": index}


@server.feature(P.SEMANTIC_SEARCH)
async def on_semantic_search(ls: KenningServer, params: Any) -> dict[str, Any]:
    try:
        query = P.parse_search_params(params, ls.options.max_results)
    except P.InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if not query.text.strip():
        return {"results": [], "index": ls.index_summary()}

    def work(cancel: threading.Event) -> dict[str, Any]:
        responses = []
        for folder in ls.folder_list():
            if not folder.usable:
                continue
            try:
                with _unless_closed(folder):
                    responses.append((folder, search(folder.engine, query, should_stop=cancel.is_set)))
            except _FolderClosed:
                continue
            except SearchError as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            except SearchCancelled:
                return {"results": [], "index": ls.index_summary()}
        return _merged(ls, responses, query.limit)

    return await _run_cancellable(ls, work)


@server.feature(P.SIMILAR)
async def on_similar(ls: KenningServer, params: Any) -> dict[str, Any]:
    try:
        req = P.parse_similar_params(params, ls.options.max_results)
    except P.InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    found = ls.locate(req.uri)
    if found is None:
        raise JsonRpcInvalidParams("textDocument.uri is not a file inside a workspace folder")
    owner, rel = found
    doc = ls.workspace.text_documents.get(req.uri)
    selected: str | None = None
    if doc is not None and (req.start_line, req.start_character) != (req.end_line, req.end_character):
        lines = doc.source.split("\n")
        part = lines[req.start_line : req.end_line + 1]
        if part:
            part[-1] = (
                part[-1][: req.end_character]
                if len(part) > 1
                else part[-1][req.start_character : req.end_character]
            )
            if len(part) > 1:
                part[0] = part[0][req.start_character :]
        selected = "\n".join(part)

    def work(cancel: threading.Event) -> dict[str, Any]:
        if not owner.usable:
            return {"results": [], "index": ls.index_summary()}
        try:
            with _unless_closed(owner):
                response = similar(
                    owner.engine,
                    path_to_text(rel),
                    req.start_line + 1,
                    req.end_line + 1,
                    limit=req.limit,
                    selected_text=selected,
                )
        except _FolderClosed:
            return {"results": [], "index": ls.index_summary()}
        return _merged(ls, [(owner, response)], req.limit)

    return await _run_cancellable(ls, work)


@server.feature(T.WORKSPACE_SYMBOL)
async def on_workspace_symbol(ls: KenningServer, params: T.WorkspaceSymbolParams) -> list[T.WorkspaceSymbol]:
    query = P.clean_text(params.query or "")[: P.MAX_QUERY_CHARS]
    limit = ls.options.symbol_limit

    def work(cancel: threading.Event) -> list[T.WorkspaceSymbol]:
        scored: list[tuple[float, T.WorkspaceSymbol]] = []
        for folder in ls.folder_list():
            if not folder.usable or cancel.is_set():
                continue
            try:
                with _unless_closed(folder):
                    found = folder.symbols.find(query, limit)
            except _FolderClosed:
                continue
            for hit in found:
                s = hit.symbol
                scored.append(
                    (
                        hit.score,
                        T.WorkspaceSymbol(
                            name=s.name,
                            kind=SYMBOL_KINDS.get(s.kind, T.SymbolKind.Variable),
                            container_name=s.container,
                            location=T.Location(
                                uri=path_to_uri(folder.root / text_to_path(s.path)),
                                range=T.Range(
                                    start=T.Position(line=s.start_line - 1, character=0),
                                    end=T.Position(line=s.end_line, character=0),
                                ),
                            ),
                        ),
                    )
                )
        scored.sort(key=lambda x: -x[0])
        return [w for _, w in scored[:limit]]

    return await _run_cancellable(ls, work)


# -- commands --------------------------------------------------------------------------------


@server.command(P.CMD_REINDEX)
def cmd_reindex(ls: KenningServer, *args: Any) -> None:
    # pygls spreads `arguments` over the parameters: none, or the folder URI.
    target = args[0] if args and isinstance(args[0], str) else None
    for folder in ls.folder_list():
        if target is None or folder.uri == target:
            folder.request_full_scan()


@server.command(P.CMD_STATUS)
def cmd_status(ls: KenningServer, *args: Any) -> list[dict[str, Any]]:
    out = []
    for f in ls.folder_list():
        payload = P.status_to_wire(f.uri, f.status())
        payload["reindexJobs"] = f.jobs_run
        out.append(payload)
    return out


class _AnsweredElsewhere(logging.Filter):
    """Drop pygls' tracebacks for requests kenning has already answered with -32602."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcInvalidParams):
            return False
        return not record.getMessage().startswith("Unable to deserialize message")


def _configure_stderr_logging() -> None:
    # Editors show stderr as errors (Neovim logs every line as [ERROR]): only warnings and worse
    # go there; everything else reaches the client through window/logMessage.
    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("kenning: %(levelname)s %(message)s"))
    handler.addFilter(_AnsweredElsewhere())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)


def run(tcp: str | None = None) -> int:
    """Serve over stdio (or TCP) until the client says exit or goes away."""
    _configure_stderr_logging()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            server.start_io()
    finally:
        server.stop_all()
    return 0
