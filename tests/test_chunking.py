"""Chunking and symbols: per-language fixtures, Markdown rules, and the coverage invariants.

Input is assumed normalised (``"\\n"`` line endings, no ``"\\r"``, no BOM) — the reader does that
before chunking; these tests never feed CRLF text.
"""

from __future__ import annotations

import textwrap
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.chunking import DEFAULT_MAX_CHARS, Chunk, ChunkedFile, Symbol, chunk_source
from kenning.chunking.grammars import GRAMMARS, compiled
from kenning.chunking.markdown import _Scanner
from kenning.languages import LANGUAGES

# ---- helpers ------------------------------------------------------------------------------


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


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
        assert lines[symbol.name_line - 1][symbol.name_col :].startswith(symbol.name), symbol
        assert symbol.kind in SYMBOL_KINDS, symbol
        assert symbol.name.strip() == symbol.name and "\n" not in symbol.name, symbol


SYMBOL_KINDS = {
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "type",
    "function",
    "method",
    "constructor",
    "module",
    "namespace",
    "constant",
    "variable",
    "field",
    "property",
    "macro",
}


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


# ---- grammars -----------------------------------------------------------------------------


def test_every_structured_language_has_a_grammar_that_compiles() -> None:
    structured = {name for name, info in LANGUAGES.items() if info.parser == "tree-sitter"}
    assert structured == set(GRAMMARS)
    for grammar in GRAMMARS.values():
        compiled(grammar)  # raises on a node type the grammar does not have


# ---- Python -------------------------------------------------------------------------------

PYTHON = src(
    '''
    """Module docstring."""
    import os

    MAX_SIZE = MIN_SIZE = 10
    lower = 1


    class HTTPConnection(Base):
        """A connection."""

        default_port = 80

        # Send a request.
        @traced
        def request(self, method, url):
            def encode(part):
                return part.encode()
            return encode(method)

        class Inner:
            def deep(self):
                return 1


    def helper(x):
        return x
    '''
)


def test_python_symbols() -> None:
    result = chunked(PYTHON, "python")
    assert symbols_of(result) == {
        ("MAX_SIZE", "constant", None),
        ("MIN_SIZE", "constant", None),
        ("HTTPConnection", "class", None),
        ("request", "method", "HTTPConnection"),
        ("encode", "function", "HTTPConnection.request"),
        ("Inner", "class", "HTTPConnection"),
        ("deep", "method", "HTTPConnection.Inner"),
        ("helper", "function", None),
    }
    request = symbol(result, "request", "HTTPConnection")
    # The span includes the decorator; the name position is the identifier's.
    assert (request.start_line, request.end_line) == (14, 18)
    assert (request.name_line, request.name_col) == (15, 8)
    assert symbol(result, "HTTPConnection").start_line == 8


def test_python_chunks_at_definitions() -> None:
    result = chunked(PYTHON, "python")
    assert spans(result) == [
        (1, 5, "window", None),
        (8, 22, "class", "HTTPConnection"),  # fits the budget: one chunk with its methods
        (25, 26, "function", "helper"),
    ]
    # A definition's header is its name in words (what the model reads first), nothing else.
    assert [c.header for c in result.chunks] == ["", "http connection", "helper"]


def test_python_big_class_is_split_into_header_part_and_members() -> None:
    result = chunked(PYTHON, "python", max_chars=170)
    assert spans(result) == [
        (1, 5, "window", None),
        (8, 11, "class", "HTTPConnection"),  # the header part: signature, docstring, fields
        (13, 18, "method", "HTTPConnection.request"),  # comment and decorator belong to it
        (20, 22, "class", "HTTPConnection.Inner"),
        (25, 26, "function", "helper"),
    ]
    assert chunk_at(result, 13).text.startswith("    # Send a request.\n    @traced")
    assert chunk_at(result, 13).header == "http connection request\nclass HTTPConnection(Base):"
    assert chunk_at(result, 20).header.endswith("\nclass HTTPConnection(Base):")
    assert chunk_at(result, 8).header == "http connection"


def test_long_function_is_split_into_windows_with_the_signature_as_header() -> None:
    groups = [
        "\n".join(f"        v{g}_{i} = compute(v{g}_{i - 1}, option={i})" for i in range(1, 5))
        for g in range(12)
    ]
    text = "class A:\n    def big(self, x):\n" + "\n\n".join(groups) + "\n        return x\n"
    lines = text.split("\n")
    result = chunked(text, "python", max_chars=400)
    parts = [c for c in result.chunks if c.symbol == "A.big"]
    assert len(parts) >= 4
    assert all(c.kind == "method" for c in parts)
    # The first part shows the signature itself; the others carry it in their header.
    assert parts[0].start_line == 2 and parts[0].header == "a big\nclass A:"
    for part in parts[1:]:
        assert part.header == "a big\nclass A:\n    def big(self, x):"
    # Cuts fall on the blank lines between statement groups, never inside a group.
    for part in parts[:-1]:
        assert lines[part.end_line].strip() == ""
    assert result.chunks[0].text == "class A:"  # the class's header part


def test_module_level_code_is_packed_into_windows_not_one_chunk_per_line() -> None:
    text = "\n".join(f"CONSTANT_{i} = {i}" for i in range(30)) + "\n"
    result = chunked(text, "python")
    assert len(result.chunks) == 1
    assert result.chunks[0].kind == "window" and result.chunks[0].symbol is None
    assert len(result.symbols) == 30


def test_one_line_definitions_stay_in_windows_but_keep_symbols() -> None:
    text = "def a(): return 1\ndef b(): return 2\ndef c(): return 3\n"
    result = chunked(text, "python")
    assert spans(result) == [(1, 3, "window", None)]
    assert [s.name for s in result.symbols] == ["a", "b", "c"]


def test_crumbs_join_a_neighbouring_chunk() -> None:
    text = src(
        """
        class Base:
            def __add__(self, other):
                return other
            __radd__ = __add__

            def run(self):
                return 1
        """
    )
    result = chunked(text, "python", max_chars=90)
    # `class Base:` goes with the first method, `__radd__ = __add__` with the method above it.
    assert spans(result) == [(1, 4, "method", "Base.__add__"), (6, 7, "method", "Base.run")]
    assert result.chunks[0].header == "base add"  # the class line is in the text
    assert result.chunks[1].header == "base run\nclass Base:"


def test_name_column_counts_characters_not_bytes() -> None:
    text = 'x = "héllo"; y = "wörld"\nclass Ünïcode:\n    pass\n'
    result = chunked(text, "python")
    cls = symbol(result, "Ünïcode")
    assert (cls.name_line, cls.name_col) == (2, 6)


# ---- JavaScript / TypeScript ---------------------------------------------------------------

JAVASCRIPT = src(
    """
    import { x } from "y";

    /** Adds. */
    export function add(a, b) {
      return a + b;
    }

    export default class Widget extends Base {
      static count = 0;
      constructor(el) {
        super(el);
      }
      render() {
        return this.el;
      }
    }

    const handler = async (event) => {
      return event;
    };

    exports.legacy = function () {
      return 1;
    };
    """
)


def test_javascript() -> None:
    result = chunked(JAVASCRIPT, "javascript")
    assert symbols_of(result) == {
        ("add", "function", None),
        ("Widget", "class", None),
        ("count", "field", "Widget"),
        ("constructor", "constructor", "Widget"),
        ("render", "method", "Widget"),
        ("handler", "function", None),
        ("legacy", "function", None),
    }
    assert spans(result) == [
        (1, 1, "imports", None),
        (3, 6, "function", "add"),  # the JSDoc comment belongs to it
        (8, 16, "class", "Widget"),
        (18, 20, "function", "handler"),
        (22, 24, "function", "legacy"),
    ]


def test_javascript_object_literal_functions() -> None:
    text = src(
        """
        module.exports = {
          parse(input) {
            return input.trim();
          },
          format: function (value) {
            return String(value);
          },
        };
        """
    )
    result = chunked(text, "javascript", max_chars=80)
    assert symbols_of(result) == {("parse", "method", None), ("format", "method", None)}
    # `module.exports = {` leads into the first function; `};` closes the last one.
    assert spans(result) == [(1, 4, "method", "parse"), (5, 8, "method", "format")]


TYPESCRIPT = src(
    """
    export interface Shape {
      area(): number;
      name: string;
    }

    export type Point = {
      x: number;
      y: number;
    };

    enum Color {
      Red,
      Green,
    }

    namespace Geometry {
      export function distance(a: Point, b: Point): number {
        return Math.hypot(a.x - b.x, a.y - b.y);
      }
    }

    abstract class Base<T> implements Shape {
      private readonly id: number = 1;
      abstract area(): number;
      @memo()
      get name(): string {
        return "base";
      }
    }
    """
)


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_typescript(language: str) -> None:
    result = chunked(TYPESCRIPT, language)
    assert symbols_of(result) == {
        ("Shape", "interface", None),
        ("area", "method", "Shape"),
        ("name", "property", "Shape"),
        ("Point", "type", None),
        ("x", "property", "Point"),
        ("y", "property", "Point"),
        ("Color", "enum", None),
        ("Geometry", "namespace", None),
        ("distance", "function", "Geometry"),
        ("Base", "class", None),
        ("id", "field", "Base"),
        ("area", "method", "Base"),
        ("name", "method", "Base"),
    }
    assert [(c.start_line, c.kind, c.symbol) for c in result.chunks] == [
        (1, "interface", "Shape"),
        (6, "type", "Point"),
        (11, "enum", "Color"),
        (16, "namespace", "Geometry"),
        (22, "class", "Base"),
    ]


def test_tsx_parses_jsx() -> None:
    text = src(
        """
        export function App(props: Props) {
          return <div className="app">{props.children}</div>;
        }
        """
    )
    result = chunked(text, "tsx")
    assert spans(result) == [(1, 3, "function", "App")]


# ---- Go -----------------------------------------------------------------------------------

GO = src(
    """
    package server

    import "net/http"

    // Server serves.
    type Server struct {
        Addr    string
        handler http.Handler
    }

    type Handler interface {
        Serve(w http.ResponseWriter) error
    }

    const DefaultPort = 8080

    // Start starts the server.
    func (s *Server) Start() error {
        return nil
    }

    func New[T any](addr string) *Server {
        return &Server{Addr: addr}
    }
    """
)


def test_go() -> None:
    result = chunked(GO, "go")
    assert symbols_of(result) == {
        ("Server", "struct", None),
        ("Addr", "field", "Server"),
        ("handler", "field", "Server"),
        ("Handler", "interface", None),
        ("Serve", "method", "Handler"),
        ("DefaultPort", "constant", None),
        ("Start", "method", "Server"),  # container = receiver type, pointer stripped
        ("New", "function", None),
    }
    assert spans(result) == [
        (1, 3, "imports", None),
        (5, 9, "struct", "Server"),
        (11, 13, "interface", "Handler"),
        (15, 15, "window", None),
        (17, 20, "method", "Server.Start"),
        (22, 24, "function", "New"),
    ]


# ---- Rust ---------------------------------------------------------------------------------

RUST = src(
    """
    use std::fmt;

    /// A point.
    #[derive(Debug, Clone)]
    pub struct Point<T> {
        pub x: T,
        y: T,
    }

    pub trait Shape {
        fn area(&self) -> f64;
    }

    impl<T: Copy> Point<T> {
        pub fn new(x: T, y: T) -> Self {
            Point { x, y }
        }
    }

    impl fmt::Display for Point<i32> {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "({}, {})", self.x, self.y)
        }
    }

    mod geometry {
        pub fn origin() -> (i32, i32) {
            (0, 0)
        }
    }

    macro_rules! square {
        ($x:expr) => { $x * $x };
    }

    const LIMIT: u32 = 10;
    """
)


def test_rust() -> None:
    result = chunked(RUST, "rust")
    assert symbols_of(result) == {
        ("Point", "struct", None),
        ("x", "field", "Point"),
        ("y", "field", "Point"),
        ("Shape", "trait", None),
        ("area", "method", "Shape"),
        ("new", "method", "Point"),  # impl Point<T> → container Point
        ("fmt", "method", "Point"),  # impl Display for Point<i32> → container Point
        ("geometry", "module", None),
        ("origin", "function", "geometry"),
        ("square", "macro", None),
        ("LIMIT", "constant", None),
    }
    assert spans(result) == [
        (1, 1, "imports", None),
        (3, 8, "struct", "Point"),  # doc comment and attribute belong to it
        (10, 12, "trait", "Shape"),
        (14, 18, "impl", "Point"),
        (20, 24, "impl", "Point"),
        (26, 30, "module", "geometry"),
        (32, 34, "macro", "square"),
        (36, 36, "window", None),
    ]


def test_rust_big_impl_is_split_per_method_with_impl_header() -> None:
    result = chunked(RUST, "rust", max_chars=90)
    fmt_chunk = chunk_at(result, 21)
    assert (fmt_chunk.kind, fmt_chunk.symbol) == ("method", "Point.fmt")
    assert fmt_chunk.header == "point fmt\nimpl fmt::Display for Point<i32>"


# ---- Java ---------------------------------------------------------------------------------

JAVA = src(
    """
    package com.example;

    /** A repository. */
    @Repository
    public class UserRepository implements Repo<User> {
        private static final int LIMIT = 10;
        private final Map<String, User> users = new HashMap<>();

        public UserRepository() {
            super();
        }

        @Override
        public User find(String id) {
            return users.get(id);
        }

        interface Listener {
            void changed(User user);
        }

        enum State { OPEN, CLOSED }
    }
    """
)


def test_java() -> None:
    result = chunked(JAVA, "java")
    assert symbols_of(result) == {
        ("UserRepository", "class", None),
        ("LIMIT", "field", "UserRepository"),
        ("users", "field", "UserRepository"),
        ("UserRepository", "constructor", "UserRepository"),
        ("find", "method", "UserRepository"),
        ("Listener", "interface", "UserRepository"),
        ("changed", "method", "UserRepository.Listener"),
        ("State", "enum", "UserRepository"),
    }
    assert spans(result)[0] == (1, 1, "imports", None)
    small = chunked(JAVA, "java", max_chars=120)
    find = chunk_at(small, 14)
    assert (find.start_line, find.kind, find.symbol) == (13, "method", "UserRepository.find")
    assert find.header.split("\n") == [
        "user repository find",
        "@Repository public class UserRepository implements Repo<User>",
    ]


# ---- C / C++ ------------------------------------------------------------------------------

C = src(
    """
    #include <stdio.h>

    #define BUFSIZE 512
    #define MAX(a, b) ((a) > (b) ? (a) : (b))

    /* A point. */
    struct point {
        int x;
        int y;
    };

    typedef struct {
        int w, h;
    } size_t2;

    enum color { RED, GREEN };

    typedef int (*callback)(void *);

    static int *lookup(const char *key, int n)
    {
        return NULL;
    }
    """
)


def test_c() -> None:
    result = chunked(C, "c")
    assert symbols_of(result) == {
        ("BUFSIZE", "macro", None),
        ("MAX", "macro", None),
        ("point", "struct", None),
        ("x", "field", "point"),
        ("y", "field", "point"),
        ("size_t2", "type", None),
        ("w", "field", None),  # fields of an anonymous struct have no container
        ("h", "field", None),
        ("color", "enum", None),
        ("callback", "type", None),
        ("lookup", "function", None),
    }
    assert spans(result) == [
        (1, 4, "window", None),
        (6, 10, "struct", "point"),
        (12, 14, "struct", "size_t2"),  # typedef struct {…} name: one chunk, named by typedef
        (16, 18, "window", None),
        (20, 23, "function", "lookup"),
    ]


CPP = src(
    """
    namespace net::http {

    template <typename T>
    class Client : public Base {
     public:
      Client();
      ~Client() {}
      int send(const T& request) const;
     private:
      int fd_;
    };

    }  // namespace net::http

    int net::http::Client::send(const T& request) const {
      return fd_;
    }

    Client::Client() : fd_(-1) {
    }

    namespace {
    int helper() {
      return 1;
    }
    }
    """
)


def test_cpp() -> None:
    result = chunked(CPP, "cpp")
    assert symbols_of(result) == {
        ("net::http", "namespace", None),
        ("Client", "class", "net.http"),
        ("Client", "constructor", "net.http.Client"),
        ("~Client", "method", "net.http.Client"),
        ("send", "method", "net.http.Client"),
        ("fd_", "field", "net.http.Client"),
        ("send", "method", "net.http.Client"),  # out-of-line definition, same container
        ("Client", "constructor", "Client"),
        ("helper", "function", None),
    }
    out_of_line = [s for s in result.symbols if s.name == "send" and s.start_line == 15]
    assert len(out_of_line) == 1
    assert spans(result)[-3:] == [
        (15, 17, "method", "net.http.Client.send"),
        (19, 20, "constructor", "Client.Client"),
        (22, 26, "namespace", None),
    ]


def test_c_header_that_is_cpp_falls_back_to_the_cpp_grammar() -> None:
    text = "class Widget {\n public:\n  void draw();\n};\n"
    result = chunk_source("include/widget.h", text, "c")
    check_invariants(text, result, DEFAULT_MAX_CHARS)
    assert ("Widget", "class", None) in symbols_of(result)
    assert ("draw", "method", "Widget") in symbols_of(result)


# ---- Markdown -----------------------------------------------------------------------------

MARKDOWN = src(
    """
    ---
    title: Guide
    tags: [a, b]
    ---

    # Guide

    Welcome to the guide.

    ## Install

    Run:

    ```sh
    pip install kenning
    # a comment, not a heading
    ```

    ## Usage

    | flag | meaning |
    |------|---------|
    | -v   | verbose |

    - first item
      continued
    - second item

      more of the second item
    - third item

    > a quote
    lazy continuation
    """
)


def test_markdown_blocks() -> None:
    lines = MARKDOWN.split("\n")
    blank = [not line.strip() for line in lines]
    kinds = [(b.start, b.end, b.kind) for b in _Scanner(lines, blank).blocks()]
    assert kinds == [
        (1, 4, "front_matter"),
        (6, 6, "heading"),
        (8, 8, "paragraph"),
        (10, 10, "heading"),
        (12, 12, "paragraph"),
        (14, 17, "fence"),
        (19, 19, "heading"),
        (21, 23, "table"),
        (25, 30, "list"),
        (32, 33, "quote"),
    ]


def test_markdown_setext_headings_and_math() -> None:
    text = "Title\n=====\n\n$$\na = b\n\nc = d\n$$\n\nSub\n---\ntext\n"
    lines = text.split("\n")
    blocks = _Scanner(lines, [not line.strip() for line in lines]).blocks()
    assert [(b.start, b.end, b.kind, b.level, b.title) for b in blocks] == [
        (1, 2, "heading", 1, "Title"),
        (4, 8, "math", 0, ""),
        (10, 11, "heading", 2, "Sub"),
        (12, 12, "paragraph", 0, ""),
    ]


def test_markdown_section_that_fits_is_one_chunk() -> None:
    result = chunked(MARKDOWN, "markdown")
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 33, "Guide", ""),
    ]
    assert all(c.kind == "section" for c in result.chunks)
    assert result.symbols == []


def test_markdown_subsection_that_fits_stays_with_its_parent() -> None:
    result = chunked(MARKDOWN, "markdown", max_chars=120)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 17, "Guide", ""),  # "## Install" fits whole into the "# Guide" chunk
        (19, 23, "Usage", "# Guide"),  # "## Usage" does not: it starts a new chunk
        (25, 33, "Usage", "# Guide > ## Usage"),
    ]


def test_markdown_sections_start_at_headings_and_keep_blocks_whole() -> None:
    result = chunked(MARKDOWN, "markdown", max_chars=100)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 4, None, ""),
        (6, 8, "Guide", ""),
        (10, 17, "Install", "# Guide"),  # the fence is never cut
        (19, 23, "Usage", "# Guide"),  # heading + table
        (25, 30, "Usage", "# Guide > ## Usage"),  # the list is never cut
        (32, 33, "Usage", "# Guide > ## Usage"),
    ]


def test_markdown_never_ends_a_chunk_on_a_heading() -> None:
    text = src(
        """
        # Title

        An introduction that takes up most of the budget.

        ## Empty section

        ## Next

        Content of the next section.
        """
    )
    result = chunked(text, "markdown", max_chars=90)
    assert [(c.start_line, c.end_line, c.symbol, c.header) for c in result.chunks] == [
        (1, 3, "Title", ""),
        (5, 9, "Next", "# Title"),  # the empty section's heading moved on with "## Next"
    ]
    for chunk in result.chunks:
        assert not chunk.text.split("\n")[-1].startswith("#"), chunk


def test_markdown_heading_keeps_its_paragraph_but_not_at_the_cost_of_a_fence() -> None:
    prose = "\n".join(f"Sentence number {i} of the paragraph." for i in range(4))
    fence = "```\n" + "\n".join(f"call_{i}()" for i in range(10, 24)) + "\n```"
    budget = 150
    assert len(prose) <= budget < len("# Intro\n\n" + prose)
    assert len(fence) <= budget < len("# Code\n\n" + fence)
    text = f"# Intro\n\n{prose}\n\n# Code\n\n{fence}\n"
    result = chunked(text, "markdown", max_chars=budget)
    # The paragraph fits alone but not after its heading: it is cut, the heading stays with it.
    assert result.chunks[0].text.startswith("# Intro\n\nSentence number 0")
    # The fence fits alone but not after its heading: it stays whole, the heading is alone
    # (and repeated in the fence chunk's header).
    code_heading, code = result.chunks[-2:]
    assert code_heading.text == "# Code"
    assert code.text == fence and code.header == "# Code"


def test_markdown_oversize_fence_is_cut_at_blank_lines_as_a_last_resort() -> None:
    code = "\n\n".join(f"step_{i}()\nmore_{i}()" for i in range(20))
    text = f"# Code\n\n```python\n{code}\n```\n"
    result = chunked(text, "markdown", max_chars=100)
    assert len(result.chunks) > 2
    assert result.chunks[0].text.startswith("# Code\n\n```python")
    for chunk in result.chunks[1:]:
        assert chunk.header == "# Code"
        # Cut only at the blank lines between statement pairs.
        assert chunk.text.split("\n")[0].startswith(("step_", "```"))


def test_markdown_oversize_list_is_cut_between_items() -> None:
    items = "\n".join(f"- item {i}\n  continued {i}" for i in range(30))
    text = f"## List\n\n{items}\n"
    result = chunked(text, "markdown", max_chars=120)
    for chunk in result.chunks[1:]:
        assert chunk.text.startswith("- item")


# ---- other text ---------------------------------------------------------------------------


def test_plain_text_windows_prefer_blank_lines() -> None:
    paragraphs = [f"paragraph {i} " + "word " * 15 for i in range(12)]
    text = "\n\n".join(paragraphs) + "\n"
    result = chunked(text, "text", max_chars=250)
    assert len(result.chunks) > 1
    for chunk in result.chunks:
        assert chunk.kind == "window" and chunk.symbol is None and chunk.header == ""
        assert chunk.text.startswith("paragraph")
    assert result.symbols == []


def test_lines_are_split_on_newline_only() -> None:
    # \x0c, \x0b and \u2028 are not line breaks for editors; line numbers must not drift.
    text = "a = 1\x0c\nb = 2\u2028still line two\nc\x0b = 3\ndef f():\n    return 1\n"
    result = chunked(text, "python")
    assert result.chunks[-1].start_line == 4
    assert symbol(result, "f").name_line == 4


def test_empty_and_blank_files() -> None:
    for language in ("python", "markdown", "text", "go"):
        assert chunked("", language).chunks == []
        assert chunked("\n\n   \n\t\n", language).chunks == []


def test_long_single_line_is_its_own_chunk_kept_whole() -> None:
    long_line = "x = [" + ", ".join(str(i) for i in range(500)) + "]"
    text = f"import os\n{long_line}\nprint(x)\n"
    result = chunked(text, "python", max_chars=200)
    own = chunk_at(result, 2)
    assert (own.start_line, own.end_line, own.text) == (2, 2, long_line)


def test_pathological_input_is_fast() -> None:
    minified = "var a=" + "[1,2,3]," * 250_000 + "0;\n"  # 2 MB on one line
    started = time.perf_counter()
    result = chunked(minified, "javascript")
    assert time.perf_counter() - started < 1.0
    assert [c.kind for c in result.chunks] == ["window"]
    deep = "x = " + "(" * 5000 + ")" * 5000 + "\n"
    chunked(deep, "python")
    # Thousands of nested definitions (generated code) must stay linear, not quadratic.
    nested = "function f() {\n" * 5000 + "}\n" * 5000
    started = time.perf_counter()
    result = chunked(nested, "javascript")
    assert time.perf_counter() - started < 2.0
    assert len(result.symbols) == 5000


def test_threads_share_grammars_safely() -> None:
    sources = [(PYTHON, "python"), (GO, "go"), (RUST, "rust"), (CPP, "cpp"), (JAVA, "java")]
    expected = [chunk_source("x", text, lang) for text, lang in sources]
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            for (text, lang), want in zip(sources, expected, strict=True):
                if chunk_source("x", text, lang) != want:
                    failures.append(lang)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunk_source("x.py", "x = 1\n", "python", max_chars=0)


# ---- properties ---------------------------------------------------------------------------

_PYTHON_LINES = [
    "def f(x):",
    "    return x",
    "class A(B):",
    "    def m(self):",
    "        pass",
    "    @property",
    "@decorator",
    "# comment",
    "",
    "",
    "x = 1",
    "X_MAX = 2",
    "if x:",
    "    y = 2",
    "else:",
    '    """doc"""',
    '"""',
    ")",
    "    ]",
    "async def g():",
    "        await h()",
    "\tmixed = 1",
    "lambda: (",
    "x" * 90,
]
_C_LIKE_LINES = [
    "{",
    "}",
    "};",
    "function f() {",
    "int f(void) {",
    "class A {",
    "struct S {",
    "fn f() {",
    "func f() {",
    "impl A {",
    "// comment",
    "/** doc */",
    "return 1;",
    "",
    "",
    "#define X(a) a",
    "#ifdef X",
    "#endif",
    "x = 1;",
    "namespace n {",
    "interface I {",
    "type T = {",
    "export const g = () => {",
    "pub fn h(&self) -> u8 {",
    "@Override",
    "public void m() {",
    "template <typename T>",
    "enum E { A, B }",
    "y" * 90,
]
_MARKDOWN_LINES = [
    "# H1",
    "## H2",
    "### H3",
    "Title",
    "===",
    "---",
    "```",
    "~~~",
    "```py",
    "$$",
    "| a | b |",
    "|---|---|",
    "- item",
    "  continued",
    "1. first",
    "* star",
    "> quote",
    "",
    "",
    "",
    "text words here",
    "    indented code",
    "<div>",
    "***",
    "+++",
    "z" * 90,
]


def _lines(vocabulary: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(vocabulary), max_size=60).map("\n".join)


_PROPERTY_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY_SETTINGS
@given(text=_lines(_PYTHON_LINES), max_chars=st.integers(20, 400))
def test_property_python(text: str, max_chars: int) -> None:
    check_invariants(text, chunk_source("x.py", text, "python", max_chars=max_chars), max_chars)


@_PROPERTY_SETTINGS
@given(
    text=_lines(_C_LIKE_LINES),
    max_chars=st.integers(20, 400),
    language=st.sampled_from(sorted(set(GRAMMARS) - {"python"})),
)
def test_property_c_like(text: str, max_chars: int, language: str) -> None:
    check_invariants(text, chunk_source("x", text, language, max_chars=max_chars), max_chars)


@_PROPERTY_SETTINGS
@given(text=_lines(_MARKDOWN_LINES), max_chars=st.integers(20, 400))
def test_property_markdown(text: str, max_chars: int) -> None:
    result = chunk_source("x.md", text, "markdown", max_chars=max_chars)
    check_invariants(text, result, max_chars)


@_PROPERTY_SETTINGS
@given(text=st.text(st.sampled_from("ab \n\t\x0c\u2028é{}#"), max_size=400), max_chars=st.integers(1, 120))
def test_property_text_windows(text: str, max_chars: int) -> None:
    check_invariants(text, chunk_source("x.txt", text, "text", max_chars=max_chars), max_chars)
