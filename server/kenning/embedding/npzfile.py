"""Reading the small ``.npz`` files that ship beside a model (the query adapter, the layer patch)
safely: no pickle, and no member unpacked past a size the caller allows.

Owns :func:`read_npz`.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from kenning.embedding.model import ModelError

__all__ = ["read_npz"]


def read_npz(path: Path, *, label: str, max_member_bytes: int, limit_words: str) -> dict[str, np.ndarray]:
    """Every array in ``path`` by name. Sizes are checked first, from the zip's directory: a
    member that would unpack to more than ``max_member_bytes`` is refused before anything is
    read. :class:`ModelError` says "``label`` ``path``" and what is wrong (``limit_words``
    describes the limit)."""
    try:
        with zipfile.ZipFile(path) as archive:
            oversized = [i.filename for i in archive.infolist() if i.file_size > max_member_bytes]
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{label} {path} cannot be read: {exc}") from exc
    if oversized:
        raise ModelError(f"{label} {path}: {', '.join(oversized)} larger than {limit_words}")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: np.asarray(data[name]) for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelError(f"{label} {path} cannot be read: {exc}") from exc
