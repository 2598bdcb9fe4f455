"""Commands the clients call: re-index and status.

Powers, in the editor: `Kenning: Re-index Workspace` (``kenning.reindex``) and `Kenning: Show
Index Status` (``kenning.status``), through ``workspace/executeCommand``.
"""

from __future__ import annotations

import logging
from typing import Any

from kenning.lsp import protocol as P
from kenning.lsp.server import KenningServer, server

log = logging.getLogger("kenning")


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
