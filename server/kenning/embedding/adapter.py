"""The query adapter: a linear map learned for one model that moves a query's vector toward the
vectors of the code it describes.

Owns :class:`QueryAdapter` and :func:`load_adapter`.

all-MiniLM-L6-v2 learned sentences, not code: "Returns the number of elements" and
``fn len(&self) -> usize`` land far apart. The adapter is ``q' = normalise(W q + b)`` applied
to query vectors only, so the stored chunk vectors (and Find Similar, code against code) are
untouched, and a store needs no re-embedding to gain or lose it. ``W`` and ``b`` were fitted
(``python -m bench.query_adapter``) on doc-comment sentences and names of libraries that are
not in any benchmark: Go, Rust, TypeScript, Python, Java and C++ from Debian, npm and PyPI.

The file is ``.npz`` (read with ``allow_pickle=False``): ``w`` (dim x dim), ``b`` (dim) and
``source_sha``, the SHA-256 of the ONNX file it was fitted for. It applies only to that model:
for any other it is ignored, never misapplied.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kenning.embedding.model import ModelError
from kenning.embedding.npzfile import read_npz

__all__ = ["QueryAdapter", "load_adapter"]


@dataclass(frozen=True, slots=True)
class QueryAdapter:
    weight: np.ndarray  # (dim, dim) float32
    bias: np.ndarray  # (dim,) float32
    source_sha: str  # the model file it was fitted for

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """``normalise(W v + b)`` as float32; a map that collapses ``v`` leaves it as it was."""
        mapped = self.weight @ vector.astype(np.float32) + self.bias
        norm = float(np.linalg.norm(mapped))
        if not np.isfinite(norm) or norm < 1e-6:
            return vector
        out: np.ndarray = (mapped / norm).astype(np.float32)
        return out


def load_adapter(path: Path, *, dim: int) -> QueryAdapter:
    """Read and check an adapter file; :class:`ModelError` names the file and what is wrong."""
    # A member bigger than a float64 dim x dim matrix is refused before anything is read.
    limit, words = dim * dim * 8 + 4096, f"a {dim}-dimension map"
    arrays = read_npz(path, label="query adapter", max_member_bytes=limit, limit_words=words)
    missing = [key for key in ("w", "b", "source_sha") if key not in arrays]
    if missing:
        raise ModelError(f"query adapter {path}: missing {', '.join(missing)}")
    try:
        weight = arrays["w"].astype(np.float32)
        bias = arrays["b"].astype(np.float32)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"query adapter {path} cannot be read: {exc}") from exc
    source_sha = str(arrays["source_sha"])
    if weight.shape != (dim, dim) or bias.shape != (dim,):
        raise ModelError(
            f"query adapter {path}: w {weight.shape} and b {bias.shape} do not fit a {dim}-dimension model"
        )
    if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
        raise ModelError(f"query adapter {path}: holds values that are not finite")
    return QueryAdapter(weight, bias, source_sha)
