"""The rows that cross the store's boundary: what a query returns (``FileRow``, ``ChunkRow``,
``SymbolRow``) and what the indexer writes (``NewChunk``, ``NewSymbol``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class FileRow(NamedTuple):
    """One file the store knows. A tuple: an unchanged scan of 100,000 files reads them all,
    and a frozen dataclass cost ~3 µs a row to build there."""

    id: int
    path: str
    size: int
    mtime_ns: int
    content_hash: str | None
    language: str | None
    skip_reason: str | None


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    file_id: int
    path: str
    language: str
    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    header: str
    text: str


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk about to be written: what the chunker produced plus its derived columns."""

    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    header: str
    text: str
    idents: str
    embed_key: bytes


@dataclass(frozen=True, slots=True)
class NewSymbol:
    name: str
    kind: str
    container: str | None
    start_line: int
    end_line: int
    name_line: int
    name_col: int


@dataclass(frozen=True, slots=True)
class SymbolRow:
    id: int
    path: str
    name: str
    kind: str
    container: str | None
    start_line: int
    end_line: int
    name_line: int
    name_col: int


class PendingChunk(NamedTuple):
    """A chunk whose model input has no vector yet, as the embedding pass reads it."""

    id: int
    embed_key: bytes
    path: str
    header: str
    text: str
