"""The engine's embedding model: loading it (or connecting to an endpoint), binding the store's
vectors to it, and telling without loading it whether the vectors are current (a mixin of
``Engine``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kenning.config import Config
from kenning.embedding.backend import EmbeddingBackend, EmbeddingUnavailable, RemoteBackend
from kenning.engine.vectors import CHURN_REBUILD_RATIO, VECTOR_META, recorded_vector_file
from kenning.store.db import Database
from kenning.store.schema import EMBEDDED_THROUGH
from kenning.store.vectors import VectorIndex, clean_stale_files

if TYPE_CHECKING:
    from kenning.embedding import Encoder

log = logging.getLogger(__name__)

EncoderFactory = Callable[[Config], "Encoder | EmbeddingBackend"]
#: The store's record of the probe vector an endpoint gave (see ``RemoteBackend``).
PROBE_META = "model_probe"
# Meta key: the fingerprint of the local model configuration the vectors were made with
# (``Engine.model_fingerprint``), so an unchanged ``kenning index`` can skip loading the model.
MODEL_FINGERPRINT = "model_fingerprint"


def default_encoder_factory(config: Config) -> Encoder | EmbeddingBackend:
    """The local ONNX model, or the OpenAI-compatible endpoint the config names."""
    if config.embedding is not None:
        from kenning.embedding.endpoint import EndpointEmbedder

        return EndpointEmbedder(config.embedding)
    from kenning.embedding import Encoder

    return Encoder.load(
        config.model,
        variant=config.model_variant,
        threads=config.embed_threads,
        query_adapter=config.query_adapter_on(),
        layer_patch=config.code_layer_on(),
    )


class ModelBinding:
    """The model half of ``Engine`` (its attributes are set in ``Engine.__init__``)."""

    root: Path
    config: Config
    db: Database | None
    store_dir: Path
    read_only: bool
    vectors: VectorIndex | None
    vectors_in_step: bool
    churn: int
    model_error: str | None
    embed_outage: EmbeddingUnavailable | None
    _encoder: EmbeddingBackend | None
    _encoder_lock: threading.Lock
    _encoder_factory: EncoderFactory
    _unconnected: EmbeddingBackend | None
    _vectors_deferred: bool
    drop_graph_load: Callable[[], None]  # VectorKeeping's

    def encoder(self, *, quick: bool = False) -> EmbeddingBackend | None:
        """The backend, loaded on first use; None (with ``model_error`` set) if it cannot load,
        or (with ``embed_outage`` set) while its endpoint is unreachable. ``quick``: a request
        is waiting, so an endpoint gets one short try."""
        if self._encoder is not None or self.model_error is not None:
            return self._encoder
        outage = self.embed_outage
        if outage is not None and (time.time() < outage.retry_at or (quick and not self.read_only)):
            # A query never waits on a reconnect: the indexer's retry job does that (a reader
            # of another process's store has no indexer, so its queries try, briefly).
            return None
        with self._encoder_lock:
            if self._encoder is None and self.model_error is None:
                try:
                    # An endpoint that failed to connect is kept and asked again (its outage
                    # count paces the retries), not built anew.
                    enc = self._unconnected or self._encoder_factory(self.config)
                    if isinstance(enc, RemoteBackend):
                        self._unconnected = enc
                        enc.connect(quick=quick)
                        self._unconnected = None
                    self._encoder = enc
                    self.embed_outage = None
                except EmbeddingUnavailable as exc:
                    self.embed_outage = exc
                    log.warning("%s; lexical search still works, retrying at %s", exc, exc.retry_text())
                except Exception as exc:
                    self.model_error = f"the embedding model could not be loaded: {exc}"
                    log.error("%s; lexical search still works", self.model_error)
        return self._encoder

    def embedding_receiver(self) -> str | None:
        """The ``scheme://host:port`` that receives code for embedding, or None (local model)."""
        settings = self.config.embedding
        return settings.receiver if settings is not None else None

    def model_matches(self) -> bool:
        """Whether the store's vectors were made by the loaded encoder (dense search is valid)."""
        enc = self._encoder
        return enc is not None and self.db is not None and self.db.get_meta("model_id") == enc.model_id

    def bind_model(self) -> EmbeddingBackend | None:
        """Load the encoder and make the store's vectors its own, clearing another model's.

        An endpoint's model is also checked by its probe vector: the same name and dimension
        with a different vector means the server swapped the model, and the store re-embeds.
        """
        enc = self.encoder()
        if enc is None or self.db is None or self.read_only:
            return enc
        stored = self.db.get_meta("model_id")
        remote = enc if isinstance(enc, RemoteBackend) else None
        if stored == enc.model_id:
            recorded = self.db.get_meta(PROBE_META)
            if remote is None:
                self._record_model_fingerprint()
                return enc
            reason = remote.probe_mismatch(recorded) if recorded is not None else None
            if reason is None:
                if recorded is None:
                    with self.db.transaction() as conn:
                        self.db.set_meta(conn, PROBE_META, remote.probe_record())
                return enc
            log.warning("%s: re-embedding the index of %s", reason, self.root)
        elif stored is not None:
            log.warning(
                "the index was embedded with %s, the model now is %s: re-embedding",
                stored,
                enc.model_id,
            )
        with self.db.transaction() as conn:
            self.db.clear_embeddings(conn)
            self.db.set_meta(conn, "model_id", enc.model_id)
            self.db.set_meta(conn, "model_dim", str(enc.dim))
            if remote is not None:
                self.db.set_meta(conn, PROBE_META, remote.probe_record())
            else:
                self.db.delete_meta(conn, PROBE_META)
            # The vector bookkeeping and the origin counters ("origin_…") start again.
            self.db.delete_meta(conn, *VECTOR_META, EMBEDDED_THROUGH, MODEL_FINGERPRINT, prefix="origin_")
        self.drop_graph_load()  # the saved graph holds the old model's vectors
        self.vectors = VectorIndex(enc.dim)
        self._vectors_deferred = False
        self.vectors_in_step = False
        self.churn = 0
        clean_stale_files(self.store_dir, None)
        self._record_model_fingerprint()
        return enc

    def model_fingerprint(self) -> str | None:
        """What decides the local model's id, from the config and the model files' sizes and
        mtimes, without loading it (None: an endpoint, a caller's own encoder factory, or a
        model that cannot be found). Equal fingerprints mean the model the store is bound to."""
        if self.config.embedding is not None or self._encoder_factory is not default_encoder_factory:
            return None
        import hashlib
        import json

        import kenning
        from kenning.embedding.model import ModelError, resolve_model

        try:
            spec = resolve_model(self.config.model)
            paths = [spec.onnx_path, spec.tokenizer_path]
            if self.config.code_layer_on() and spec.layer_patch is not None and spec.layer_patch.is_file():
                paths.append(spec.layer_patch)
            files = [(str(p), os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in paths]
        except (ModelError, OSError):
            return None
        # The kenning version stands for the optimisation recipe (part of the model id).
        described = json.dumps(
            [repr(spec), self.config.model_variant, self.config.code_layer_on(), files, kenning.__version__]
        )
        return hashlib.sha256(described.encode()).hexdigest()[:32]

    def _record_model_fingerprint(self) -> None:
        """Remember which model configuration the store's vectors are bound to (see
        ``embedding_current``); written only when it changed."""
        if self.db is None or self.read_only:
            return
        fingerprint = self.model_fingerprint()
        if fingerprint is not None and self.db.get_meta(MODEL_FINGERPRINT) != fingerprint:
            with self.db.transaction() as conn:
                self.db.set_meta(conn, MODEL_FINGERPRINT, fingerprint)

    def embedding_current(self) -> bool:
        """Whether an embedding pass would find nothing to do, told without loading the model or
        the graph: the store is bound to the configured local model (its fingerprint), every
        chunk has a vector, and the recorded graph file holds them all (its size as recorded;
        its MAC is checked whenever it is loaded). ``kenning index`` on an unchanged tree at
        100k chunks spent ~0.4 s loading the model and ~0.9 s on the graph for nothing."""
        db = self.db
        if db is None or self.read_only:
            return False
        fingerprint = self.model_fingerprint()
        if (
            fingerprint is None
            or db.get_meta(MODEL_FINGERPRINT) != fingerprint
            or db.get_meta("model_id") is None
        ):
            return False
        counts = db.counts()
        if counts["pending"] or db.get_meta_int(EMBEDDED_THROUGH, 0) != db.max_chunk_id():
            return False
        info = recorded_vector_file(db)
        if info is None or info.count != counts["chunks"]:
            return False
        if db.get_meta_int("vectors_churn", 0) > CHURN_REBUILD_RATIO * max(info.count, 1000):
            return False
        try:
            return os.stat(self.store_dir / info.name).st_size == info.size
        except OSError:
            return False
