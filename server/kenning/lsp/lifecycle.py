"""Start, settings, workspace folders and shutdown.

Powers, in the editor: nothing visible by itself — the server starting when a folder opens
(``initialize``/``initialized``), settings edits taking effect (``workspace/didChangeConfiguration``,
a re-index when they change the index's shape), folders added to or removed from a multi-root
workspace, and the server leaving when the editor closes or dies.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from lsprotocol import types as T

from kenning.folder import POLL_INTERVAL_S
from kenning.lsp.options import parse_options
from kenning.lsp.server import KenningServer, server

log = logging.getLogger("kenning")


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
