"""A chunk's signature: its first line of code and the enclosing signatures its header carries
(``impl From<String> for OsString``), what the ranking reads of it besides its name: the words it
relates, whether it answers yes or no, the conversion a Rust `From` impl is, and the names it
gives its parameters."""

from __future__ import annotations

import re

from kenning.chunking.model import SIGNATURE_KINDS
from kenning.lexical import FUNCTION_WORDS, NAME
from kenning.store.rows import ChunkRow

_WORDS = re.compile(r"\w+")
_NOT_A_SIGNATURE = ("#", "//", "/*", "*", "@")  # attributes, comments, decorators
# The most of a chunk's first line read as its signature. A line can hold 20,000 characters, and
# the patterns below backtrack: 20,000 characters of `impl From<` took `_CONVERSION` 212 s.
# The longest signature line of Rust's and Go's standard libraries is far shorter.
SIGNATURE_CHARS = 500


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
    return [first[:SIGNATURE_CHARS], *enclosing_signatures(row).split("\n")]


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


# Words a parameter list writes beside a parameter's name: Rust's `mut` and `ref`, TypeScript's
# constructor properties, C's and Java's qualifiers; and the receivers that are keywords (`self`,
# `this`, `cls`), which a sentence calls "this" or by their type, never by that name.
_NOT_PARAMETER_NAMES = frozenset(
    {"mut", "ref", "impl", "dyn", "public", "private", "protected", "readonly", "override",
     "final", "const", "volatile", "struct", "unsigned", "signed", "self", "this", "cls"}
)  # fmt: skip
# A parameter's default (`x = 1`, `x: int = 1`), not a comparison or an arrow.
_DEFAULT = re.compile(r"(?<![=!<>])=(?![=>])")
# A type annotation's colon (`dur: Duration`), not a path's (`io::Result`).
_TYPE_COLON = re.compile(r"(?<!:):(?!:)")
# A Go method's receiver list opens here.
_GO_RECEIVER = re.compile(r"\bfunc\s*\(")


def parameter_names(row: ChunkRow) -> frozenset[str]:
    """The names a callable's chunk gives its parameters, and a Go method its receiver and its
    named results (``func (v *Float) Add(delta float64)``: ``{v, delta}``): what a doc comment
    calls them ("adds delta to v", "scans text read from r", "Copies `val` into …"). Empty for
    any other chunk."""
    if not row.symbol or row.kind not in SIGNATURE_KINDS:
        return frozenset()
    # A signature is near the chunk's top (after its attributes or decorators).
    return _parameter_names(row.text[:1500], row.symbol.rsplit(".", 1)[-1], row.language == "go")


# A doc comment's opening: Javadoc's, JSDoc's, HeaderDoc's and Swift's `/**`, Qt's and Doxygen's
# `/*!`, Rust's, Swift's and C#'s `///`, Rust's inner `//!`. Go's and C's plain `//` and `/*`
# are left out: above a definition they are as often a note or a lint directive as its doc.
_DOC_LINE = ("///", "//!")
_DOC_BLOCK = ("/**", "/*!")
_ABOVE_A_NAME = ("//", "@", "#[", "[")  # other comments, attributes between a doc and its code


def documents(row: ChunkRow, name: str) -> bool:
    """Whether a doc comment stands above the first line of code in the chunk that names
    ``name`` (``/** … */`` or ``///`` lines, attributes and other ``//`` lines between
    allowed): whether the chunk says there what that definition does."""
    named = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    lines = row.text.split("\n")
    in_block = False
    at = None
    for i, line in enumerate(lines):
        text = line.strip()
        if in_block:
            in_block = "*/" not in text
        elif text.startswith("/*"):
            in_block = "*/" not in text[2:]
        elif not text.startswith(("//", "*")) and named.search(text):
            at = i
            break
    if at is None:
        return False
    for i in range(at - 1, -1, -1):
        text = lines[i].strip()
        if text.startswith(_DOC_LINE):
            return True
        if text.endswith("*/"):
            # The block's opening: the nearest `/*` at or above its closing line.
            opening = next((lines[j].strip() for j in range(i, -1, -1) if "/*" in lines[j]), "")
            return opening[opening.find("/*") :].startswith(_DOC_BLOCK)
        if not text.startswith(_ABOVE_A_NAME):
            return False
    return False


def _parameter_names(code: str, name: str, go: bool) -> frozenset[str]:
    start = _parameter_list_start(code, name)
    if start is None:
        return frozenset()
    lists = 1
    if go:  # `func (r *Reader) Read(p []byte) (n int, err error)`: receiver, parameters, results
        receiver = _GO_RECEIVER.search(code)
        if receiver is not None and receiver.end() <= start:
            start, lists = receiver.end() - 1, 3
        else:
            lists = 2
    names: set[str] = set()
    for parameter in _parameter_lists(code, start, lists):
        names.update(_declared_names(parameter, go))
    return frozenset(names)


def _parameter_list_start(code: str, name: str) -> int | None:
    """Where the first parameter list after ``name`` (a whole word, past its generic parameters)
    opens. A string search, not a regular expression: a pattern per name filled the `re` cache
    and compiling them took a third of the time."""
    at = code.find(name)
    while at >= 0:
        end = at + len(name)
        starts = at == 0 or not _is_name_char(code[at - 1])
        if starts and (end == len(code) or not _is_name_char(code[end])):
            after = _past_generics(code, end)
            if after < len(code) and code[after] == "(":
                return after
        at = code.find(name, end)
    return None


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _past_generics(code: str, at: int) -> int:
    """Where ``code`` goes on after the spaces and the generic parameters (`<F: FnOnce(T) -> U>`,
    Go's `[K comparable, V any]`) that follow a name ending at ``at``."""
    at = _past_spaces(code, at)
    if at < len(code) and code[at] in "<[":
        opening, closing = code[at], ">" if code[at] == "<" else "]"
        depth = 0
        for i in range(at, len(code)):
            if code[i] == opening:
                depth += 1
            elif code[i] == closing and code[i - 1] not in "-=":  # not `->` or `=>`
                depth -= 1
                if depth == 0:
                    return _past_spaces(code, i + 1)
    return at


def _past_spaces(code: str, at: int) -> int:
    while at < len(code) and code[at] in " \t":
        at += 1
    return at


def _parameter_lists(code: str, start: int, lists: int) -> list[str]:
    """The parameters (as written) of up to ``lists`` bracketed lists from ``start`` on, each
    list's top-level commas splitting them; the lists end at a body, a `;`, a `=` or the line's
    end."""
    parameters: list[str] = []
    depth = 0
    parameter = ""
    for i in range(start, len(code)):
        ch = code[i]
        if ch in "([<{":
            depth += 1
            if depth == 1:
                if ch != "(":
                    break  # a body or a where clause's bracket: the lists are over
                parameter = ""
                continue
        elif ch in ")]>}" and not (ch == ">" and code[i - 1] in "-="):
            depth -= 1
            if depth == 0:
                parameters.append(parameter)
                lists -= 1
                if lists == 0:
                    break
                continue
        elif depth == 0 and ch in ";=\n":
            break
        if depth == 1 and ch == ",":
            parameters.append(parameter)
            parameter = ""
        elif depth >= 1:
            parameter += ch
    return parameters


def _declared_names(parameter: str, go: bool) -> list[str]:
    """The names one parameter declares: before its type's colon (Rust, TypeScript, Python; a
    destructured `{ a, b }: Options` declares both), else the first word (Go's `r io.Reader`) or
    the last (C's `const char *s`, Java's `final String name`)."""
    parameter = _DEFAULT.split(parameter, maxsplit=1)[0]
    colon = _TYPE_COLON.search(parameter)
    names = NAME.findall(parameter if colon is None else parameter[: colon.start()])
    names = [name for name in names if name not in _NOT_PARAMETER_NAMES]
    if colon is not None or not names:
        return names
    return [names[0] if go else names[-1]]
