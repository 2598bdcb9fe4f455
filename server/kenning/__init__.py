"""kenning: find code by describing it.

The engine (workspace discovery, chunking, embedding, storage, search) lives in this package and
never imports pygls; the language server in ``kenning.lsp`` is a thin layer over it.
"""

from __future__ import annotations

__version__ = "0.1.0"
