"""Definition-level chunks and symbols for source code, from one tree-sitter parse.

One query run (per ``grammars.Grammar``) finds every definition at any depth. From those this
module derives both outputs:

* **Symbols** — every named definition, qualified by the definitions around it (methods by
  their class, nested functions by their function, Go methods by their receiver, Rust ``impl``
  members by the implemented type, C++ ``Foo::bar`` by ``Foo``).
* **Chunks** — the file is cut at definitions. A definition that fits the budget is one chunk
  (a small class with its methods included). A container too big (class, impl, namespace …)
  becomes its header part plus one chunk per member, recursively; anything else too big (a long
  function) becomes line windows cut preferably at blank lines and shallow statement starts.
  Lines between definitions (imports, constants, top-level statements) are packed into windows.
  Each chunk's ``header`` carries the signatures of the definitions around it that its text
  does not show. Comments, decorators and attributes directly above a definition belong to it.

A one-line definition is not a chunk of its own (a run of one-line functions or type aliases is
packed into one window instead of a chunk per line); it still gets its symbol, and a window of a
class body names the one-line functions in it after the class's name: the defined ones as
members (``interprocess connection: get socket``), then those only declared — C++ prototypes,
pure virtual and abstract methods — after ``; declares`` (search's name boost reads the defined
ones only: for a typed name the definition is the answer; a class kept whole lists those it only
declares the same way); one kept with the chunk above it (a
short crumb after a destructor) is listed with that chunk's members. Such a window holds four of them at
most: a C++ header's run of undocumented declarations packed twenty to a window is a list in
which each member weighs a twentieth, next to the ``.cpp`` definitions of its siblings, each a
chunk of its own. Overloads next to each other (one qualified name, only blank lines between)
are one chunk when they fit: the short ones (``this(in, inf, 512)``) say what they do only
next to the one they delegate to. The exception to one-liners in windows is
a member declaration of a trait or interface (Rust ``fn read_at(…);``, a Go interface method, a
TypeScript method signature): when the trait declares two or more, it is split even if it fits,
and each declaration is a chunk with the trait named in its header, of kind ``declaration``
(``model.DECLARATION_KIND``: search ranks it with the methods implementing it). TypeScript
overload signatures belong to the implementation below them (one chunk: how it is called and
what it does). A top-level window of a variable or constant of more than two lines (a table of
data) leads with its name in words, as a window of free one-liners leads with theirs.
Top-level windows holding only imports (and comments) get kind ``imports``, and
comment-only windows before the first code (licence headers) kind ``preamble``, so search can
keep them out of its dense ranking.

Every member chunk names its owner in the model input: a member of a container that fits is
inside the container's chunk; the members of a split container carry its signature (``class
A(B):``, ``impl Read for File``, ``interface Foo``) as header; a Go method names its receiver in
its own signature; and the path comes first in every model input. Every definition's header
is led by its qualified name in plain words (``Box.into_raw`` → ``box into raw``), which the
model's word pieces read better than ``camelCase``; a definition kept whole with definitions
inside it (an ``impl`` or class that fits, a function with nested helpers; a window of a long
definition, those that start in it) lists their names after its own (``impl PartialOrd for
Rc<T>`` → ``rc: partial cmp, lt, le, gt, ge``). On the samples of ``bench/multilang.py`` every
method chunk names its owner (Go 250, Rust 492, TypeScript 145, Java 758, C++ 623).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import tree_sitter as ts

from kenning.chunking import luacats
from kenning.chunking.components import blank_outside, script_lines
from kenning.chunking.directives import blank_inactive_branches
from kenning.chunking.grammars import (
    DECLARING_KINDS,
    SIGILS,
    TYPE_KINDS,
    Compiled,
    Grammar,
    Rule,
    compiled,
    error_nodes,
    name_anchor,
    name_text,
    node_text,
    parser_for,
)
from kenning.chunking.header import name_line, names_line
from kenning.chunking.lines import LineIndex, pack_windows
from kenning.chunking.macros import blank_macros
from kenning.chunking.model import CALLABLE_KINDS, DECLARATION_KIND, Symbol
from kenning.chunking.objc_macros import blank_cxx_bodies, repair_objc
from kenning.chunking.rust_macros import open_item_macros
from kenning.chunking.ts_repairs import repair as repair_typescript

# C, C++ and Objective-C: parsed with macro invocations blanked (``macros.py``); a ".h" falls
# back from C++ to C, an Objective-C++ file from Objective-C to C++ (``parser_input``).
_MACRO_GRAMMARS = frozenset({"c", "cpp", "objective-c"})
_TS_GRAMMARS = frozenset({"typescript", "tsx"})
# Containers nested deeper than this are windowed instead of recursed into (generated code).
_MAX_NESTING = 48
# How deep below the definition being windowed statements still count as cut points.
_MAX_STATEMENT_DEPTH = 48
# Longest signature kept in a header line; longer ones are cut with "…" (headers are prepended
# to the embedded text and compete with the code for the model's 256 tokens).
_MAX_SIGNATURE = 120
# Lines between definitions this short (at most two of them) join a neighbouring chunk.
_CRUMB_CHARS = 100
# A section's heading between definitions (`// MARK: - Color String Parsing`, a `//----`
# banner around `// Helpers`): comment lines only, at most this many and this long, lead the
# definition after them when both fit one chunk.
_HEADING_LINES = 4
_HEADING_CHARS = 400
# The symbol kinds of a top-level table of data that a window is named after.
_DATA_KINDS = frozenset({"variable", "constant"})
# How far up `_comment_start` looks for the `/*` of a comment that ends above a definition.
_MAX_COMMENT_LINES = 400
_CLOSING = re.compile(r"[)\]}]|#\s*(?:endif|else|elif)\b")
# A conditional's opening (C's and Swift's `#if os(iOS)`, `#ifdef`): it leads into what follows.
_OPENING_DIRECTIVE = re.compile(r"#\s*(?:if|ifdef|ifndef)\b")


@dataclass(slots=True, eq=False)
class _Unit:
    """A definition that is a chunk candidate."""

    rule: Rule
    kind: str
    name: str | None
    qualname: str | None
    node: ts.Node  # the definition itself
    span_node: ts.Node  # grown into its wrappers (decorators, export, template<…>)
    start: int  # 1-based first line, attached comments included
    end: int
    def_line: int  # where the definition node (its signature) starts
    order: int  # rule order: breaks ties between identical spans (typedef struct)
    children: list[_Unit] = field(default_factory=list)
    # The functions and methods directly inside that are not chunk units (one-line
    # definitions, C++ method declarations), in order.
    leaves: list[_Leaf] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class _Leaf:
    """A function or method that is no chunk of its own: a one-liner, a declaration."""

    start_byte: int
    end_byte: int
    start: int  # 1-based first line, attached comments included
    name: str
    declared: bool  # no body: a prototype, a pure virtual or abstract method
    container: str | None  # its symbol's container: a class, a Go receiver, `Foo` of `Foo::bar`


@dataclass(slots=True)
class _Out:
    """A chunk being built; text is added at the end."""

    start: int
    end: int
    kind: str
    symbol: str | None
    header: tuple[str, ...]
    members: tuple[str, ...] = ()  # the names defined inside a container kept whole
    declared: tuple[str, ...] = ()  # the functions only declared in it


def parser_input(grammar: Grammar, src: bytes) -> bytes:
    """``src`` as ``grammar``'s parser reads it (names and signatures come from it too): what
    the parser misreads blanked or rewritten in place, every offset unchanged; chunk texts still
    come from the file as written."""
    if grammar.name in _MACRO_GRAMMARS:
        src = blank_macros(src)  # macros.py
        if grammar.name == "objective-c":
            # Apple's enums and React Native's exported methods read as what they expand to
            # (objc_macros.py); each `#if`'s first branch, as C#'s (directives.py): a method
            # inside `#ifdef` makes the rest of an `@implementation` one error; Objective-C++'s
            # bodies that hold C++ blanked (objc_macros.py), as its errors do too.
            src = blank_cxx_bodies(blank_inactive_branches(repair_objc(src)))
    elif grammar.name in ("csharp", "swift"):
        src = blank_inactive_branches(src)  # each `#if`'s first branch, the directives blanked
    return src


def _body(node: ts.Node, body_types: frozenset[str]) -> ts.Node | None:
    """A definition's body: its own, or that of the function its value or right side holds
    (``const f = (x) => …``, ``Foo.prototype.bar = function () {…}``); in a grammar that names
    no body field, its child of one of ``body_types`` (Kotlin's ``class_body``)."""
    body = node.child_by_field_name("body")
    if body is None:
        value = node.child_by_field_name("value") or node.child_by_field_name("right")
        if value is not None:
            body = value.child_by_field_name("body")
    if body is None and body_types:
        body = next((child for child in node.children if child.type in body_types), None)
    return body


# The most children an error node may have before a file is windowed instead of read (see
# `CodeChunker.__init__`). Real code's widest, over every file of the benchmark's sources,
# the Go and Rust standard libraries and the npm packages audited: 5,963 (a JUCE header).
_MAX_ERROR_CHILDREN = 10_000


def _widest_error(root: ts.Node) -> int:
    """The most children of an error node under ``root``; stops once one has more than
    ``_MAX_ERROR_CHILDREN``, without listing them."""
    widest = 0
    for node in error_nodes(root):
        if node.is_error:
            widest = max(widest, node.child_count)
            if widest > _MAX_ERROR_CHILDREN:
                break
    return widest


def _bytes_in_errors(root: ts.Node) -> int:
    """Bytes of the source inside error nodes under ``root`` (a missing node counts one), so a
    file read as one error node counts all of it."""
    return sum(
        node.end_byte - node.start_byte if node.is_error else 1
        for node in error_nodes(root, within_errors=False)
    )


def _end_line(node: ts.Node) -> int:
    """1-based last line of a node; a node ending at column 0 ends on the line before."""
    row, col = node.end_point
    if col == 0 and row > node.start_point.row:
        row -= 1
    return row + 1


class CodeChunker:
    """Chunks and symbols of one source file; use ``run()`` once."""

    def __init__(
        self,
        grammar: Grammar,
        text: str,
        index: LineIndex,
        budget: int,
        *,
        fallback: Grammar | None = None,
        scripts: list[tuple[int, int, str]] | None = None,
    ) -> None:
        self.grammar = grammar
        self.index = index
        self.budget = budget
        # surrogatepass: text decoded with surrogateescape must not crash the encoder; tree-sitter
        # treats the odd bytes like any invalid UTF-8.
        self.src = text.encode("utf-8", "surrogatepass")
        # A component's lines that hold only script (first, last), in order; None for code files.
        self._script_lines: list[tuple[int, int]] | None = None
        if scripts is not None:
            # The parser reads a component's scripts alone: its markup and styles are blanked,
            # offsets kept; chunk texts, markup included, come from `text` (components.py).
            self._script_lines = script_lines(self.src, scripts)
            self.src = blank_outside(self.src, scripts)
        plain = self.src  # before any grammar's rewriting: the fallback's starts from it too
        self.src = parser_input(grammar, plain)
        tree = parser_for(grammar).parse(self.src)
        if grammar.name == "rust":
            # Items inside `cfg_rt! { … }` are read where they stand (rust_macros.py).
            self.src, tree = open_item_macros(parser_for(grammar), self.src, tree)
        elif grammar.name in _TS_GRAMMARS:
            # Parsed again with what the grammar misreads rewritten in place (ts_repairs.py).
            tree = repair_typescript(parser_for(grammar), self.src, tree)
        if fallback is not None and tree.root_node.has_error:
            # A second opinion where the extension does not settle the grammar (a ".h" is C or
            # C++; a ".js" may be Flow-typed): keep whichever leaves less of the file in error
            # nodes, the first on a tie.
            other_src = parser_input(fallback, plain)
            other = parser_for(fallback).parse(other_src)
            if _bytes_in_errors(other.root_node) < _bytes_in_errors(tree.root_node):
                self.grammar, tree, self.src = fallback, other, other_src
        if tree.root_node.has_error and (widest := _widest_error(tree.root_node)) > _MAX_ERROR_CHILDREN:
            # tree-sitter's queries take time quadratic in an error node's children: 40,000
            # lines of `---` took 10 s, and a 2 MB file of them would take hours. No definition
            # is read from such a file anyway; `chunk_source` windows it.
            raise ValueError(f"an error node of {widest:,} children")
        self.compiled: Compiled = compiled(self.grammar)
        self.root = tree.root_node
        self.symbols: list[Symbol] = []
        self.units: list[_Unit] = []
        self.leaves: list[_Leaf] = []
        self.root_leaves: list[_Leaf] = []  # the leaves in no unit (top-level one-liners)
        self.out: list[_Out] = []
        self._first_text = index.next_nonblank(1, index.count)  # the file's first non-blank line
        # (first line, last line, name) of each variable or constant `_data_names` lists, built
        # on first use.
        self._data: list[tuple[int, int, str]] | None = None

    # ---- definitions -------------------------------------------------------------------

    def _span_node(self, node: ts.Node) -> ts.Node:
        grammar = self.grammar
        span = node
        while True:
            parent = span.parent
            if parent is None:
                return span
            sole = parent.type in grammar.sole_wrappers and parent.named_child_count == 1
            if not sole and parent.type not in grammar.wrappers:
                return span
            span = parent

    def _starts_line(self, node: ts.Node) -> bool:
        col = node.start_point.column
        return col == 0 or not self.src[node.start_byte - col : node.start_byte].strip()

    def _first_line(self, span: ts.Node, name: str | None = None) -> int:
        """First line of a definition with the comments/attributes glued on top of it, and
        the overload signatures of the same name above it (TypeScript), blank lines or not:
        the signatures are how the function is called, its body what it does."""
        start = span.start_point.row + 1
        attached = self.grammar.attached
        prev = span.prev_named_sibling
        parent = span.parent
        first_in_body = parent is not None and parent.start_byte == span.start_byte
        if prev is None and self.grammar.comments_outside_body and first_in_body:
            assert parent is not None
            prev = parent.prev_named_sibling
        while prev is not None and self._starts_line(prev):
            if prev.type in attached and _end_line(prev) >= start - 1:
                start = min(start, prev.start_point.row + 1)
            elif name is not None and self._is_overload(prev, name):
                start = min(start, self._first_line(prev))
            else:
                break
            prev = prev.prev_named_sibling
        return start

    def _is_overload(self, node: ts.Node, name: str) -> bool:
        overloads = self.grammar.overloads
        if not overloads:
            return False
        while node.type in self.grammar.wrappers and node.named_child_count == 1:
            node = node.named_children[0]
        if node.type not in overloads:
            return False
        found = node.child_by_field_name("name")
        return found is not None and node_text(found, self.src) == name

    def _char_col(self, node: ts.Node) -> int:
        row, col = node.start_point
        line = self.index.lines[row] if row < self.index.count else ""
        if line.isascii():
            return col
        line_start = node.start_byte - col
        return len(self.src[line_start : node.start_byte].decode("utf-8", "replace"))

    def _refine(
        self,
        kind: str,
        name: str,
        qualifier: tuple[str, ...],
        parent: _Scope | None,
        type_names: set[str],
    ) -> str:
        if kind == "function":
            if qualifier:  # C++ out-of-line `Foo::bar`: a method unless Foo is a namespace
                owner = qualifier[-1]
                if owner == name:
                    return "constructor"
                # A heuristic: class names are known from this file or capitalised, namespaces
                # (std, absl, llvm) conventionally are not.
                if name.startswith("~") or owner in type_names or owner[:1].isupper():
                    return "method"
                return "function"
            if parent is not None and parent.kind in TYPE_KINDS:
                if self.grammar.name == "cpp" and name == parent.name:
                    return "constructor"
                return "method"
        elif kind == "method" and name == "constructor" and self.grammar.name in _JS_LIKE:
            return "constructor"
        return kind

    def _any_name_matches(self, rule: Rule, node: ts.Node) -> bool:
        pattern = rule.name_pattern or ""
        return any(re.match(pattern, name_text(n, self.src).strip()) for n, _ in rule.names(node, self.src))

    def collect(self) -> None:
        """Symbols and chunk units from the definitions query."""
        src = self.src
        rules = self.grammar.rules
        captures = ts.QueryCursor(self.compiled.definitions).captures(self.root)
        entries: list[tuple[int, int, int, str, ts.Node]] = []
        seen: set[int] = set()
        for order, key in enumerate(self.compiled.rule_order):
            rule = rules[key]
            for node in captures.get(key, ()):
                if node.end_byte <= node.start_byte or node.id in seen:
                    continue  # zero-width MISSING nodes; a node an earlier rule already took
                if rule.name_pattern and not self._any_name_matches(rule, node):
                    continue  # left to a later rule (Python: `List = _alias(…)` is no constant)
                seen.add(node.id)
                entries.append((node.start_byte, -node.end_byte, order, key, node))
        entries.sort(key=lambda entry: entry[:3])

        scopes: list[_Scope] = []
        type_names: set[str] = set()
        defined: set[tuple[str | None, str]] = set()  # (container, name) of each symbol
        # Attributes set on `self`, each at its first assignment: a class attribute or method of
        # the name, above or below, is that symbol already (a property's setter, say).
        attributes: dict[tuple[str | None, str], Symbol] = {}
        for start_byte, neg_end, order, key, node in entries:
            end_byte = -neg_end
            while scopes and (scopes[-1].end_byte <= start_byte or scopes[-1].end_byte < end_byte):
                scopes.pop()
            parent = scopes[-1] if scopes else None
            path = parent.path if parent is not None else ()
            rule = rules[key]
            # tree-sitter finds a node's parent and siblings by walking down from the root, so
            # growing spans costs O(depth); in generated code nesting definitions thousands
            # deep that turns quadratic. So deep definitions keep their bare span and are
            # symbols only (their chunks are windows of an enclosing definition anyway), and
            # stop qualifying containers further (their names would grow quadratically too).
            deep = len(scopes) >= _MAX_NESTING
            span = node if deep else self._span_node(node)
            span_start = span.start_point.row + 1
            # A node can end past its last line of text (C#'s `#define` takes the blank line
            # after it): the definition, and the chunk and symbol of it, end on its last text.
            text_span = self.index.trim(span_start, _end_line(span))
            span_end = text_span[1] if text_span is not None else span_start

            first: tuple[str | None, tuple[str, ...], str] | None = None
            name: str | None
            names = rule.names(node, src)
            if rule.receiver:  # `self.x = …`: only on the receiver of the method it is directly in
                receiver = parent.receiver if parent is not None else None
                names = [(n, ()) for n, on in names if receiver is not None and on == (receiver,)]
            for name_node, qualifier in names:
                name = name_text(name_node, src).strip()
                if not name or (rule.name_pattern and not re.match(rule.name_pattern, name)):
                    continue
                kind = rule.kind
                if rule.refine:
                    kind = self._refine(kind, name, qualifier, parent, type_names)
                if kind in TYPE_KINDS:
                    type_names.add(name)
                if rule.symbol:
                    container = ".".join((path[:-1] if rule.receiver else path) + qualifier) or None
                    anchor = name_anchor(name_node)  # where the editor's selection starts
                    symbol = Symbol(
                        name=name,
                        kind=kind,
                        container=container,
                        start_line=span_start,
                        end_line=span_end,
                        name_line=anchor.start_point.row + 1,
                        name_col=self._char_col(anchor) + SIGILS.get(name_node.type, 0),
                    )
                    if rule.receiver:  # listed after the walk, unless its class defines the name
                        attributes.setdefault((container, name), symbol)
                    else:
                        defined.add((container, name))
                        self.symbols.append(symbol)
                if first is None:
                    first = (name, qualifier, kind)

            name, qualifier, kind = first if first is not None else (None, (), rule.kind)
            own_path = path + qualifier + (tuple(name.split("::")) if name else ())
            if name is None and rule.scope_name is not None:
                own_path += tuple(name_text(n, src).strip() for n, _ in rule.scope_name(node, src))
            if rule.scope and not deep:
                receiver = (
                    rule.receiver_of(node, span, src) if rule.receiver_of and kind == "method" else None
                )
                scopes.append(_Scope(end_byte, own_path, kind, name, receiver))
            chunk = rule.chunk
            if rule.declaration:
                chunk = parent is not None and parent.kind in DECLARING_KINDS
            first_line = self._first_line(span, name) if chunk and not deep else 0
            # One-liners stay in the windows around them, but a trait's or interface's member
            # declarations are what a reader looks for in it: each is its own chunk.
            unit = chunk and not deep and (span_end > first_line or rule.declaration)
            if not unit and not deep and name and kind in CALLABLE_KINDS:
                # A function held by a variable, property or field has its body in the value
                # (`const clamp = (n) => …`): it is defined, not only declared.
                declared = _body(node, self.grammar.body_types) is None
                container = ".".join(path + qualifier) or None
                self.leaves.append(
                    _Leaf(span.start_byte, span.end_byte, self._first_line(span), name, declared, container)
                )
            if unit:
                self.units.append(
                    _Unit(
                        rule=rule,
                        kind=kind,
                        name=name,
                        qualname=".".join(own_path) or None,
                        node=node,
                        span_node=span,
                        start=first_line,
                        end=span_end,
                        def_line=node.start_point.row + 1,
                        order=order,
                    )
                )
        self.symbols += [symbol for key, symbol in attributes.items() if key not in defined]
        if self.grammar.name == "lua":
            self._collect_annotations()

    def _collect_annotations(self) -> None:
        """The types LuaCATS comments define (``---@class``, ``---@alias``, ``---@enum``,
        ``luacats.py``), each a symbol as lua-language-server lists it. Their lines stay where
        the chunker puts comments: a class's own chunk (its ``---@field`` lines kept apart from
        the windows around them) ranked Neovim's option classes above the functions a sentence
        described, Lua −0.0035 pooled over six samples (docs/performance.md, session 52)."""
        lines = self.index.lines
        # The top-level `---` lines: a bare `---` is an empty line of the comment, a longer row of
        # dashes a banner between sections.
        comments = sorted(
            node.start_point.row + 1
            for node in self.root.children
            if node.type == "comment"
            and _end_line(node) == node.start_point.row + 1
            and (text := lines[node.start_point.row].strip()).startswith("---")
            and (text == "---" or text.strip("-"))
        )
        runs: list[tuple[int, int]] = []
        for line in comments:
            if runs and runs[-1][1] == line - 1:
                runs[-1] = (runs[-1][0], line)
            else:
                runs.append((line, line))
        for note in luacats.declared_types(lines, runs):
            container, _, name = note.name.rpartition(".")
            self.symbols.append(
                Symbol(
                    name,
                    note.kind,
                    container or None,
                    note.start,
                    note.end,
                    note.tag_line,
                    note.name_col + (len(container) + 1 if container else 0),  # at the name itself
                )
            )

    def _tree(self) -> list[_Unit]:
        """Nest the chunk units by their spans (identical spans, typedef struct, are one) and
        give each leaf to the innermost unit around it, in the same sweep."""
        self.units.sort(key=lambda u: (u.span_node.start_byte, -u.span_node.end_byte, u.order))
        leaves = sorted(self.leaves, key=lambda leaf: leaf.start_byte)
        next_leaf = 0
        roots: list[_Unit] = []
        stack: list[_Unit] = []
        previous: _Unit | None = None

        def attach_leaves_before(byte: int) -> None:
            # Spans nest or are apart, so a unit that ends inside a leaf's span cannot hold it,
            # nor any unit after it: popping it here is what the next unit would do.
            nonlocal next_leaf
            while next_leaf < len(leaves) and leaves[next_leaf].start_byte < byte:
                leaf = leaves[next_leaf]
                next_leaf += 1
                while stack and stack[-1].span_node.end_byte < leaf.end_byte:
                    stack.pop()
                (stack[-1].leaves if stack else self.root_leaves).append(leaf)

        for unit in self.units:
            start_byte, end_byte = unit.span_node.start_byte, unit.span_node.end_byte
            attach_leaves_before(start_byte)
            if previous is not None and (
                previous.span_node.start_byte == start_byte and previous.span_node.end_byte == end_byte
            ):
                if previous.name is None and unit.name is not None:
                    previous.name, previous.qualname = unit.name, unit.qualname
                continue
            while stack and (
                stack[-1].span_node.end_byte <= start_byte or stack[-1].span_node.end_byte < end_byte
            ):
                stack.pop()
            (stack[-1].children if stack else roots).append(unit)
            stack.append(unit)
            previous = unit
        attach_leaves_before(len(self.src) + 1)
        # By first line, so that a window finds its leaves by bisection (`_leaves_on`): a file
        # of 20,000 one-liners is cut into a thousand windows.
        for leaves_of_one in (self.root_leaves, *(unit.leaves for unit in self.units)):
            leaves_of_one.sort(key=_leaf_start)
        return roots

    # ---- chunks ------------------------------------------------------------------------

    def _signature(self, unit: _Unit) -> str:
        """The unit's signature on one line, e.g. ``    def big(self, x):``."""
        src = self.src
        node = unit.node
        start_node = unit.span_node if unit.rule.sig_from_span else node
        body = _body(node, self.grammar.body_types)
        start = start_node.start_byte
        if body is not None and body.start_byte > start:
            end = body.start_byte
            if self.grammar.comments_outside_body:
                end = next(
                    (
                        c.start_byte
                        for c in node.children
                        if c.type in self.grammar.attached and start < c.start_byte < end
                    ),
                    end,
                )
        else:
            newline = src.find(b"\n", start)
            end = len(src) if newline < 0 else newline
        signature = " ".join(src[start:end].decode("utf-8", "replace").split())
        if body is None:
            signature = signature.rstrip("{").rstrip()
        if len(signature) > _MAX_SIGNATURE:
            signature = signature[: _MAX_SIGNATURE - 1].rstrip() + "…"
        line = self.index.line(start_node.start_point.row + 1)
        return line[: len(line) - len(line.lstrip())] + signature

    def _statement_bonus(self, start: int, end: int, within: ts.Node) -> dict[int, int]:
        """Cut bonus per line that starts a statement: 4 at the range's shallowest indent."""
        cursor = ts.QueryCursor(self.compiled.blocks)
        cursor.set_point_range((start - 1, 0), (end, 0))
        # Statements nested deeper than this are poor cut points anyway, and the wildcard
        # pattern is slow to match in pathologically deep trees without a bound.
        cursor.set_max_start_depth(_MAX_STATEMENT_DEPTH)
        indents: dict[int, int] = {}
        lines = self.index.lines
        for node in cursor.captures(within).get("s", ()):
            line = node.start_point.row + 1
            if line <= start or line > end or line in indents or not self._starts_line(node):
                continue
            text = lines[line - 1].expandtabs(4)
            indents[line] = len(text) - len(text.lstrip())
        if not indents:
            return {}
        levels = sorted(set(indents.values()))
        step = min(8, max(1, levels[1] - levels[0])) if len(levels) > 1 else 4
        base = levels[0]
        return {line: 4 - min(3, (indent - base) // step) for line, indent in indents.items()}

    def _emit_windows(self, start: int, end: int, owner: _Unit | None, headers: tuple[str, ...]) -> None:
        index = self.index
        bonus: dict[int, int] = {}
        if index.size(start, end) > self.budget:
            bonus = self._statement_bonus(start, end, owner.span_node if owner is not None else self.root)
        signature: str | None = None
        # A section's heading is not cut off from what it heads (ESLint's `// Rule Definition`
        # banner above `module.exports = {…}` was a window of its own); but a file's first lines
        # (a licence, a preamble) head nothing in particular, and the last lines of a long
        # comment (` * @property …` / ` */`) are no heading.
        windows = pack_windows(
            index,
            start,
            end,
            self.budget,
            bonus,
            leads=lambda first, last: (
                first != self._first_text
                and not index.line(first).lstrip().startswith("*")
                and self._is_heading(first, last)
                and self._code_follows(last + 1, end)
            ),
        )
        if owner is not None and owner.rule.container:
            windows = [part for first, last in windows for part in self._member_parts(owner, first, last)]
        for first, last in windows:
            if owner is None:
                # One-liners at the top level: Go's `func (e *Error) Unwrap() error { … }`, C++'s
                # `int Foo::size() const { … }` outside any namespace.
                container = _leaf_container(self.root_leaves, first, last)
                if container:
                    named = _leaf_names(self.root_leaves, first, last, declared=False)
                    self.out.append(_Out(first, last, "window", container, headers, named))
                    continue
                # Free one-liners (Go's `func IPv4Unspecified() Addr { … }`), or those of
                # several receivers: no one name fits the window, so it leads with theirs.
                labels = _leaf_names(self.root_leaves, first, last, declared=False, qualified=True)
                # Else the multi-line variables and constants it holds or continues (Go's `var
                # nativeHistogramBounds = [][]float64{…}`, a module's `const defaults = {…}`):
                # their names are what says what the table is, and a later window shows none.
                labels = labels or self._data_names(first, last)
                listed = (names_line(labels, _MAX_SIGNATURE),) if labels else ()
                self.out.append(_Out(first, last, "window", None, (*listed, *headers)))
                continue
            header = headers
            if first > owner.def_line:  # the signature is not in this window's text
                if signature is None:
                    signature = self._signature(owner)
                header = (*headers, signature)
            # The helpers defined in this window (`createResponse` in `fromAjax`'s), named
            # after the owner's name as a container kept whole names its members.
            inside = _members(owner, first, last, leaves=True)
            declared = _leaf_names(owner.leaves, first, last, declared=True)
            # One-liners of one class defined out of line in a namespace (`float
            # AudioParameterFloat::getValue() const { … }` in `namespace juce`) are that
            # class's members: the window is named after it, not after the namespace.
            # A function's window stays the function's: the one-liners in it are its helpers
            # (`unsubscribe: () => …` of an object literal in a constructor).
            symbol = owner.qualname
            if owner.kind not in CALLABLE_KINDS and all(
                child.end < first or child.start > last for child in owner.children
            ):
                symbol = _leaf_container(owner.leaves, first, last) or symbol
            self.out.append(_Out(first, last, owner.kind, symbol, header, inside, declared))

    def _data_names(self, first: int, last: int) -> tuple[str, ...]:
        """The top-level variables and constants of more than two lines, or documented, on
        lines ``first..last`` or around them (a documented one from its comment's first line),
        in order."""
        data = self._data
        if data is None:
            data = []
            for symbol in self.symbols:
                if symbol.container is not None or symbol.kind not in _DATA_KINDS:
                    continue
                start = self._comment_start(symbol.start_line)
                if symbol.end_line - symbol.start_line >= 2 or start < symbol.start_line:
                    data.append((start, symbol.end_line, symbol.name))
            data.sort()
            self._data = data
        # Top-level definitions do not nest: walk back from the last one starting in the window
        # until one ends before it.
        found: list[str] = []
        i = bisect.bisect_right(data, last, key=lambda entry: entry[0])
        while i > 0 and data[i - 1][1] >= first:
            i -= 1
            found.append(data[i][2])
        return tuple(dict.fromkeys(reversed(found)))

    def _comment_start(self, line: int) -> int:
        """The first line of the comment right above ``line`` (Effect's `export const
        configureGlobal = Internal.configureGlobal` under twenty lines of its documentation),
        ``line`` itself when there is none."""
        lines = self.index.lines
        above = lines[line - 2].strip() if line > 1 else ""
        if above.endswith("*/"):
            for start in range(line - 1, max(0, line - 1 - _MAX_COMMENT_LINES), -1):
                if "/*" in lines[start - 1]:
                    return start
            return line
        marks = _COMMENT_PREFIXES.get(self.grammar.name, ("//",))
        while line > 1 and lines[line - 2].lstrip().startswith(marks):
            line -= 1
        return line

    def _member_parts(self, owner: _Unit, first: int, last: int) -> list[tuple[int, int]]:
        """Window ``first..last`` of a container's body cut before members so that no part
        holds more than ``_WINDOW_MEMBERS`` of its one-line members (declarations, one-line
        definitions), in parts of even member counts."""
        starts = [leaf.start for leaf in _leaves_on(owner.leaves, first, last)]
        parts = -(-len(starts) // _WINDOW_MEMBERS)
        if parts <= 1:
            return [(first, last)]
        cuts = [starts[round(i * len(starts) / parts)] for i in range(1, parts)]
        out: list[tuple[int, int]] = []
        position = first
        for cut in [*cuts, last + 1]:
            span = self.index.trim(position, cut - 1)
            if span is not None:
                out.append(span)
            position = cut
        return out

    def _emit_loose(
        self,
        start: int,
        end: int,
        owner: _Unit | None,
        headers: tuple[str, ...],
        first_out: int,
        following: tuple[int, int] | None,
    ) -> int | None:
        """Window the lines between definitions; returns a line to glue onto the next unit.

        A section's heading (``_is_heading``: a few comment lines) leads the definition below
        it, when both fit one chunk and it is not the file's first (a licence, a preamble);
        after the last definition such lines close the chunk above, when they fit. A
        crumb — at most two short lines — is not worth a chunk of its own when a neighbour
        can take it within the budget: closing brackets (``}``, ``#endif``) join the chunk
        before; a line that opens what follows (``class A:`` before its first method,
        ``if TYPE_CHECKING:``, ``extern "C" {``) or a comment banner joins the next
        definition; anything else (``__radd__ = __add__``) joins the chunk above it — inside
        a class always, at the top level only when no blank line separates them (imports and
        constants between blank lines stay windows of their own).
        """
        index = self.index
        span = index.trim(start, end)
        if span is None:
            return None
        start, end = span
        previous = self.out[-1] if len(self.out) > first_out else None
        back_fits = previous is not None and index.size(previous.start, end) <= self.budget
        if (
            following is not None
            and (previous is not None or owner is not None)  # not the file's licence or preamble
            and index.size(start, following[1]) <= self.budget
            and self._is_heading(start, end)
        ):
            return start
        if following is None and back_fits and self._is_heading(start, end):
            # A few comment lines after the last definition (Swift's closing `// swiftlint:enable
            # …` directives, an end-of-class note) close the chunk above, as a `}` does.
            assert previous is not None
            previous.end = end
            return None
        if back_fits and self._is_closing(start, end):
            assert previous is not None
            previous.end = end
            return None
        if self._is_crumb(start, end):
            if (
                following is not None
                and index.size(start, following[1]) <= self.budget
                and self._introduces(start, end)
            ):
                return start
            # Inside a class the crumb is about the class anyway (`forget = pack_forget`
            # after `def pack_forget`); at the top level only when nothing separates them.
            if back_fits and previous is not None and (owner is not None or previous.end == start - 1):
                previous.end = end
                # A one-line definition in the crumb (`void Foo::update() { … }` after
                # `Foo::~Foo`) is named with the chunk's members, or its name finds nothing.
                leaves = owner.leaves if owner is not None else self.root_leaves
                named = _leaf_names(leaves, start, end, declared=False)
                previous.members = tuple(dict.fromkeys((*previous.members, *named)))
                return None
        self._emit_windows(start, end, owner, headers)
        return None

    def _is_crumb(self, start: int, end: int) -> bool:
        """Whether the lines are a crumb: at most two short lines."""
        return self.index.size(start, end) <= _CRUMB_CHARS and self.index.nonblank(start, end) <= 2

    def _is_opening(self, start: int, end: int) -> bool:
        """Whether the lines are a crumb that leads into what follows (``#if os(iOS)``,
        ``extern "C" {``)."""
        return self._is_crumb(start, end) and self._introduces(start, end)

    def _introduces(self, start: int, end: int) -> bool:
        """Whether the lines lead into what follows: a block opener, a conditional's opening
        under nothing but comments, or only comments."""
        last = self.index.line(end).rstrip()
        if last.endswith((":", "{", "(")):
            return True
        if _OPENING_DIRECTIVE.match(last.lstrip()):
            return self._only_comments(start, end - 1)
        return self._only_comments(start, end)

    def _only_comments(self, start: int, end: int) -> bool:
        prefixes = _COMMENT_PREFIXES.get(self.grammar.name, ("//", "/*", "*"))
        return all(
            line.lstrip().startswith(prefixes) for line in self.index.lines[start - 1 : end] if line.strip()
        )

    def _code_follows(self, start: int, end: int) -> bool:
        """Whether code comes next from line ``start`` on (up to ``end``), past blank lines and
        at most one line of comment (`/** @type {…} */` above `module.exports = {`): not another
        comment block (a run of `@typedef` comments above the next)."""
        index = self.index
        comments = 0
        line = index.next_nonblank(start, end)
        while line is not None and self._only_comments(line, line):
            comments += 1
            if comments > 1:
                return False
            line = index.next_nonblank(line + 1, end)
        return line is not None

    def _is_heading(self, start: int, end: int) -> bool:
        """Whether the lines are a section's heading: a few comment lines, which name what
        follows them better than they say anything alone (as a result of their own they were
        one line of `// MARK: - Private`)."""
        index = self.index
        return (
            index.size(start, end) <= _HEADING_CHARS
            and index.nonblank(start, end) <= _HEADING_LINES
            and self._only_comments(start, end)
        )

    def _is_closing(self, start: int, end: int) -> bool:
        index = self.index
        for n in range(start, end + 1):
            line = index.line(n).strip()
            if line and _CLOSING.match(line) is None and any(ch.isalnum() for ch in line):
                return False
        return True

    def _emit_unit(
        self, unit: _Unit, start: int, end: int, merged: bool, headers: tuple[str, ...], depth: int
    ) -> None:
        splittable = unit.rule.container and unit.children and not merged and depth < _MAX_NESTING
        # A trait or interface declaring two members or more is split even when it fits: each
        # declaration its own chunk, the trait named in its header. With one, the container's
        # chunk is already about that member.
        if self.index.size(start, end) <= self.budget and not (
            splittable and sum(child.rule.declaration for child in unit.children) >= 2
        ):
            self.out.append(_whole(unit, start, end, headers))
        elif splittable:
            self._emit_region(start, end, unit.children, unit, headers, depth + 1)
        else:
            self._emit_windows(start, end, unit, headers)

    def _emit_region(
        self,
        low: int,
        high: int,
        children: list[_Unit],
        owner: _Unit | None,
        headers: tuple[str, ...],
        depth: int,
    ) -> None:
        """Lines low..high: the children as units, the lines between them as windows."""
        member_headers = headers if owner is None else (*headers, self._signature(owner))
        items: list[tuple[int, int, _Unit, bool]] = []
        for child in children:
            start, end = max(child.start, low), min(child.end, high)
            if items and start <= items[-1][1]:
                # Two definitions sharing a line (`} int b() {`): one chunk, no member split.
                first_start, first_end, first_unit, _ = items[-1]
                items[-1] = (first_start, max(first_end, end), first_unit, True)
            elif start <= end:
                items.append((start, end, child, False))
        items = self._group_overloads(items)
        first_out = len(self.out)
        position = low
        for start, end, child, merged in items:
            glued = None
            if start > position:
                glued = self._emit_loose(position, start - 1, owner, headers, first_out, (start, end))
            if glued is not None:
                # The crumb before it is part of its chunk now; when that crumb holds the
                # owner's signature (`class A:`), the signature is in the text, not the header.
                inner = headers if owner is not None and glued <= owner.def_line else member_headers
                self.out.append(_whole(child, glued, end, inner))
            else:
                emitted = len(self.out)
                self._emit_unit(child, start, end, merged, member_headers, depth)
                if start > position:
                    self._lead_with_heading(emitted, position, start, first_out if owner is None else -1)
            position = end + 1
        if position <= high:
            self._emit_loose(position, high, owner, headers, first_out, None)

    def _lead_with_heading(self, emitted: int, loose: int, start: int, first_out: int) -> None:
        """A heading or an opening crumb (``_is_opening``: ``#if os(iOS)``) left a window of its
        own (the lines ``loose..start - 1`` were windowed) above a definition too big for one
        chunk (``// MARK: - Recovering the native object from JS`` over an ``extension``) leads
        the definition's first chunk, when that chunk starts on the definition's first line
        and both fit the budget; not a file's first lines (``first_out``: where the file's
        chunks start, -1 inside a definition)."""
        if emitted - 1 <= first_out or emitted >= len(self.out):
            return
        heading, lead = self.out[emitted - 1], self.out[emitted]
        if (
            heading.kind == "window"
            and heading.symbol is None
            and lead.start == start
            and loose <= heading.start
            and self.index.size(heading.start, lead.end) <= self.budget
            and (self._is_heading(heading.start, heading.end) or self._is_opening(heading.start, heading.end))
        ):
            lead.start = heading.start
            del self.out[emitted - 1]

    def _group_overloads(
        self, items: list[tuple[int, int, _Unit, bool]]
    ) -> list[tuple[int, int, _Unit, bool]]:
        """Overloads (consecutive functions of one qualified name, only blank lines between)
        that fit the budget together are one item: Java's and C++'s constructors and methods
        of one name are variants of one operation, and the short ones (``this(in, inf, 512)``)
        say what they do only next to the one they delegate to."""
        index = self.index
        grouped: list[tuple[int, int, _Unit, bool]] = []
        for start, end, child, merged in items:
            if grouped:
                first_start, first_end, first_child, first_merged = grouped[-1]
                if (
                    child.kind in CALLABLE_KINDS
                    and child.qualname is not None
                    and child.qualname == first_child.qualname
                    and all(index.is_blank(n) for n in range(first_end + 1, start))
                    and index.size(first_start, end) <= self.budget
                ):
                    grouped[-1] = (first_start, end, first_child, first_merged)
                    continue
            grouped.append((start, end, child, merged))
        return grouped

    def _mark_boilerplate(self) -> None:
        """Top-level windows of only imports (and comments) become kind ``imports``; comment-only
        windows before any code (licence headers, module preambles) kind ``preamble``. Search
        keeps both out of its dense ranking: they say little about what the file does, yet a
        short import block sits close to many descriptive queries."""
        imports = self.grammar.imports
        if not imports and not self.grammar.import_calls:
            return
        top = self.root.named_children
        first_code = next((n.start_point.row + 1 for n in top if not _is_comment(n)), None)
        position = 0
        for out in self.out:
            if out.kind != "window" or out.symbol is not None or out.header:
                continue
            if self._script_lines is not None and not any(
                first <= out.start and out.end <= last for first, last in self._script_lines
            ):
                continue  # a component's markup or styles say what it shows: never boilerplate
            has_import = False
            plain = True
            while position < len(top) and _end_line(top[position]) < out.start:
                position += 1
            i = position
            while i < len(top) and top[i].start_point.row + 1 <= out.end:
                node = top[i]
                i += 1
                if _is_comment(node) or node.type in _NEUTRAL:
                    continue
                if (
                    node.type in imports
                    or (node.type == "export_statement" and node.child_by_field_name("source") is not None)
                    or self._is_import_call(node)
                ):
                    has_import = True
                    continue
                if self.grammar.name == "python" and _is_docstring(node):
                    continue
                plain = False
                break
            if not plain:
                continue
            if has_import:
                out.kind = "imports"
            elif first_code is None or out.end < first_code:
                out.kind = "preamble"

    def _is_import_call(self, node: ts.Node) -> bool:
        """A call that only brings names in: Ruby's ``require "set"`` (a method call to the
        grammar, named in ``Grammar.import_calls``)."""
        if node.type != "call" or not self.grammar.import_calls:
            return False
        method = node.child_by_field_name("method")
        receiver = node.child_by_field_name("receiver")
        return (
            receiver is None
            and method is not None
            and node_text(method, self.src) in self.grammar.import_calls
        )

    def run(self) -> tuple[list[tuple[int, int, str, str | None, str]], list[Symbol]]:
        """``(start, end, kind, symbol, header)`` per chunk, in order, and the symbols."""
        self.collect()
        roots = self._tree()
        self._emit_region(1, self.index.count, roots, None, (), 0)
        self._mark_boilerplate()
        chunks = [(out.start, out.end, out.kind, out.symbol, _header(out)) for out in self.out]
        return chunks, self.symbols


def _chunk_kind(unit: _Unit) -> str:
    """A trait's or interface's member declaration is kind ``declaration`` (search ranks it
    with the definitions that implement it); any other unit's chunk has the unit's kind."""
    return DECLARATION_KIND if unit.rule.declaration else unit.kind


def _whole(unit: _Unit, start: int, end: int, headers: tuple[str, ...]) -> _Out:
    """The chunk of ``unit`` kept whole on lines ``start..end``: named after it, listing the
    definitions inside it and the one-liners it only declares."""
    declared = _leaf_names(unit.leaves, start, end, declared=True)
    return _Out(start, end, _chunk_kind(unit), unit.qualname, headers, _members(unit), declared)


def _members(
    unit: _Unit, first: int = 1, last: int | None = None, *, leaves: bool = False
) -> tuple[str, ...]:
    """The names of the definitions directly inside ``unit`` that start on lines
    ``first..last`` (all of them by default), each once, in order; with ``leaves`` the
    one-line definitions too."""
    found = [(child.start, child.name) for child in unit.children if child.name]
    if leaves:
        # By bisection, as everywhere a window looks for its one-liners: this runs per window.
        on = _leaves_on(unit.leaves, first, last if last is not None else unit.end)
        found = sorted([*found, *((leaf.start, leaf.name) for leaf in on if not leaf.declared)])
    return tuple(
        dict.fromkeys(name for line, name in found if first <= line and (last is None or line <= last))
    )


def _leaf_start(leaf: _Leaf) -> int:
    return leaf.start


def _leaves_on(leaves: list[_Leaf], first: int, last: int) -> list[_Leaf]:
    """The leaves (sorted by first line) that start on lines ``first..last``."""
    lo = bisect.bisect_left(leaves, first, key=_leaf_start)
    return leaves[lo : bisect.bisect_right(leaves, last, lo=lo, key=_leaf_start)]


def _leaf_container(leaves: list[_Leaf], first: int, last: int) -> str | None:
    """The one container of the one-line definitions on lines ``first..last``, or None when
    they have none or several."""
    found = {leaf.container for leaf in _leaves_on(leaves, first, last) if not leaf.declared}
    return found.pop() if len(found) == 1 else None


def _leaf_names(
    leaves: list[_Leaf], first: int, last: int, *, declared: bool, qualified: bool = False
) -> tuple[str, ...]:
    """The names of the leaves on lines ``first..last`` that are only declared (C++
    prototypes, pure virtual and abstract methods), or with ``declared`` false the one-line
    definitions; with ``qualified`` each after its container when it has one (``A.Len``);
    each once, in order."""
    names = (
        f"{leaf.container}.{leaf.name}" if qualified and leaf.container else leaf.name
        for leaf in _leaves_on(leaves, first, last)
        if leaf.declared == declared
    )
    return tuple(dict.fromkeys(names))


def _header(out: _Out) -> str:
    """The chunk's header lines, led by its definition's name in plain words (``Box.into_raw``
    → ``box into raw``, ``fromFetch`` → ``from fetch``, ``st_ino`` → ``st inode``): the
    model's word pieces read ``newZeroedSlice`` as ``new ##zer ##oed ##sl ##ice``, and a
    descriptive query is words.
    A container kept whole adds its members' names (``impl PartialOrd for Rc<T>`` → ``rc:
    partial cmp, lt, le, gt, ge``): its name alone says nothing of what is in it."""
    if out.symbol is None:
        return "\n".join(out.header)
    return "\n".join((name_line(out.symbol, out.members, _MAX_SIGNATURE, out.declared), *out.header))


@dataclass(slots=True)
class _Scope:
    end_byte: int
    path: tuple[str, ...]
    kind: str
    name: str | None
    receiver: str | None = None  # what a method sets attributes on (Python's `self`)


_JS_LIKE = frozenset({"javascript", "typescript", "tsx"})
# The most one-line members (declarations, one-line definitions) a window of a class body holds.
_WINDOW_MEMBERS = 4
_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
# Top-level nodes that neither make a window boilerplate nor keep it from being so: Rust's
# attributes (`#![no_std]`, and the `#[stable(…)]` on each `pub use` of a re-export list), and
# C#'s file-level directives (`#pragma warning disable …` and `#nullable enable` above the usings).
_NEUTRAL = frozenset(
    {
        *("inner_attribute_item", "attribute_item", "ERROR"),
        *("preproc_pragma", "preproc_nullable", "preproc_region", "preproc_endregion"),
    }
)


def _is_comment(node: ts.Node) -> bool:
    return node.type in _COMMENTS


def _is_docstring(node: ts.Node) -> bool:
    return (
        node.type == "expression_statement"
        and node.named_child_count == 1
        and (node.named_children[0].type == "string")
    )


# How a comment's lines start where a language does not write C's `//` and `/* … */` (in C a
# `#` line is no comment).
_COMMENT_PREFIXES = {"python": ("#",), "ruby": ("#",), "shell": ("#",), "lua": ("--",)}
