"""The multi-language benchmark's pieces that need no downloaded sources: doc-comment stripping
and query making per language, identifier sampling, the naive baseline's windows, the report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import mlcorpus, multilang, quality
from bench.corpus import DocQuery

from tests.chunking_helpers import GLIBC_STRLEN

GO = """// Copyright 2009 The Go Authors.

// Package ring implements circular lists.
package ring

// A Ring is an element of a circular list.
type Ring struct {
	next *Ring // trailing comments stay
}

// Len computes the number of elements in ring r.
// It executes in time proportional to the number of elements.
func (r *Ring) Len() int {
	n := 0
	return n
}

func helper() {}
"""

RUST = """//! Module docs.

/// A stack of plates.
pub struct Stack {
    items: Vec<u32>,
}

impl Stack {
    /// Pushes a plate onto the top of the stack.
    #[inline]
    pub fn push(&mut self, x: u32) {
        self.items.push(x);
    }
}

pub trait Shape {
    /// Returns the area of the `Shape`.
    fn area(&self) -> f64;
}
"""

TS = """import { a } from './a';

/**
 * Applies a function to every value.
 * @param f the function
 */
export function map<T>(f: (t: T) => T): T;
export function map(f: any): any {
  return a(f);
}

export class Box {
  /** Opens the `open` box and returns its content. */
  open(): string {
    return 'x';
  }
}
"""


def test_go_doc_comments_are_blanked_and_become_queries() -> None:
    text, desc, idents = mlcorpus.strip("go", "ring/ring.go", GO)
    lines = text.split("\n")
    assert len(lines) == len(GO.split("\n"))  # line numbers kept
    assert "Copyright" in text  # not attached to a declaration: a licence, not a doc comment
    assert "Package ring" not in text and "circular list." not in text and "Len computes" not in text
    assert "trailing comments stay" in text
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("computes the number of elements in ring r", "Ring.Len", 13, 16)
    ]
    assert {q.name for q in idents} == {"Ring.Len", "helper"}


def test_rust_doc_comments_are_blanked_and_become_queries() -> None:
    text, desc, idents = mlcorpus.strip("rust", "stack.rs", RUST)
    assert "///" not in text and "//!" not in text and "#[inline]" in text
    by_name = {q.name: q for q in desc}
    assert by_name["Stack.push"].query == "Pushes a plate onto the top of the stack"
    assert by_name["Stack.push"].start_line == 11  # the fn line, attributes excluded
    assert by_name["Shape.area"].query == "Returns the of the `Shape`"
    assert {q.name for q in idents} == {"Stack.push", "Shape.area"}


def test_typescript_jsdoc_is_blanked_and_overloads_are_one_answer() -> None:
    text, desc, idents = mlcorpus.strip("typescript", "map.ts", TS)
    assert "/**" not in text and "@param" not in text
    by_name = {q.name: q for q in desc}
    assert by_name["map"].query == "Applies a function to every value"
    assert (by_name["map"].start_line, by_name["map"].end_line) == (7, 10)
    assert by_name["Box.open"].query == "Opens the box and returns its content"
    assert sorted(q.name for q in idents) == ["Box.open", "map"]


PROSEMIRROR = """/// <reference lib="dom" />
import {Node} from "./node"

/// A fragment represents a node's collection of child nodes.
///
/// Like nodes, fragments are persistent data structures.
export class Fragment {
  /// The size of the fragment.
  readonly size: number

  /// Find the first position at which this fragment and another
  /// fragment differ, or `null` if they are the same.
  findDiffStart(other: Fragment, pos = 0): number | null {
    //// not a doc
    return pos
  }

  /// @internal
  toStringInner(): string { return "" }
}
"""


def test_typescript_triple_slash_docs_are_blanked_and_become_queries() -> None:
    # ProseMirror writes its docs as /// lines; a /// <reference/> directive is code.
    text, desc, idents = mlcorpus.strip("typescript", "fragment.ts", PROSEMIRROR)
    lines = text.split("\n")
    assert lines[0] == '/// <reference lib="dom" />' and "//// not a doc" in text
    assert "persistent" not in text and "first position" not in text and "@internal" not in text
    assert len(lines) == len(PROSEMIRROR.split("\n"))  # blanked, not removed: the lines hold
    assert [(q.name, q.query, q.start_line) for q in desc] == [
        (
            "Fragment.findDiffStart",
            "Find the first position at which this fragment and another fragment differ, or `null` if they"
            " are the same",
            13,
        )
    ]
    assert sorted(q.name for q in idents) == ["Fragment.findDiffStart", "Fragment.toStringInner"]


JS = """/* eslint-disable no-var */

/**
 * Creates an array of elements split into groups the length of `size`.
 *
 * @param {Array} array The array to process.
 */
function chunk(array, size) {
  return [array, size];
}

class Reporter {
  /** Reports a `report` problem on the given node. */
  report(node) {
    return node;
  }
}

/** Checks whether a token is a comma. */
const isComma = (token) => token.value === ",";
"""


def test_javascript_jsdoc_is_blanked_and_becomes_queries() -> None:
    text, desc, idents = mlcorpus.strip("javascript", "lib/chunk.js", JS)
    assert "/**" not in text and "@param" not in text and "eslint-disable" in text
    assert len(text.split("\n")) == len(JS.split("\n"))
    by_name = {q.name: q for q in desc}
    assert by_name["chunk"].query == "Creates an array of elements split into groups the length of `size`"
    assert (by_name["chunk"].start_line, by_name["chunk"].end_line) == (8, 10)
    assert by_name["Reporter.report"].query == "Reports a problem on the given node"
    assert by_name["isComma"].query == "Checks whether a token is a comma"
    assert sorted(q.name for q in idents) == ["Reporter.report", "chunk", "isComma"]


JAVA = """package java.util;

/**
 * Resizable-array implementation of the {@code List} interface.
 */
public class ArrayList<E> extends AbstractList<E> {
    /**
     * Returns the number of elements in this list.  More text.
     *
     * @return the number of elements
     */
    @Override
    public int size() {
        return size;
    }

    /** Constructs an empty list with the given {@link java.util.Collection#size capacity}. */
    public ArrayList(int initialCapacity) {
    }

    /** Trims the capacity of this <i>ArrayList</i> instance to the {@code list's} size. */
    public void trimToSize() { modCount++; } /** not a doc comment of anything */

    int helper() { return 1; } // trailing
}
"""

# glibc's shape: a licence, a doc comment above a GNU-style definition with attribute macros,
# top-level macro invocations without semicolons right after the body.
C = (
    """/* Copyright (C) 1991-2022 Free Software Foundation, Inc.
   This file is part of the GNU C Library.  */

#include <string.h>

/* Return the length of the null-terminated string STR.  Scan for
   the null terminator quickly by testing four bytes at a time.  */
"""
    + GLIBC_STRLEN
    + """
int x; /* a trailing comment, not a doc */
static int
helper (void)
{
  return 1;
}
"""
)

# JUCE's shape: documented declarations in a class body (CRLF line endings), an inline template
# operator returning a reference, an out-of-line `Class::method` definition.
CPP = """namespace juce
{

/**
    A text string.

    @see StringArray
*/
class JUCE_API  String  final
{
public:
    /** Creates an empty string. */
    String() noexcept;

    /** Returns the number of characters in the string. */
    int length() const noexcept;

    /** Appends another string at the end of this one. */
    template <typename T>
    String& operator+= (T other)
    {
        return *this;
    }

private:
    JUCE_LEAK_DETECTOR (String)
};

int String::length() const noexcept
{
    return 0;
}

} // namespace juce
""".replace("\n", "\r\n")


def test_java_javadoc_is_blanked_and_becomes_queries() -> None:
    text, desc, idents = mlcorpus.strip("java", "java.base/java/util/ArrayList.java", JAVA)
    assert len(text.split("\n")) == len(JAVA.split("\n"))
    assert "/**" not in text.replace("/** not a doc", "") and "@return" not in text and "@Override" in text
    by_name = {q.name: q for q in desc}
    assert by_name["ArrayList.size"].query == "Returns the number of elements in this list"
    assert (by_name["ArrayList.size"].start_line, by_name["ArrayList.size"].end_line) == (12, 15)
    # Javadoc markup read as words; the constructor's own name (the class's) removed
    assert by_name["ArrayList.ArrayList"].query == "Constructs an empty list with the given capacity"
    assert by_name["ArrayList.trimToSize"].query == (
        "Trims the capacity of this ArrayList instance to the list's size"
    )
    assert sorted(q.name for q in idents) == [
        "ArrayList.ArrayList",
        "ArrayList.helper",
        "ArrayList.size",
        "ArrayList.trimToSize",
    ]


KOTLIN = """package com.facebook.react.bridge

/** Utilities to convert between Java and JavaScript values. */
object Arguments {
  /**
   * Convert a [List] to a [WritableArray][com.facebook.react.bridge.WritableArray].
   *
   * @param objects the list to convert
   */
  @JvmStatic
  fun fromList(objects: List<*>): WritableArray {
    fun helper(x: Any?) = x
    return WritableNativeArray()
  }

  // A plain comment is no doc.
  fun toBundle(map: ReadableMap?): Bundle? = null

  class Cache {
    companion object {
      /** Clears every cached value. */
      fun clear() {}
    }
  }
}
"""

SWIFT = """import Foundation

/// Something a module's definition is built of.
public protocol AnyDefinition {
  /// Builds the definition for the given app context.
  func build(appContext: AppContext) -> Self
}

extension Foo.Record {
  /**
   Converts the record back to the dictionary.
   */
  func toDictionary() -> [String: Any] {
    #if DEBUG
    check()
    #elseif RELEASE
    } broken {
    #endif
    return [:]
  }

  /// Compares two records.
  static func == (lhs: Record, rhs: Record) -> Bool { true }
}
"""


LUA = """--- Python-style extended string library.
-- @module pl.stringx
local stringx = {}

local M = {}

--- Does s only contain alphabetic characters?
-- The pattern is `%a`, as Lua reads it.
-- @string s a string
function stringx.isalpha(s)
  return find(s, '^%a+$') == 1
end

-- A plain comment, a blank line below it.

function stringx.isdigit(s)
  return find(s, '^%d+$') == 1
end

--- Gets the path of the logfile used by the LSP client.
---@return string path to log file
function M.get_log_path()
  local function helper() return 1 end
  return log.get_filename()
end

--- Sends a request to the server and calls the handler with its answer.
function Client:request(method, params)
  return self.rpc.request(method, params)
end
"""


def test_lua_doc_comment_groups_are_blanked_and_become_queries() -> None:
    text, desc, idents = mlcorpus.strip("lua", "penlight/stringx.lua", LUA)
    assert len(text.split("\n")) == len(LUA.split("\n"))
    assert "alphabetic" not in text and "@string" not in text and "logfile" not in text
    assert "A plain comment" in text  # not directly above a function
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Does s only contain alphabetic characters?", "stringx.isalpha", 10, 12),
        ("Gets the path of the logfile used by the LSP client", "M.get_log_path", 22, 25),
        # The name itself is taken out, as in every language.
        ("Sends a to the server and calls the handler with its answer", "Client.request", 28, 30),
    ]
    assert [q.name for q in idents] == [
        "stringx.isalpha",
        "stringx.isdigit",
        "M.get_log_path",
        "helper",
        "Client.request",
    ]


def test_kotlin_kdoc_is_blanked_and_becomes_queries() -> None:
    text, desc, idents = mlcorpus.strip("kotlin", "com/facebook/react/bridge/Arguments.kt", KOTLIN)
    assert len(text.split("\n")) == len(KOTLIN.split("\n"))
    assert "/**" not in text and "@param" not in text and "@JvmStatic" in text and "A plain comment" in text
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Convert a List to a WritableArray", "Arguments.fromList", 10, 14),
        # A companion object's function is its class's.
        ("Clears every cached value", "Cache.clear", 22, 22),
    ]
    assert [q.name for q in idents] == ["Arguments.fromList", "helper", "Arguments.toBundle", "Cache.clear"]


def test_swift_doc_comments_are_blanked_and_become_queries() -> None:
    text, desc, idents = mlcorpus.strip("swift", "ios/Core/Records/Record.swift", SWIFT)
    assert len(text.split("\n")) == len(SWIFT.split("\n"))
    assert "///" not in text and "/**" not in text
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Builds the definition for the given app context", "AnyDefinition.build", 6, 6),
        # An extension's method is the extended type's; the `#else` branch is no parse error.
        ("Converts the record back to the dictionary", "Record.toDictionary", 13, 20),
    ]
    assert [q.name for q in idents] == ["AnyDefinition.build", "Record.toDictionary"]  # `==` has no name


def test_c_comment_above_a_definition_is_its_doc() -> None:
    text, desc, idents = mlcorpus.strip("c", "string/strlen.c", C)
    assert len(text.split("\n")) == len(C.split("\n"))
    assert "Copyright" in text and "Return the length" not in text and "a trailing comment" in text
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Return the length of the null-terminated string STR", "__strlen", 8, 13)
    ]
    # the macro lines above `helper` are not part of it (they are blanked for the parse)
    assert {(q.name, q.start_line) for q in idents} == {("__strlen", 8), ("helper", 18)}


def test_cpp_declarations_are_descriptive_targets_definitions_identifier_ones() -> None:
    text, desc, idents = mlcorpus.strip("cpp", "juce_core/text/juce_String.h", CPP)
    assert len(text.split("\n")) == len(CPP.split("\n"))
    assert "/**" not in text and "@see" not in text and "JUCE_LEAK_DETECTOR" in text
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Creates an empty string", "String.String", 13, 13),
        ("Returns the number of characters in the string", "String.length", 16, 16),
        ("Appends another string at the end of this one", "String.operator+=", 19, 23),
    ]
    assert [(q.name, q.start_line) for q in idents] == [("String.operator+=", 19), ("String.length", 29)]


def test_identifier_queries_qualify_ambiguous_names() -> None:
    cands = [
        DocQuery("next", "a.rs", "Filter.next", 1, 3),
        DocQuery("next", "b.rs", "Map.next", 1, 3),
        DocQuery("unique_name", "c.rs", "unique_name", 1, 2),
        DocQuery("new", "d.rs", "new", 1, 2),
        DocQuery("new", "e.rs", "new", 1, 2),
    ]
    got = sorted(
        q.query for q in mlcorpus.identifier_queries(cands, 10, seed=1, indexed={"a.rs", "b.rs", "c.rs"})
    )
    assert got == ["Filter next", "Map next", "unique_name"]


def test_the_naive_index_is_windows_in_parsed_languages_too() -> None:
    # A parsed language's files go to the chunk worker, another process: the naive baseline
    # must not get kenning's chunks from it (it did, and every fresh naive store was kenning's).
    from kenning.indexer.chunks import new_chunks
    from kenning.workspace.entries import SourceText

    text = "".join(f"func F{n}() int {{\n\treturn {n}\n}}\n\n" for n in range(30))
    source = SourceText(
        text=text, content_hash="0" * 32, size=len(text), mtime_ns=0, replaced=0, encoding="utf-8"
    )
    with multilang.naive_chunking():
        chunks, symbols = new_chunks("f.go", source, "go")
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 39), (41, 79), (81, 119)]
    assert symbols == []
    chunks, symbols = new_chunks("f.go", source, "go")  # and kenning's own after it
    assert len(symbols) == 30


def test_naive_windows_are_forty_lines() -> None:
    text = "\n".join(f"line {i}" if i % 7 else "" for i in range(1, 101))
    chunks = multilang._naive_chunks("x.txt", text, "text").chunks
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 40), (41, 80), (81, 100)]
    assert all(c.kind == "window" and c.symbol is None for c in chunks)


def test_report_renders_errors_and_results() -> None:
    scores = {m: {"mrr@10": 0.5} for m in ("lexical", "semantic", "hybrid")}
    lang = {
        "files": 2,
        "chunks": {"kenning": 10, "naive": 5},
        "queries": {"descriptive": 3, "identifier": 4},
        "kenning": {"descriptive": scores, "identifier": scores},
        "naive": {"descriptive": scores, "identifier": scores},
        "owner_named": {"method_chunks": 7, "named": 7},
    }
    r = {
        "budget": 10,
        "when": "now",
        "command": "c",
        "sources": "s",
        "langs": {"go": lang, "rust": {"error": "no"}},
    }
    md = multilang.markdown(r)
    assert md.startswith(multilang.START) and md.endswith(multilang.END)
    assert "| Go | 2 / 10 (5) | 3 / 4 | 0.500 |" in md and "| Rust | no |" in md and "Go 7/7" in md
    assert "Doc comments blanked" in md
    documented = multilang.markdown({**r, "documented": True})  # its own section of the file
    assert documented.startswith(multilang.DOCUMENTED_START) and documented.endswith(multilang.DOCUMENTED_END)
    assert "Doc comments kept in the indexed copy, less the sentence" in documented
    # Another sample of the same sources has its own section, and says which.
    other = multilang.markdown({**r, "select_seed": 8})
    assert other.startswith("<!-- bench:multilang-seed8:start -->")
    assert other.endswith("<!-- bench:multilang-seed8:end -->") and "(selection seed 8," in other
    assert multilang.markers(True, 8) == (
        "<!-- bench:multilang-documented-seed8:start -->",
        "<!-- bench:multilang-documented-seed8:end -->",
    )


def test_report_says_each_groups_mean_against_its_target() -> None:
    def lang(descriptive: float, identifier: float, naive: float) -> dict[str, object]:
        def modes(value: float) -> dict[str, dict[str, float]]:
            return {m: {"mrr@10": value} for m in ("lexical", "semantic", "hybrid")}

        return {
            "files": 1,
            "chunks": {"kenning": 1, "naive": 1},
            "queries": {"descriptive": 1, "identifier": 1},
            "kenning": {"descriptive": modes(descriptive), "identifier": modes(identifier)},
            "naive": {"descriptive": modes(naive), "identifier": modes(naive)},
        }

    r = {
        "budget": 10,
        "when": "now",
        "command": "c",
        "sources": "s",
        "langs": {
            "go": lang(0.7, 0.96, 0.5),
            "rust": lang(0.5, 0.9, 0.6),
            "typescript": lang(0.5, 0.9, 0.4),
            "ts-libs": lang(0.7, 1.0, 0.4),
            "javascript": lang(0.8, 0.95, 0.5),
            "java": {"error": "no sources"},
        },
    }
    groups = {g["group"]: g for g in multilang.group_scores(r)}
    # TypeScript's two sources are one language: (0.7 + 0.5 + (0.5 + 0.7) / 2) / 3.
    assert groups["Go + Rust + TypeScript"]["mrr@10"]["descriptive"] == pytest.approx(0.6)
    assert groups["Go + Rust + TypeScript"]["mrr@10"]["identifier"] == pytest.approx((0.96 + 0.9 + 0.95) / 3)
    assert groups["Go + Rust + TypeScript"]["missing"] == []
    assert groups["Python + JavaScript"]["mrr@10"]["descriptive"] == pytest.approx(0.8)
    assert groups["Python + JavaScript"]["missing"] == ["python"]
    md = multilang.markdown(r)
    assert "| Go + Rust + TypeScript | 0.600 missed | 0.937 met | – |" in md
    assert "| Python + JavaScript | 0.800 met | 0.950 met | Python |" in md
    assert "Below its naive windows (descriptive): Rust." in md


@pytest.mark.parametrize(
    "lang",
    [
        "go",
        "rust",
        "typescript",
        "ts-libs",
        "javascript",
        "python",
        "java",
        "kotlin",
        "swift",
        "objective-c",
        "lua",
        "c",
        "cpp",
    ],
)
def test_every_language_has_a_source(lang: str) -> None:
    assert lang in mlcorpus.SOURCES and lang in multilang.LANGS


def test_cpp_declaration_queries_are_also_answered_by_the_definition(tmp_path: Path) -> None:
    root = tmp_path / "juce"
    (root / "juce_core" / "text").mkdir(parents=True)
    (root / "juce_core" / "text" / "juce_String.h").write_text(CPP.replace("\r\n", "\n"))
    (root / "juce_core" / "text" / "juce_String.cpp").write_text(
        "namespace juce\n{\n\nString::String() noexcept\n{\n}\n\n}\n"
    )
    prep = mlcorpus.prepare("cpp", root, tmp_path / "ws", budget=1000, seed=7)
    by_name = {q.name: q for q in prep.descriptive}
    assert by_name["String.String"].also == (("juce_core/text/juce_String.cpp", 4, 6),)
    assert by_name["String.length"].also == (("juce_core/text/juce_String.h", 29, 32),)
    assert by_name["String.operator+="].also == ()  # the documented definition itself
    hit = DocQuery("x", "juce_core/text/juce_String.cpp", "", 1, 5)  # anything with path and lines
    assert quality._relevant(hit, by_name["String.String"])
    assert not quality._relevant(hit, by_name["String.length"])


def test_missing_debian_packages_locate_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mlcorpus, "JDK_SRC", str(tmp_path / "no-src.zip"))
    monkeypatch.setattr(mlcorpus, "JUCE_MODULES", str(tmp_path / "no-juce"))
    assert mlcorpus.locate("java", tmp_path) is None
    assert mlcorpus.locate("cpp", tmp_path) is None


def test_other_typescript_libraries_are_read_as_typescript(tmp_path: Path) -> None:
    # ts-libs: one root with each npm package's src/ under its name (mlcorpus._npm_sources).
    root = tmp_path / "src" / "ts-libs"
    assert [name for name, _ in mlcorpus.TS_LIBS] == [
        "zod",
        "router-core",
        "form-core",
        "prosemirror-model",
        "prosemirror-state",
        "prosemirror-transform",
        "prosemirror-view",
    ]
    for rel in (
        "zod/v4/core/map.ts",
        "zod/v3/map.ts",
        "zod/v4/mini/map.ts",
        "form-core/map.ts",
        "router-core/map.ts",
        "prosemirror-model/map.ts",
        "prosemirror-state/map.ts",
        "prosemirror-transform/map.ts",
        "prosemirror-view/map.ts",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TS)
    (root / "form-core" / "map.test.ts").write_text(TS)
    assert mlcorpus.locate("ts-libs", tmp_path, install=False) == root
    prep = mlcorpus.prepare("ts-libs", root, tmp_path / "ws", budget=1000, seed=7)
    # Zod's previous API and its mini variants are the same schemas again; tests are not code.
    assert prep.files == [
        "form-core/map.ts",
        "prosemirror-model/map.ts",
        "prosemirror-state/map.ts",
        "prosemirror-transform/map.ts",
        "prosemirror-view/map.ts",
        "router-core/map.ts",
        "zod/v4/core/map.ts",
    ]
    assert {(q.path, q.name) for q in prep.descriptive} == {
        (path, name) for path in prep.files for name in ("map", "Box.open")
    }
    assert "Applies a function" not in (tmp_path / "ws" / "zod/v4/core/map.ts").read_text()


def test_missing_npm_sources_locate_nothing_without_install(tmp_path: Path) -> None:
    for lang in ("ts-libs", "kotlin", "swift", "lua"):
        assert mlcorpus.locate(lang, tmp_path, install=False) is None


def test_a_documented_share_keeps_doc_comments_and_queries(tmp_path: Path) -> None:
    root = tmp_path / "go"
    for n in range(20):
        (root / f"ring{n}").mkdir(parents=True)
        (root / f"ring{n}" / "ring.go").write_text(GO)
    stripped = mlcorpus.prepare("go", root, tmp_path / "stripped", budget=10_000, seed=7)
    mixed = mlcorpus.prepare("go", root, tmp_path / "mixed", budget=10_000, seed=7, documented=0.5)
    assert mixed.files == stripped.files and len(mixed.files) == 20
    assert mixed.descriptive == stripped.descriptive  # the same queries, lines and all
    kept = [f for f in mixed.files if (tmp_path / "mixed" / f).read_text() == GO]
    assert 0 < len(kept) < 20  # a seeded share, not all or none
    assert all("Len computes" not in (tmp_path / "stripped" / f).read_text() for f in stripped.files)
    again = mlcorpus.prepare("go", root, tmp_path / "again", budget=10_000, seed=7, documented=0.5)
    assert [f for f in again.files if (tmp_path / "again" / f).read_text() == GO] == kept


def test_documented_code_loses_only_the_sentence_a_query_is_made_of() -> None:
    _, desc, _ = mlcorpus.strip("go", "ring/ring.go", GO)
    text, found = mlcorpus.without_summaries(GO, desc)
    assert found == desc
    lines, before = text.split("\n"), GO.split("\n")
    assert len(lines) == len(before)
    assert lines[10] == "// Len        ."  # the words go; the marker, the name and the stop stay
    assert lines[11] == before[11] == "// It executes in time proportional to the number of elements."
    assert "A Ring is an element of a circular list." in text  # other doc comments stay
    python = 'def add(a, b):\n    """Return the sum of a and b.\n\n    Both are numbers.\n    """\n'
    _, desc, _ = mlcorpus.strip("python", "m.py", python)
    text, found = mlcorpus.without_summaries(python, desc)
    assert found == desc and text.split("\n")[1] == '    """      .' and "Both are numbers." in text
    short = [DocQuery("Close it", "m.py", "close", 1, 2)]  # two words could match code: left out
    assert mlcorpus.without_summaries("def close(it): pass  # Close it", short) == (
        "def close(it): pass  # Close it",
        [],
    )


def test_generated_kotlin_is_left_out(tmp_path: Path) -> None:
    root = tmp_path / "kotlin"
    (root / "featureflags").mkdir(parents=True)
    generated = "/*\n * @generated SignedSource<<a737>>\n */\n\n" + KOTLIN
    (root / "featureflags" / "ReactNativeFeatureFlagsDefaults.kt").write_text(generated)
    (root / "featureflags" / "Arguments.kt").write_text(KOTLIN)
    prepared = mlcorpus.prepare("kotlin", root, tmp_path / "ws", budget=10_000, seed=7)
    assert prepared.files == ["featureflags/Arguments.kt"]
    assert {q.path for q in prepared.identifiers} == {"featureflags/Arguments.kt"}


def test_a_file_larger_than_the_budget_is_left_out(tmp_path: Path) -> None:
    # pydoc's topics.py (15,711 lines of one dict) was seed 8's whole Python sample: no queries
    root = tmp_path / "kotlin"
    (root / "data").mkdir(parents=True)
    (root / "data" / "Table.kt").write_text("val table = listOf(\n" + "    1,\n" * 200 + ")\n")
    (root / "data" / "Arguments.kt").write_text(KOTLIN)
    prepared = mlcorpus.prepare("kotlin", root, tmp_path / "ws", budget=150, seed=7)
    assert prepared.files == ["data/Arguments.kt"]
    assert prepared.identifiers


OBJC_HEADER = """#import <UIKit/UIKit.h>

NS_ASSUME_NONNULL_BEGIN

@interface RCTUIManager : NSObject

/**
 * Sets the size of a view, in points. Layout follows.
 */
- (void)setSize:(CGSize)size forView:(UIView *)view;

/// Returns the view for a react tag.
- (UIView *)viewForReactTag:(NSNumber *)reactTag;

@end

NS_ASSUME_NONNULL_END
"""

OBJC_IMPLEMENTATION = """#import "RCTUIManager.h"

@implementation RCTUIManager (Layout)

- (void)setSize:(CGSize)size forView:(UIView *)view
{
  [self setNeedsLayout];
}

RCT_EXPORT_METHOD(measure : (nonnull NSNumber *)reactTag callback : (RCTResponseSenderBlock)callback)
{
  callback(@[]);
}

@end
"""


def test_objective_c_headers_document_methods_their_definitions_answer(tmp_path: Path) -> None:
    text, desc, idents = mlcorpus.strip("objective-c", "React/Modules/RCTUIManager.h", OBJC_HEADER)
    assert len(text.split("\n")) == len(OBJC_HEADER.split("\n"))
    assert "/**" not in text and "///" not in text and "- (void)setSize:" in text
    # a method is named by its selector; declarations are descriptive targets only
    assert [(q.query, q.name, q.start_line, q.end_line) for q in desc] == [
        ("Sets the size of a view, in points", "RCTUIManager.setSize:forView:", 10, 10),
        ("Returns the view for a react tag", "RCTUIManager.viewForReactTag:", 13, 13),
    ]
    assert idents == []
    _, _, idents = mlcorpus.strip("objective-c", "React/Modules/RCTUIManager+Layout.m", OBJC_IMPLEMENTATION)
    # a category's methods are the class's; React Native's exported method is the method it expands to
    assert [(q.query, q.name) for q in idents] == [
        ("setSize:forView:", "RCTUIManager.setSize:forView:"),
        ("measure:callback:", "RCTUIManager.measure:callback:"),
    ]
    root = tmp_path / "objc"
    (root / "React" / "Modules").mkdir(parents=True)
    (root / "React" / "Modules" / "RCTUIManager.h").write_text(OBJC_HEADER)
    (root / "React" / "Modules" / "RCTUIManager+Layout.m").write_text(OBJC_IMPLEMENTATION)
    prepared = mlcorpus.prepare("objective-c", root, tmp_path / "ws", budget=1000, seed=7)
    by_name = {q.name: q for q in prepared.descriptive}
    assert by_name["RCTUIManager.setSize:forView:"].also == (("React/Modules/RCTUIManager+Layout.m", 5, 8),)
    assert by_name["RCTUIManager.viewForReactTag:"].also == ()
