"""Chunks that carry their context: overloads kept with their implementation, owners named in
the headers of split members, and boilerplate (imports, licence headers) told apart."""

from __future__ import annotations

import textwrap

import pytest

from kenning.chunking import chunk_source


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def chunk_at(chunks: list, line: int):  # type: ignore[no-untyped-def]
    return next(c for c in chunks if c.start_line <= line <= c.end_line)


# ---- TypeScript overloads ------------------------------------------------------------------


def test_typescript_function_overloads_are_one_chunk_with_the_implementation() -> None:
    text = src(
        """
        import { a } from './a';

        export function map<T>(x: T): T;
        export function map<T, R>(x: T, f: (t: T) => R): R;

        /** The implementation. */
        export function map(x: any, f?: any): any {
          return f ? f(x) : x;
        }

        export function other(): void {
          a();
        }
        """
    )
    chunks = chunk_source("m.ts", text, "typescript").chunks
    impl = chunk_at(chunks, 8)
    assert (impl.start_line, impl.end_line, impl.kind, impl.symbol) == (3, 9, "function", "map")
    assert chunk_at(chunks, 11).symbol == "other"


def test_typescript_method_overloads_join_their_implementation() -> None:
    body = "\n".join(f"    this.v{i} = {i};" for i in range(40))
    text = (
        src(
            """
        export class Store {
          get(key: string): string;
          get(key: number): string;
          get(key: any): string {
            return String(key);
          }

          put(key: string): void {
        %s
          }
        }
        """
        )
        % body
    )
    chunks = chunk_source("s.ts", text, "typescript").chunks
    get = chunk_at(chunks, 4)
    # The class line opens the class and is glued on; the members after it carry it as header.
    assert get.symbol == "Store.get" and get.start_line == 1 and get.end_line == 6
    assert "class Store" in chunk_at(chunks, 8).header


def test_a_signature_of_another_name_is_not_glued() -> None:
    text = src(
        """
        export function a(x: number): number;

        export function b(x: any): any {
          return x;
        }
        """
    )
    chunks = chunk_source("m.ts", text, "typescript").chunks
    assert chunk_at(chunks, 3).start_line == 3


# ---- boilerplate ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "path", "text", "imports_end"),
    [
        (
            "python",
            "m.py",
            '"""Module doc."""\n\nimport os\nimport sys\n\n\ndef f():\n    return os.sep\n',
            4,
        ),
        (
            "go",
            "m.go",
            '// Copyright 2009 The Go Authors.\n\npackage m\n\nimport (\n\t"fmt"\n)\n\n'
            "func F() {\n\tfmt.Println()\n}\n",
            7,
        ),
        ("rust", "m.rs", "//! Module doc.\n\nuse std::fmt;\nmod inner;\n\nfn f() {\n    g();\n}\n", 4),
        (
            # A module's re-export list, each `pub use` under its stability attribute.
            "rust",
            "sources.rs",
            "#![allow(dead_code)]\nmod once;\nmod repeat;\n\n"
            '#[stable(feature = "iter_once", since = "1.2.0")]\npub use self::once::{once, Once};\n\n'
            '#[cfg(test)]\n#[stable(feature = "rust1", since = "1.0.0")]\n'
            "pub use self::repeat::{repeat, Repeat};\n\n"
            "fn f() {\n    g();\n}\n",
            10,
        ),
        (
            "typescript",
            "m.ts",
            "/** licence */\nimport { a } from './a';\nexport * from './b';\n\n"
            "export function f(): number {\n  return a();\n}\n",
            3,
        ),
        ("java", "M.java", "package a.b;\n\nimport java.util.List;\n\nclass M {\n  List<String> x;\n}\n", 3),
        ("c", "m.c", "/* licence */\n#include <stdio.h>\n\nint f(void) {\n  return 1;\n}\n", 2),
    ],
)
def test_import_blocks_are_kind_imports(language: str, path: str, text: str, imports_end: int) -> None:
    chunks = chunk_source(path, text, language).chunks
    first = chunks[0]
    assert (first.start_line, first.end_line, first.kind) == (1, imports_end, "imports")
    assert all(c.kind != "imports" for c in chunks[1:])


def test_licence_header_before_code_is_a_preamble_but_comments_between_code_are_not() -> None:
    licence = "\n".join(
        f"// Licence line {i} of a long header, with words about warranty." for i in range(14)
    )
    text = (
        f'{licence}\n\npackage m\n\nimport "os"\n\nvar x = os.Args\n\n'
        + "\n".join(f"// A design note line {i} explaining the algorithm below." for i in range(14))
        + "\n\nvar y = 2\n"
    )
    chunks = chunk_source("m.go", text, "go").chunks
    assert (chunks[0].start_line, chunks[0].kind) == (1, "preamble")
    assert chunks[-1].kind == "window" and "design note" in chunks[-1].text


def test_a_window_with_code_is_not_boilerplate() -> None:
    text = "import os\nDEBUG = os.environ.get('DEBUG')\n\n\ndef f():\n    return DEBUG\n"
    chunks = chunk_source("m.py", text, "python").chunks
    assert chunks[0].kind == "window"
