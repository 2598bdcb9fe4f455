"""Chunking of plain text, edge cases (empty, huge, pathological, threads) and the coverage
invariants as properties; per-language fixtures are in test_chunking_python/_languages/_markdown.

Input is assumed normalised (``"\\n"`` line endings, no ``"\\r"``, no BOM) — the reader does that
before chunking; these tests never feed CRLF text.
"""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kenning.chunking import ChunkedFile, chunk_source
from kenning.chunking.grammars import GRAMMARS
from tests.chunking_helpers import (
    check_invariants,
    chunk_at,
    chunked,
    symbol,
)
from tests.test_chunking_languages import CPP, GO, JAVA, RUST
from tests.test_chunking_python import PYTHON

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


def _cpu_seconds(text: str, language: str) -> tuple[float, ChunkedFile]:
    """This process's CPU time to chunk ``text``: what the chunker costs, whatever else the
    machine runs meanwhile (wall time doubled under a benchmark beside the tests)."""
    started = time.process_time()
    result = chunked(text, language)
    return time.process_time() - started, result


def test_pathological_input_is_fast() -> None:
    # Bounds that a quadratic walk exceeds many times over (the times in parentheses), with room
    # for a slow machine: these inputs take 0.01-0.9 s here.
    minified = "var a=" + "[1,2,3]," * 250_000 + "0;\n"  # 2 MB on one line
    seconds, result = _cpu_seconds(minified, "javascript")
    assert seconds < 1.0
    assert [c.kind for c in result.chunks] == ["window"]
    deep = "x = " + "(" * 5000 + ")" * 5000 + "\n"
    chunked(deep, "python")
    # Thousands of nested definitions (generated code) must stay linear, not quadratic.
    nested = "function f() {\n" * 5000 + "}\n" * 5000
    seconds, result = _cpu_seconds(nested, "javascript")
    assert seconds < 2.0
    assert len(result.symbols) == 5000
    # Attributes set on self 500 blocks deep (2.7 s when each climbed the tree to its method).
    lines = ["class A:", "    def f(self):"]
    for depth in range(500):
        lines += [" " * (8 + depth) + "if x:", " " * (9 + depth) + f"self.a{depth} = 1"]
    seconds, result = _cpu_seconds("\n".join(lines) + "\n", "python")
    assert seconds < 1.0
    assert sum(s.kind == "field" for s in result.symbols) == 500
    # Functions set on a parameter 1,000 blocks deep (22 s when each climbed to its function).
    nested_sets = "function g(o) {\n" + "if (x) {\n o.f = function () {};\n" * 1000 + "}\n" * 1001
    seconds, result = _cpu_seconds(nested_sets, "javascript")
    assert seconds < 2.0
    assert len(result.symbols) == 1001


def test_a_file_read_as_one_wide_error_node_is_windowed() -> None:
    # 6,000 lines of `---` parse as one error node of 12,000 to 18,000 children, and
    # tree-sitter's queries take time quadratic in them (40,000 lines took 10 s; a 2 MB file
    # would take hours).
    for language in ("rust", "go", "python", "javascript", "c"):
        result = chunked("---\n" * 6000, language)
        assert result.symbols == []
        assert {c.kind for c in result.chunks} == {"window"}
    # As many children of a node that is no error are read as ever.
    text = "".join(f"def f{i}(): pass\n" for i in range(12_000))
    assert len(chunked(text, "python").symbols) == 12_000


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
# C#'s `#define` node takes the blank line after it: the function around it ended on that line.
@example(text="function f() {\n#define X(a) a\n\n", max_chars=30, language="csharp")
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
