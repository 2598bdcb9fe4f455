"""The values the chunker hands to the indexer: chunks, symbols, and the pair of them per file.

Kept in a module of their own so that every chunker (code, Markdown, plain windows) can build
them without importing the package's front door.
"""

from __future__ import annotations

from dataclasses import dataclass

# The chunk kind of a trait's or interface's member declaration (Rust ``fn tell(&self) ->
# io::Result<u64>;``, a Go interface method, a TypeScript method signature): search ranks it
# together with the definitions that implement it.
DECLARATION_KIND = "declaration"

# The chunk kind of a class's constructor (Java's and C++'s `Foo.Foo`, TypeScript's
# `Foo.constructor`).
CONSTRUCTOR_KIND = "constructor"

# The kinds of a definition that can be called (and so implemented, wrapped, overloaded).
CALLABLE_KINDS = frozenset({"function", "method", CONSTRUCTOR_KIND})

# The kinds of a chunk that writes a callable's signature: a callable's definition, or a
# member's declaration in a trait or interface. It takes parameters and, as a member, has an
# owner.
SIGNATURE_KINDS = CALLABLE_KINDS | {DECLARATION_KIND}

# The kinds of a chunk that is a stretch of a namespace or of the top level, not the definition
# its symbol names: a window of one-liners of one class defined outside it (C++ `Foo::bar` in
# a namespace, Go methods of one receiver) is named after that class and lists them, and it is
# their names that a query spells, not the class's.
STRETCH_KINDS = frozenset({"window", "namespace"})

# The kinds of a top-level window of only imports (and comments), and of comments before any
# code (licence headers, module preambles): search keeps them out of its dense ranking.
BOILERPLATE_CHUNK_KINDS = frozenset({"imports", "preamble"})

# The kinds of a chunk that defines a type: its name is what its members' owner is called.
TYPE_KINDS = frozenset({"struct", "enum", "type", "class", "interface", "trait"})


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of whole lines of one file, the unit that is embedded and searched."""

    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str  # exactly "\n".join(lines[start_line - 1 : end_line])
    kind: str  # the definition's kind ("function", "method", "class", "struct", "impl", …);
    # DECLARATION_KIND for a trait's or interface's member declaration; "section" for
    # Markdown; "window" for lines outside any definition
    symbol: str | None  # qualified name of the own/enclosing definition, e.g. "A.run"
    header: str  # what locates it beyond `text`: its name in words, enclosing signatures


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named definition, for ``workspace/symbol``."""

    name: str
    kind: str  # class, interface, struct, enum, trait, type, function, method, constructor,
    # module, namespace, constant, variable, field, property, macro
    container: str | None  # qualified container ("Outer.Inner"); None at top level
    start_line: int  # 1-based definition span
    end_line: int
    name_line: int  # 1-based line of the name identifier
    name_col: int  # 0-based column of the name, in characters (not bytes, not UTF-16 units)


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """Everything one parse of a file yields."""

    chunks: list[Chunk]
    symbols: list[Symbol]
