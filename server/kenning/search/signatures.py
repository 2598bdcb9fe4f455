"""A chunk's signature: its first line of code and the enclosing signatures its header carries
(``impl From<String> for OsString``), what the ranking reads of it besides its name: the words it
relates, whether it answers yes or no, and the conversion a Rust `From` impl is."""

from __future__ import annotations

import re

from kenning.lexical import FUNCTION_WORDS
from kenning.store.rows import ChunkRow

_WORDS = re.compile(r"\w+")
_NOT_A_SIGNATURE = ("#", "//", "/*", "*", "@")  # attributes, comments, decorators


def enclosing_signatures(row: ChunkRow) -> str:
    """The signatures of what encloses the chunk's definition, as its header carries them after
    the name line (``impl From<String> for OsString``, ``class AffineTransform final``)."""
    return row.header.partition("\n")[2]


def signature_lines(row: ChunkRow) -> list[str]:
    """The chunk's signature: its first line of code (``fn type_id(&self) -> TypeId {``), then
    the enclosing signatures its header carries (``impl From<String> for OsString``)."""
    first = next(
        (
            line
            for line in row.text.split("\n")
            if line.strip() and not line.lstrip().startswith(_NOT_A_SIGNATURE)
        ),
        "",
    )
    return [first, *enclosing_signatures(row).split("\n")]


def signature_words(row: ChunkRow) -> frozenset[str]:
    """The words of the chunk's signature (``signature_lines``)."""
    return frozenset(_WORDS.findall("\n".join(signature_lines(row))))


# The names of a truth value's type, as a signature writes them (C's `_Bool`, C++'s and Go's and
# Rust's `bool`, Java's and TypeScript's `boolean`).
TRUTH_TYPES = frozenset({"bool", "boolean", "_Bool"})


def answers_yes_or_no(row: ChunkRow) -> bool:
    """Whether the chunk's signature writes a truth value's type (``func validOptionalPort(port
    string) bool {``, ``fn is_le(self) -> bool``, ``public boolean isEmpty()``): most often
    what a predicate returns, sometimes a parameter."""
    return not signature_words(row).isdisjoint(TRUTH_TYPES)


# A Rust conversion: `impl<'a> From<Cow<'a, OsStr>> for OsString` (or `TryFrom`), its source
# type between the brackets and its target after `for`.
_CONVERSION = re.compile(
    r"\bimpl\b.*?\b(?:Try)?From\s*<(?P<source>.+?)>\s+for\s+(?P<target>[^{]+?)\s*(?:\bwhere\b|\{|$)"
)


def _type_words(code: str) -> frozenset[str]:
    """``Cow<'a, OsStr>`` → ``{cow, osstr}``: a type's names, lower case; a lifetime or
    allocator parameter spelled like an article (`'a`, `A`) is not one."""
    return frozenset(word.lower() for word in _WORDS.findall(code)) - FUNCTION_WORDS


def conversion(row: ChunkRow) -> tuple[frozenset[str], frozenset[str]] | None:
    """The words of the source and target types of the `From` (or `TryFrom`) conversion the
    chunk implements, as an `impl` it is or is inside (``impl From<String> for OsString``:
    ``{string}``, ``{osstring}``); None for any other chunk."""
    for line in signature_lines(row):
        found = _CONVERSION.search(line)
        if found:
            return _type_words(found["source"]), _type_words(found["target"])
    return None
