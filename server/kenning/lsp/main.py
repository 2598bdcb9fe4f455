"""Serving: logging to stderr, the feature modules registered, stdio or TCP until exit."""

from __future__ import annotations

import logging
import os

from pygls.exceptions import JsonRpcInvalidParams

# Importing a feature module registers its handlers on ``server``.
from kenning.lsp import commands, lifecycle, semantic, symbols, sync  # noqa: F401
from kenning.lsp.server import server

log = logging.getLogger("kenning")


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
