"""Embedding: turn texts into vectors with an ONNX sentence-embedding model, on the CPU.

The public face of the package; the pieces live in submodules:

- ``model``: which model (the packaged all-MiniLM-L6-v2 int8 or a user's directory), as a
  :class:`ModelSpec` of files and settings;
- ``encoder``: :class:`Encoder` (tokenize, batch under a token budget, run, pool, normalise);
- ``graph``: the optimised graph recipe (fused attention, int8 MatMuls);
- ``cache``: where optimised graphs are kept between runs, atomically and verified.

Nothing here imports pygls, and nothing downloads anything.
"""

from __future__ import annotations

from kenning.embedding.encoder import EmbeddingCancelled, Encoder, Variant
from kenning.embedding.model import DEFAULT_MODEL_ID, ModelError, ModelSpec, resolve_model

__all__ = [
    "DEFAULT_MODEL_ID",
    "EmbeddingCancelled",
    "Encoder",
    "ModelError",
    "ModelSpec",
    "Variant",
    "resolve_model",
]
