"""Index status and progress to the client: the status-bar item and the indexing notification.

Powers, in the editor: the `kenning` status-bar item (``kenning/indexStatus`` notifications), the
indexing progress notification with its Cancel button (``$/progress``), and the one error dialog
a user must act on (a model that cannot load, a store that cannot open).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types as T

from kenning.folder import FolderIndex
from kenning.lsp import protocol as P

if TYPE_CHECKING:
    from kenning.lsp.server import KenningServer


log = logging.getLogger("kenning")


class Reporter:
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
