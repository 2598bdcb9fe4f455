"""Helpers of the chunking tests: normalised sources, the coverage invariants every chunking must
keep, and views of a result (symbols, spans, the chunk at a line)."""

from __future__ import annotations

import json
import re
import textwrap

from kenning.chunking import DEFAULT_MAX_CHARS, Chunk, ChunkedFile, Symbol, chunk_source
from kenning.lsp.symbols import SYMBOL_KINDS


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# glibc 2.36's `__strlen` (string/strlen.c), eight lines: a GNU-style definition with an attribute
# macro on a line of its own, then alias macros with no semicolon right below the body. The
# chunker's and the benchmark's C tests both parse it.
GLIBC_STRLEN = """size_t
attribute_hidden
__strlen (const char *str)
{
  return 0;
}
weak_alias (__strlen, strlen)
libc_hidden_builtin_def (strlen)
"""


def check_invariants(text: str, result: ChunkedFile, max_chars: int) -> None:
    """The guarantees every chunker makes, for any input."""
    lines = text.split("\n")
    covered = [0] * len(lines)
    previous_end = 0
    for chunk in result.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.start_line > previous_end, "chunks overlap or are out of order"
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert lines[chunk.start_line - 1].strip(), "chunk starts with a blank line"
        assert lines[chunk.end_line - 1].strip(), "chunk ends with a blank line"
        assert len(chunk.text) <= max_chars or chunk.start_line == chunk.end_line, (
            f"{len(chunk.text)} > {max_chars}: {chunk}"
        )
        assert chunk.kind
        assert isinstance(chunk.header, str)
        previous_end = chunk.end_line
        for n in range(chunk.start_line - 1, chunk.end_line):
            covered[n] += 1
    for n, line in enumerate(lines):
        if line.strip():
            assert covered[n] == 1, f"line {n + 1} {line!r} covered {covered[n]} times"
    for symbol in result.symbols:
        assert 1 <= symbol.start_line <= symbol.end_line <= len(lines), symbol
        assert symbol.start_line <= symbol.name_line <= symbol.end_line, symbol
        # An Objective-C selector (`initWithName:count:`) is written in parts, and a C# operator
        # (`implicit operator int`) or indexer (`this[]`) in tokens: the first is at the name's place.
        name = symbol.name.split(":")[0] if re.fullmatch(r"(\w*:)+", symbol.name) else symbol.name
        written = re.split(r"\s|(?<=\w)\[", name)[0]
        assert lines[symbol.name_line - 1][symbol.name_col :].startswith(written), symbol
        assert symbol.kind in SYMBOL_KINDS, symbol  # every kind has its LSP SymbolKind
        assert symbol.name.strip() == symbol.name and "\n" not in symbol.name, symbol


def chunked(text: str, language: str, max_chars: int = DEFAULT_MAX_CHARS) -> ChunkedFile:
    result = chunk_source(f"x.{language}", text, language, max_chars=max_chars)
    check_invariants(text, result, max_chars)
    return result


def symbols_of(result: ChunkedFile) -> set[tuple[str, str, str | None]]:
    return {(s.name, s.kind, s.container) for s in result.symbols}


def symbol(result: ChunkedFile, name: str, container: str | None = None) -> Symbol:
    found = [s for s in result.symbols if s.name == name and s.container == container]
    assert len(found) == 1, (name, container, result.symbols)
    return found[0]


def chunk_at(result: ChunkedFile, line: int) -> Chunk:
    return next(c for c in result.chunks if c.start_line <= line <= c.end_line)


def spans(result: ChunkedFile) -> list[tuple[int, int, str, str | None]]:
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in result.chunks]


def notebook_with_an_image(source: list[str]) -> str:
    """A Python notebook of one code cell, as Jupyter writes it, with an image output: one
    base64 line far past the "generated" limit, which must neither skip it nor be indexed."""
    image = {"data": {"image/png": "iVBORw0KGgo" + "A" * 60_000}, "output_type": "display_data"}
    code = {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [image], "source": source}
    document = {"cells": [code], "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4}
    return json.dumps(document, indent=1, sort_keys=True) + "\n"
