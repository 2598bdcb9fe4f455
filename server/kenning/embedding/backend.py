"""What every embedding backend offers the engine, and the errors a remote one adds.

Two backends exist: the local ONNX :class:`~kenning.embedding.encoder.Encoder` (the default,
offline) and :class:`~kenning.embedding.endpoint.EndpointEmbedder` (an OpenAI-compatible
``/v1/embeddings`` server). The engine, indexer and search speak :class:`EmbeddingBackend`;
what only a remote backend has (a host that receives code, outages, a probe that proves which
model answers, requests to abort) is :class:`RemoteBackend`, checked with ``isinstance``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from kenning.types import ShouldStop

__all__ = [
    "EmbeddingBackend",
    "EmbeddingUnavailable",
    "RemoteBackend",
    "ShouldStop",
]


class EmbeddingUnavailable(Exception):
    """The embedding backend cannot answer now, but may later (an endpoint outage).

    ``retry_at`` is a ``time.time()`` timestamp: when trying again makes sense. Vectors
    already stored stay valid; search falls back to lexical results meanwhile.
    """

    def __init__(self, message: str, retry_at: float) -> None:
        super().__init__(message)
        self.retry_at = retry_at

    def retry_text(self) -> str:
        return time.strftime("%H:%M:%S", time.localtime(self.retry_at))


class EmbeddingBackend(Protocol):
    """Texts in, L2-normalised float32 vectors out, and a name for what produced them.

    ``model_id`` is the store's model identity: two backends with equal ids give vectors that
    may be mixed in one index (and shared through a cache keyed on it).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str], should_stop: ShouldStop | None = None) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class RemoteBackend(Protocol):
    """A backend that sends text off the process: what the engine must know about it."""

    #: ``scheme://host:port`` of the server that receives code (never a path, user or key).
    receiver: str

    def embed_query(self, text: str, should_stop: ShouldStop | None = None) -> np.ndarray:
        """As the local model's, and a newer query's ``should_stop`` aborts the request."""
        ...

    def connect(self, *, quick: bool = False) -> None:
        """Learn the dimension and the probe vector; raises :class:`EmbeddingUnavailable`."""

    def probe_record(self) -> str:
        """The recorded form of the probe vector, to compare with on the next open."""
        ...

    def probe_mismatch(self, recorded: str) -> str | None:
        """Why ``recorded`` shows another model answered before, or None if it is the same."""
        ...

    def close(self) -> None:
        """Abort every request in flight and release connections."""
