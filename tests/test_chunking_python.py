"""Chunking and symbols of Python (and that every structured language's grammar compiles)."""

from __future__ import annotations

from kenning.chunking.components import COMPONENT_LANGUAGES
from kenning.chunking.grammars import GRAMMARS, compiled
from kenning.languages import LANGUAGES
from tests.chunking_helpers import (
    chunk_at,
    chunked,
    spans,
    src,
    symbol,
    symbols_of,
)

# ---- grammars -----------------------------------------------------------------------------


def test_every_structured_language_has_a_grammar_that_compiles() -> None:
    structured = {name for name, info in LANGUAGES.items() if info.parser == "tree-sitter"}
    # Vue and Svelte components are read by the TypeScript and JavaScript grammars, Jupyter
    # notebooks by their kernel's.
    assert structured == set(GRAMMARS) | COMPONENT_LANGUAGES | {"jupyter"}
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
        ("default_port", "field", "HTTPConnection"),
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


def test_python_class_attributes_are_fields_and_enum_members_are_members() -> None:
    result = chunked(
        src(
            """
            @dataclass
            class Options:
                verbose: bool = False
                name: str
                def run(self):
                    self.count = 0

            class Color(str, enum.Enum):
                RED = "red"
                GREEN = BLUE = "green"

            class Mode(IntFlag):
                READ = 1
            """
        ),
        "python",
    )
    assert symbols_of(result) == {
        ("Options", "class", None),
        ("verbose", "field", "Options"),
        ("name", "field", "Options"),
        ("run", "method", "Options"),
        ("count", "field", "Options"),  # an instance attribute (the next test)
        ("Color", "class", None),
        ("RED", "enum_member", "Color"),
        ("GREEN", "enum_member", "Color"),
        ("BLUE", "enum_member", "Color"),
        ("Mode", "class", None),
        ("READ", "enum_member", "Mode"),
    }
    assert all(c.kind not in ("field", "enum_member") for c in result.chunks)


def test_python_type_aliases_are_symbols() -> None:
    result = chunked(
        src(
            """
            from typing import TypeAlias
            Vector = list[float]
            Matrix: TypeAlias = list[Vector]
            type Point = tuple[float, float]
            type Pair[T] = tuple[T, T]
            first = rows[0]
            """
        ),
        "python",
    )
    # As pyright lists them; `first = rows[0]` indexes a value and stays out.
    assert symbols_of(result) == {
        ("Vector", "type", None),
        ("Matrix", "type", None),
        ("Point", "type", None),
        ("Pair", "type", None),
    }
    assert [c.kind for c in result.chunks] == ["window"]


def test_python_instance_attributes_are_fields_of_their_class() -> None:
    """``self.x = …`` in any method is a field of the class (as pyrefly lists it), once, at its
    first assignment, unless the class defines the name itself (above or below); not another
    object's attribute, nor a nested function's or a static method's."""
    result = chunked(
        src(
            """
            class Client:
                timeout: float = 1.0

                def __init__(self, host, port=80, *, timeout=None):
                    self.host = host
                    self.port: int = port
                    if timeout is not None:
                        self.timeout = timeout
                    self.reader, self.writer = open_pair()
                    other.peer = self
                    def later():
                        self.nested = 1

                @staticmethod
                def make(self):
                    self.static = 1

                @classmethod
                def configure(cls, level):
                    cls.level = level

                def reset(self: "Client") -> None:
                    self.host = None
                    self._buffer = []
                    self.closed = False
                    self.retries = 0

                @property
                def closed(self):
                    return self._buffer is None

                retries = 3

            def free(self):
                self.loose = 1
            obj.attr = 2
            """
        ),
        "python",
    )
    fields = {
        (s.name, s.container, s.start_line, s.name_line, s.name_col)
        for s in result.symbols
        if s.kind == "field"
    }
    assert fields == {
        ("timeout", "Client", 2, 2, 4),  # the class attribute; `self.timeout = …` is the same one
        ("host", "Client", 5, 5, 13),  # its first assignment, not reset's
        ("port", "Client", 6, 6, 13),
        ("reader", "Client", 9, 9, 13),
        ("writer", "Client", 9, 9, 26),
        ("level", "Client", 20, 20, 12),
        ("_buffer", "Client", 24, 24, 13),
        # Set on self, defined by the class below: the class's own (a property is a method).
        ("retries", "Client", 32, 32, 4),
    }
    assert [(s.kind, s.start_line) for s in result.symbols if s.name == "closed"] == [("method", 28)]
    assert all(c.kind != "field" for c in result.chunks)


def test_python_capwords_made_by_a_call_is_a_symbol() -> None:
    result = chunked(
        src(
            """
            List = _alias(list, 1, inst=False, name="List")
            Point = namedtuple("Point", "x y")
            MAX_SIZE = int("10")
            log = logging.getLogger(__name__)
            Alias = List
            def f():
                Local = namedtuple("Local", "a")
            """
        ),
        "python",
    )
    assert symbols_of(result) == {
        ("List", "variable", None),  # typing's
        ("Point", "variable", None),
        ("MAX_SIZE", "constant", None),  # an UPPER_CASE name stays a constant
        ("f", "function", None),
    }


def test_python_chunks_at_definitions() -> None:
    result = chunked(PYTHON, "python")
    assert spans(result) == [
        (1, 5, "window", None),
        (8, 22, "class", "HTTPConnection"),  # fits the budget: one chunk with its methods
        (25, 26, "function", "helper"),
    ]
    # A definition's header is its name in words (what the model reads first); a class kept
    # whole adds the names defined directly in it.
    assert [c.header for c in result.chunks] == ["", "http connection: request, inner", "helper"]


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
    # A method kept whole names what it defines (a nested `encode`) after its own name.
    assert chunk_at(result, 13).header == "http connection request: encode\nclass HTTPConnection(Base):"
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


def test_a_section_heading_leads_the_definition_below_it() -> None:
    # go/ast's banners and the JDK's `// Helpers for …` sections: each was a window of its own,
    # a comment and nothing else as a result (inside a class, one named after the class).
    text = src(
        """
        class Bits:
            def get_boolean(self, b, off):
                return b[off] != 0

            # ----------------------------------------------------------------------
            # Methods for packing primitive values into byte arrays starting at
            # given offsets.
            # ----------------------------------------------------------------------

            def put_boolean(self, b, off, val):
                b[off] = 1 if val else 0

            # Helpers for fetchers of one field, method, or constructor

            def search_fields(self, fields, name):
                return [f for f in fields if f.name == name]
        """
    )
    result = chunked(text, "python", max_chars=400)
    assert spans(result) == [
        (1, 3, "method", "Bits.get_boolean"),
        (5, 11, "method", "Bits.put_boolean"),
        (13, 16, "method", "Bits.search_fields"),
    ]
    # Where the two do not fit one chunk, the heading stays on its own.
    assert (10, 11, "method", "Bits.put_boolean") in spans(chunked(text, "python", max_chars=200))


def test_name_column_counts_characters_not_bytes() -> None:
    text = 'x = "héllo"; y = "wörld"\nclass Ünïcode:\n    pass\n'
    result = chunked(text, "python")
    cls = symbol(result, "Ünïcode")
    assert (cls.name_line, cls.name_col) == (2, 6)
