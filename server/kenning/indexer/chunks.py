"""What a file's text becomes in the store: chunk rows (with the key of the exact text the model
sees for each) and symbol rows."""

from __future__ import annotations

import hashlib
import re

from kenning.chunking import chunk_source
from kenning.chunking.isolated import chunk_later
from kenning.chunking.model import ChunkedFile
from kenning.languages import LANGUAGES
from kenning.lexical import name_words, split_identifiers
from kenning.store.rows import NewChunk, NewSymbol
from kenning.workspace import SourceText

# A run of one punctuation character this long or longer is a ruler (`//=====…`, `# -----`,
# `/*****`), shortened to three characters in the model input: the tokenizer spends about one
# token per character on it (JUCE's 78-character `//====` banner costs 80 of the model's 256),
# so a chunk with two banners lost the members below them to truncation.
_RULER = re.compile(r"([=\-*/#~_+])\1{7,}")


def embed_input(path: str, header: str, text: str) -> str:
    """The exact text the model sees for a chunk: where it lives, then what it is, rulers
    shortened."""
    text = _RULER.sub(r"\1\1\1", text)
    return f"{path}\n{header}\n{text}" if header else f"{path}\n{text}"


def embed_key(model_input: str) -> bytes:
    return hashlib.blake2b(model_input.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class FileChunks:
    """A file's chunk and symbol rows, begun: a parsed language's file is chunked in the chunk
    worker (where a file it cannot get through costs only that file: chunking/isolated.py)
    while this process goes on; ``rows()`` waits for them."""

    def __init__(self, path: str, source: SourceText, language: str) -> None:
        self.path, self.source, self.language = path, source, language
        self._pending = (
            chunk_later(path, source.text, language) if LANGUAGES[language].parser == "tree-sitter" else None
        )

    def rows(self) -> tuple[list[NewChunk], list[NewSymbol]]:
        """The rows; ``ParserLimitError`` when the worker failed over the file."""
        if self._pending is not None:
            return _rows(self.path, self._pending.result())
        return _rows(self.path, chunk_source(self.path, self.source.text, self.language))


def new_chunks(path: str, source: SourceText, language: str) -> tuple[list[NewChunk], list[NewSymbol]]:
    return FileChunks(path, source, language).rows()


def _rows(path: str, chunked: ChunkedFile) -> tuple[list[NewChunk], list[NewSymbol]]:
    path_words = " ".join(name_words(path))
    chunks = []
    for c in chunked.chunks:
        idents = split_identifiers(c.text)
        symbol_words = " ".join(name_words(c.symbol)) if c.symbol else ""
        chunks.append(
            NewChunk(
                start_line=c.start_line,
                end_line=c.end_line,
                kind=c.kind,
                symbol=c.symbol,
                header=c.header,
                text=c.text,
                idents=f"{symbol_words} {path_words} {idents}".strip(),
                embed_key=embed_key(embed_input(path, c.header, c.text)),
            )
        )
    symbols = [
        NewSymbol(
            name=s.name,
            kind=s.kind,
            container=s.container,
            start_line=s.start_line,
            end_line=s.end_line,
            name_line=s.name_line,
            name_col=s.name_col,
        )
        for s in chunked.symbols
    ]
    return chunks, symbols
