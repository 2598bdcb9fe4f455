"""An engine over a test workspace, indexed and embedded with the packaged model: what the search
tests rank against."""

from __future__ import annotations

from collections.abc import Iterator
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
