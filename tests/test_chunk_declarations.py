"""Trait and interface member declarations as chunks of their own, on real tree-sitter output:
a one-line ``fn advise(&self, …);`` inside a trait window was found only through its
neighbours' text (issue #14)."""

from __future__ import annotations

import textwrap

from kenning.chunking import chunk_source
from kenning.chunking.model import DECLARATION_KIND, Chunk


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def by_symbol(chunks: list[Chunk]) -> dict[str | None, Chunk]:
    return {c.symbol: c for c in chunks}


RUST = src(
    """
    use crate::io;

    #[stable(feature = "file_ext", since = "1.33.0")]
    pub trait FileExt {
        #[stable(feature = "file_ext", since = "1.33.0")]
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

        fn advise(&self, offset: u64, len: u64, advice: u8) -> io::Result<()>;

        fn tell(&self) -> io::Result<u64> {
            self.seek(0)
        }
    }

    pub trait Neg {
        type Output;
        fn neg(self) -> Self::Output;
    }

    extern "C" {
        fn malloc(n: usize) -> *mut u8;
        fn free(p: *mut u8);
    }
    """
)


def test_each_rust_trait_declaration_is_a_chunk_naming_its_trait() -> None:
    chunks = by_symbol(chunk_source("fs.rs", RUST, "rust").chunks)
    advise = chunks["FileExt.advise"]
    assert (advise.start_line, advise.end_line, advise.kind) == (8, 8, DECLARATION_KIND)
    assert advise.header.splitlines() == ["file ext advise", "pub trait FileExt"]
    # The trait's opening lines lead into its first member, attribute and all; the default
    # method is a chunk as before.
    read_at = chunks["FileExt.read_at"]
    assert (read_at.start_line, read_at.end_line, read_at.kind) == (3, 6, DECLARATION_KIND)
    assert "pub trait FileExt {" in read_at.text
    # A default method is defined in the trait: a method, not a declaration.
    assert chunks["FileExt.tell"].text.lstrip().startswith("fn tell")
    assert chunks["FileExt.tell"].kind == "method"


def test_a_trait_declaring_one_member_and_extern_blocks_stay_whole() -> None:
    chunks = chunk_source("fs.rs", RUST, "rust").chunks
    neg = by_symbol(chunks)["Neg"]
    assert (neg.start_line, neg.end_line, neg.kind) == (15, 18, "trait")
    assert "Neg.neg" not in by_symbol(chunks)
    # Foreign functions are declarations too, but not a trait's: one window, no chunk per line.
    extern = [c for c in chunks if c.start_line >= 20]
    assert [(c.start_line, c.end_line, c.symbol) for c in extern] == [(20, 23, None)]


def test_typescript_interface_methods_are_chunks_and_class_overloads_stay_glued() -> None:
    text = src(
        """
        export interface AjaxCreationMethod {
          get<T>(url: string, headers?: Record<string, string>): Observable<AjaxResponse<T>>;
          post<T>(url: string, body?: any): Observable<AjaxResponse<T>>;
          timeout: number;
        }

        export class Subject<T> {
          next(value: T): void;
          next(value?: T): void;
          next(value?: T): void {
            this.observers.forEach((o) => o.next(value));
          }
        }
        """
    )
    chunks = by_symbol(chunk_source("ajax.ts", text, "typescript").chunks)
    post = chunks["AjaxCreationMethod.post"]
    assert (post.start_line, post.kind) == (3, DECLARATION_KIND)
    assert post.header.splitlines() == ["ajax creation method post", "interface AjaxCreationMethod"]
    assert "AjaxCreationMethod.get" in chunks
    # Overload signatures in a class are how its method is called: still one chunk with it.
    assert "Subject.next" not in chunks
    assert (chunks["Subject"].start_line, chunks["Subject"].end_line) == (7, 13)


def test_go_interface_methods_are_chunks() -> None:
    text = src(
        """
        package io

        type ReadCloser interface {
        \tRead(p []byte) (n int, err error)
        \tClose() error
        }
        """
    )
    chunks = by_symbol(chunk_source("io.go", text, "go").chunks)
    assert (chunks["ReadCloser.Close"].start_line, chunks["ReadCloser.Close"].kind) == (5, DECLARATION_KIND)
    assert chunks["ReadCloser.Close"].header.splitlines() == ["read closer close", "ReadCloser interface"]
    # The interface's opening line leads into its first method's chunk.
    assert (chunks["ReadCloser.Read"].start_line, chunks["ReadCloser.Read"].end_line) == (3, 4)
