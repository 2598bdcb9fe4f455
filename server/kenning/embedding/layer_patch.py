"""The code-tuned layers: new weights for the packaged model's last transformer layers.

Owns :func:`load_patch`, :func:`replace_initializers` and :func:`apply_patch` (the two in turn).

all-MiniLM-L6-v2 learned sentences, not code. Its last three layers (of six) were fine-tuned on
doc-comment sentences, names and the code they describe from libraries that are in no benchmark
(``python -m bench.layer_patch``): queries and chunks both pass through them, so a sentence
about code lands nearer the code. Only those layers' weights change, so the patch is small
(4.9 MB: int8 matrices with per-column scales, as the packaged file stores them, and fp32 biases
and layer norms) and is applied to the packaged file when the model loads (the encoder caches the
patched file, so only a first start needs onnx); the patched graph then goes through the usual
optimisation and its own cache entry.

The file is ``.npz`` (read with ``allow_pickle=False``): ``source_sha``, the SHA-256 of the
ONNX file it patches, and one array per replaced initializer, named as in that file. It applies
only to that file, and only when every array matches its initializer's shape and type: for any
other model it is left out, never misapplied.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kenning.embedding.cache import sha256_hex
from kenning.embedding.model import ModelError
from kenning.embedding.npzfile import read_npz

if TYPE_CHECKING:
    import onnx

__all__ = ["MAX_PATCH_BYTES", "apply_patch", "load_patch", "replace_initializers"]

#: No member of a patch file may unpack to more than this: a layer's biggest matrix is
#: 384 x 1536 int8 (590 KB). A bigger member is refused before it is read.
MAX_PATCH_BYTES = 8 * 1024 * 1024
_SOURCE_KEY = "source_sha"


def load_patch(path: Path) -> tuple[str, dict[str, np.ndarray]]:
    """``(source_sha, {initializer name: array})`` of a patch file; :class:`ModelError` names
    the file and what is wrong with it."""
    arrays = read_npz(
        path, label="layer patch", max_member_bytes=MAX_PATCH_BYTES, limit_words=f"{MAX_PATCH_BYTES} bytes"
    )
    if _SOURCE_KEY not in arrays:
        raise ModelError(f"layer patch {path}: missing {_SOURCE_KEY}")
    source_sha = str(arrays.pop(_SOURCE_KEY))
    if not arrays:
        raise ModelError(f"layer patch {path}: holds no weights")
    for name, array in arrays.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise ModelError(f"layer patch {path}: {name} holds values that are not finite")
    return source_sha, arrays


def apply_patch(source: bytes, path: Path) -> bytes | None:
    """``source`` (an ONNX file's bytes) with the patch's initializers replaced, or None when
    the patch was made for another file. :class:`ModelError` when the patch is unreadable or
    does not fit the graph (a name it lacks, another shape or type)."""
    source_sha, arrays = load_patch(path)
    if sha256_hex(source) != source_sha:
        return None
    return replace_initializers(source, arrays, path)


def replace_initializers(source: bytes, arrays: dict[str, np.ndarray], path: Path) -> bytes:
    """``source`` with each named initializer replaced by its array (``path`` names the patch in
    errors). Needs the onnx package."""
    import onnx
    from onnx import numpy_helper

    try:
        model = onnx.load_from_string(source)
    except Exception as exc:  # onnx raises DecodeError and others for a bad file
        raise ModelError(f"cannot read the model to patch: {exc}") from exc
    slots = _initializers(model)
    for name, array in arrays.items():
        slot = slots.get(name)
        if slot is None:
            raise ModelError(f"layer patch {path}: the model has no initializer {name}")
        old = numpy_helper.to_array(slot)
        if old.shape != array.shape or old.dtype != array.dtype:
            raise ModelError(
                f"layer patch {path}: {name} is {array.dtype} {array.shape}, "
                f"the model's is {old.dtype} {old.shape}"
            )
        slot.CopyFrom(numpy_helper.from_array(array, name))
    patched: bytes = model.SerializeToString()
    return patched


def _initializers(model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    return {tensor.name: tensor for tensor in model.graph.initializer}
