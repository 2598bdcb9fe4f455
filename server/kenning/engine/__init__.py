"""One workspace root's index: opening and repairing the store, and the model it is bound to.

The engine is what the CLI and the language server hold. It owns the store directory (SQLite,
HNSW file, writer lock) and the encoder, and hands them to ``indexer`` (writing) and ``search``
(reading). It never imports pygls.

- ``core``: the ``Engine`` (open, close, checks and repairs of the store, state, status);
- ``model``: loading the model or connecting to an endpoint, binding the vectors to it;
- ``vectors``: the HNSW graph: load, reconcile with SQLite, rebuild, save.
"""

from __future__ import annotations

from kenning.engine.core import Engine, Status
from kenning.engine.model import EncoderFactory, default_encoder_factory

__all__ = ["EncoderFactory", "Engine", "Status", "default_encoder_factory"]
