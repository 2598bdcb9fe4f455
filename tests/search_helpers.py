"""An engine over a test workspace, indexed and embedded with the packaged model: what the search
tests rank against."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from kenning.config import Config
from kenning.embedding import Encoder
from kenning.engine import Engine
from kenning.indexer import update


def indexed(root: Path, encoder: Encoder | None = None) -> Iterator[Engine]:
    """An engine over ``root``, indexed and embedded with ``encoder`` (the packaged model)."""
    model = encoder or Encoder.load()
    with Engine(root, Config(), encoder_factory=lambda _c: model).open() as eng:
        update(eng)
        yield eng


def indexed_files(root: Path, files: Mapping[str, str], encoder: Encoder | None = None) -> Iterator[Engine]:
    """``files`` (relative path → text) written under ``root``, then ``indexed``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    yield from indexed(root, encoder)
