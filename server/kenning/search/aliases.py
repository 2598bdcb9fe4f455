"""Operators a query writes as code, and the definitions that name themselves by them.

"Performs the `+=` operation" asks for Rust's `AddAssign`, which says so itself:
``#[doc(alias = "+=")]`` (rustdoc's search finds it by `+=`, and std's operator traits, `Index`
and others all carry one). Neither half can see it: FTS5 keeps no punctuation, and the model
places an operator near every operator trait alike. So a query's backticked operators are looked
up in the chunks that declare a doc alias, and a chunk that declares one the query writes is a
candidate with the name boost, as if the query had spelled its name: all of it when the query
writes the chunk's longest operator alias, half when only a shorter one: `+` means `Add` (aliased
`+`) more than `AddAssign` (`+` and `+=`), and `+=` means `AddAssign` alone. A trait too long to
be one chunk (its doc comments kept) declares the alias on its own chunk while "performs the `+`
operation" documents its method: the trait's member declarations share its boost.
"""

from __future__ import annotations

import re
import sqlite3

from kenning.chunking.model import DECLARATION_KIND
from kenning.engine import Engine
from kenning.search.markup import backticked

# An operator: a short run of punctuation (`+=`, `|`, `>>=`, `[]`, `?`); in a query, backticked.
_OPERATOR = re.compile(r"[^\w\s`]{1,3}")
# `#[doc(alias = "+=")]` and `#[doc(alias("+=", "+"))]`: the quoted aliases of one attribute.
# A chunk's `#[doc(alias = "…")]` and `#[doc(alias("…", "…"))]`. The list stops at a `(` as well
# as a `)`, so text of `#[doc(alias(` with no `)` is scanned once, not once from each (60 KB of
# it took 2 s, growing with the square).
_DOC_ALIAS = re.compile(r"#\[doc\(\s*alias\s*(?:=\s*(\"[^\"]*\")|\(([^()]*)\))\s*\)\]")
_QUOTED = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
# Chunks that declare a doc alias, read to find those naming an operator: Rust's whole standard
# library (core, alloc, std) declares 398 aliases in 30 files.
ALIASED_CHUNKS_MAX = 2_000


def written_operators(text: str) -> frozenset[str]:
    """The operators ``text`` writes in backticks (``{"+="}`` for "Performs the `+=` operation"),
    or the operator that is all of it (a search for ``+=``)."""
    if _OPERATOR.fullmatch(text.strip()):
        return frozenset({text.strip()})
    return frozenset(span for span in backticked(text) if _OPERATOR.fullmatch(span))


def doc_aliases(text: str) -> frozenset[str]:
    """The aliases a chunk's ``#[doc(alias …)]`` attributes declare."""
    found: set[str] = set()
    for one, several in _DOC_ALIAS.findall(text):
        found.update(_QUOTED.findall(one or several))
    return frozenset(found)


def aliased_chunks(
    engine: Engine,
    conn: sqlite3.Connection,
    operators: frozenset[str],
    file_ids: frozenset[int] | None,
) -> dict[int, float]:
    """The chunks (of ``file_ids`` unless None) whose doc aliases include one of ``operators``,
    each with the share of the name boost it earns (1, or 0.5 when a longer operator alias it
    declares is not written)."""
    assert engine.db is not None
    if not operators:
        return {}
    # FTS5 reads `#[doc(alias = "+=")]` as the words "doc alias": the phrase finds the few
    # chunks that declare any alias, and their text says which.
    ids = engine.db.bm25_chunk_ids(["doc alias"], file_ids, ALIASED_CHUNKS_MAX, conn)
    rows = engine.db.chunks_by_id(ids, conn)
    found: dict[int, float] = {}
    owners: dict[int, dict[str, float]] = {}  # file id -> aliased symbol -> its share
    for cid in ids:
        row = rows.get(cid)
        if row is None:
            continue
        declared = {alias for alias in doc_aliases(row.text) if _OPERATOR.fullmatch(alias)}
        written = declared & operators
        if written:
            longest = max(map(len, declared))
            found[cid] = 1.0 if any(len(alias) == longest for alias in written) else 0.5
            if row.symbol:
                owners.setdefault(row.file_id, {})[row.symbol] = found[cid]
    for file_id, symbols in owners.items():
        for member in engine.db.chunks_of_file(file_id, conn):
            owner = (member.symbol or "").rpartition(".")[0]
            if member.kind == DECLARATION_KIND and owner in symbols:
                found.setdefault(member.id, symbols[owner])
    return found
