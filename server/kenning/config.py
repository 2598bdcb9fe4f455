"""Settings of one workspace's index, shared by the CLI and the language server."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.embedding.endpoint_config import EndpointSettings

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
STORE_DIRNAME = ".kenning"


@dataclass(frozen=True, slots=True)
class Config:
    store: Path | None = None  # None: <root>/.kenning (or $KENNING_STORE)
    model: str | None = None  # None: the packaged all-MiniLM-L6-v2
    model_variant: str = "auto"  # "auto" | "optimized" | "original"
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    embed_threads: int = 0  # cores the model may use; 0: all physical cores
    embedding: EndpointSettings | None = None  # an OpenAI-compatible server instead of the local model
    extra: dict[str, str] = field(default_factory=dict)
    # The user-level embedding cache shared by every store (kenning.embedding.shared); also off
    # with KENNING_SHARED_CACHE=0. Its cap: None means $KENNING_CACHE_MAX, else 2 GiB.
    shared_cache: bool = True
    shared_cache_max: int | None = None
    # An index pack imported into the shared cache before embedding (again when the file changes).
    import_pack: str | None = None
    # The model's query adapter (kenning.embedding.adapter); also off with KENNING_QUERY_ADAPTER=0.
    query_adapter: bool = True

    # The packaged model's code-tuned last layers (kenning.embedding.layer_patch); also off with
    # KENNING_CODE_LAYER=0 (the model's own weights: another model id, so stores re-embed).
    code_layer: bool = True

    def query_adapter_on(self) -> bool:
        return self.query_adapter and not _switched_off("KENNING_QUERY_ADAPTER")

    def code_layer_on(self) -> bool:
        return self.code_layer and not _switched_off("KENNING_CODE_LAYER")

    def shared_cache_on(self) -> bool:
        return self.shared_cache and not _switched_off("KENNING_SHARED_CACHE")

    def store_dir(self, root: Path) -> Path:
        if self.store is not None:
            return self.store if self.store.is_absolute() else root / self.store
        env = os.environ.get("KENNING_STORE")
        if env:
            p = Path(env).expanduser()
            return p if p.is_absolute() else root / p
        return root / STORE_DIRNAME


def _switched_off(variable: str) -> bool:
    """Whether the environment turns a feature off (``0``, ``off``, ``false`` or ``no``)."""
    return os.environ.get(variable, "").strip().lower() in ("0", "off", "false", "no")
