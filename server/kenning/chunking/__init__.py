"""Cutting a file into chunks (the unit of search) and finding its symbols, in one pass.

``chunk_source`` is the only entry point. It picks the chunker from the language name:

* code with a tree-sitter grammar (python, javascript, typescript, tsx, go, rust, java, kotlin,
  swift, csharp, php, ruby, lua, shell, c, cpp)
  → definition-level chunks and symbols (``kenning.chunking.code``);
* ``vue``, ``svelte`` and ``astro`` components and ``html`` pages → the same for their scripts, the
  markup between and around them in windows (``kenning.chunking.components``);
* ``jupyter`` notebooks → the same for a view of their cells at the file's own lines, outputs
  and metadata left out (``kenning.chunking.notebooks``);
* ``markdown`` → heading-aware sections (``kenning.chunking.markdown``);
* anything else, and any file too large, too long-lined (minified) or failing to parse → line
  windows that prefer to cut at blank lines.

Guarantees, for every language: chunks are in order and do not overlap; every non-blank line
(``line.strip() != ""``) is in exactly one chunk; no chunk starts or ends with a blank line;
``text`` is exactly the chunk's lines joined with ``"\\n"``; a chunk is at most ``max_chars``
characters unless it is a single line that is longer on its own (kept whole — the embedder
truncates, the lexical index still sees all of it). A notebook's lines are those of its view:
its JSON lines with the cells' strings decoded, and blank elsewhere.

Input contract: ``text`` is already normalised — ``"\\n"`` line endings only (no ``"\\r"``), no
BOM. Lines are ``text.split("\\n")``; ``str.splitlines()`` would also split on ``\\x0b``,
``\\x0c``, ``\\u2028`` …, which editors do not, and line numbers must match the editor's.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from kenning.chunking.code import CodeChunker
from kenning.chunking.components import COMPONENT_LANGUAGES, script_grammar, script_spans
from kenning.chunking.grammars import GRAMMARS
from kenning.chunking.lines import LineIndex, pack_windows
from kenning.chunking.markdown import chunk_markdown
from kenning.chunking.model import BOILERPLATE_CHUNK_KINDS, Chunk, ChunkedFile, Symbol
from kenning.chunking.notebooks import NotebookView, notebook_view

__all__ = ["CHUNKER_VERSION", "DEFAULT_MAX_CHARS", "Chunk", "ChunkedFile", "Symbol", "chunk_source"]

# Recorded in every store; a store chunked by another version re-chunks its files on the next
# scan (unchanged model inputs keep their vectors). Bump it with every change to the chunks.
#  2: TypeScript overloads glued to their implementation; context lines in method headers.
#  3: every definition's header led by its name in plain words.
#  4: trait and interface member declarations as chunks of their own (Rust, Go, TypeScript).
#  5: a container kept whole names its members after its own name in its header.
#  6: a window of a long definition names the definitions that start in it the same way.
#  7: C and C++ parsed with macro invocations blanked (glibc's `attribute_hidden`, JUCE's
#     `JUCE_API`); C++ functions returning a reference (`String& f()`) named.
#  8: rulers (`//=====…`) shortened in the model input (`indexer.chunks.embed_input`); a class
#     body's windows name the one-line functions in them (defined, then `; declares`) and hold
#     four at most; overloads next to each other are one chunk when they fit.
#  9: a trait's or interface's member declaration chunk has kind `declaration` (search ranks
#     it directly above its implementations for a sentence query); model inputs unchanged.
# 10: a window of one-liners of one class defined outside it (C++ `Foo::bar` in a namespace,
#     Go methods of one receiver at the top level) is named after that class, with their names.
# 11: a one-line definition kept with the chunk above it (a crumb after `Foo::~Foo`) is named
#     with that chunk's members.
# 12: a Rust window of `mod` and `pub use` lines under attributes (`#[stable(…)]`, a module's
#     re-export list) is kind `imports`, as without the attributes; model inputs unchanged.
# 13: a top-level window of free one-liners (Go's `func IPv4Unspecified() Addr { … }`), or of
#     several receivers' ones, leads its model input with their names in words.
# 14: a container kept whole lists the members it only declares (abstract methods, C++
#     prototypes) after `; declares`, as a window of a longer body already did.
# 15: a definition's name in words has its abbreviations written out (`st_ino` → `st inode`,
#     `Sprintf` → `string print formatted`; abbreviations.ABBREVIATIONS).
# 16: `str` is no longer written out as `string` (`OsStr` and `OsString` read alike).
# 17: a C++ conversion operator is named (`operator bool`, `operator const char*`): it was no
#     symbol, and its chunk was named after its class.
# 18: a C++ member template's declaration in its class (`template <typename T> void put (T);`)
#     is a symbol and listed by its window, as other member declarations were.
# 19: an enum's members are symbols (Rust variants, TypeScript members, Java constants, C and
#     C++ enumerators); chunks unchanged (the bench's 697 files give the same chunks).
# 20: a Rust struct variant's fields have the variant as container (`Event.Key`), not the enum.
# 21: Go package variables declared in a `var ( … )` group are symbols, as single ones were.
# 22: a Java record's components are fields of the record (`record Range(int lo, int hi)`).
# 23: C and C++ variables at file scope (and in a C++ namespace) are symbols; chunks unchanged.
# 24: a Python class's attributes are fields (dataclass fields, class constants) and an Enum's
#     are its members; chunks unchanged (2,999 standard-library files give the same chunks).
# 25: a Go struct's embedded fields are named by their type (`*os.File` → File), as gopls lists them.
# 26: a method of a module's `const` object literal is named with it (`timerProvider.schedule`).
# 27: a TypeScript or JavaScript class field holding a function (`setValue = (…) => {…}`) is a
#     method: a chunk of its own named with its class, not a piece of an unnamed class window.
# 28: a function assigned to a property is its owner's (`Emitter.prototype.on = function` →
#     Emitter.on, `editHandlers.keydown = (…) =>`); `exports.helper` stays nobody's.
# 29: a module's `const` made by a call (`Button = forwardRef((props, ref) => {…})`, zod's
#     `ZodString = $constructor(…)`) is a symbol, and a chunk named after it; `require` is not.
# 30: a Python CapWords name a call makes at module level is a symbol (typing's `List =
#     _alias(…)`, `Point = namedtuple(…)`); chunks unchanged.
# 31: the fields of C's `typedef struct {…} point_t;` are point_t's (and an unnamed enum's
#     members its typedef's); one chunk of glibc's 42,725 renamed (a piece of Dl_serinfo).
# 32: a module's `const` made by `new` is a symbol (RxJS's `asyncScheduler`); chunks unchanged.
# 33: a Python instance attribute (`self.timeout = …` in a method) is a field of its class;
#     chunks unchanged.
# 34: a JavaScript/TypeScript function set on a parameter (zod's `inst.min = …` in
#     `$constructor("ZodString", (inst, def) => {…})`) is the enclosing definition's
#     (`ZodString.min`), not `inst`'s; chunks unchanged.
# 35: a Python method's receiver is read off the scope it is in, not by climbing the tree (which
#     was quadratic in nesting); a method defined under an `if` in its class lists its `self`
#     attributes too (cloudpickle's `CloudPickler.__init__`); chunks unchanged.
# 36: version 34's parameter is only looked for in the function whose body holds the assignment
#     as a statement (climbing further was quadratic in nesting); zod and RxJS list the same.
# 37: an attribute set on `self` whose name its class defines (a property, a class attribute
#     below the method) is that definition, not a second symbol; chunks unchanged.
# 38: a `const` a JavaScript/TypeScript module or namespace exports is a symbol whatever its case
#     (`export const asap = asapScheduler`); chunks unchanged.
# 39: a Rust trait's associated type (`type Item;`) is a symbol of the trait; chunks unchanged.
# 40: Python type aliases (`Vector = list[float]`, `Matrix: TypeAlias = …`, `type Point = …`) are
#     symbols; chunks unchanged.
# 41: nothing chunked differently: a store chunks once more so that chunks whose model input
#     was unchanged since an older version get that version's lexical words (a rechunk kept
#     their old ``idents`` until the store fix of this version).
# 42: a chunk's lexical words split its name's and path's compounds (``kenning.compounds``:
#     `Sizeof` → size of, `splitext` → split ext); chunks and what the model reads unchanged.
# 43: a one-line function held by a variable, property or field (`const clamp = (n) => …`) is
#     defined, not declared: a window names it with the one-line functions beside it, and a
#     function's window keeps the function's name when its one-liners are an object's.
# 44: Rust items inside a macro invocation (tokio's `cfg_rt! { pub fn spawn … }`, `cfg_if!`'s
#     branches) are read where they stand (`chunking.rust_macros`): tokio 1.24 has 432 functions
#     more, and its windows with no name fall from 911 to 396.
# 45: a top-level window of a variable or constant of more than two lines (Go's `var
#     nativeHistogramBounds = [][]float64{…}`, a module's `const defaults = {…}`) leads its model
#     input with the name in words, the later windows of it too (they show no name).
# 46: TypeScript's variance annotations (`interface Cache<in out K>`) and generic call signatures
#     one per line (Effect's dual APIs) are parsed as the code they are (`chunking.ts_repairs`):
#     in Effect 4, TanStack Query, tRPC, MobX and Immer, 1,420 symbols more and 2,998 windows
#     with no name fewer; the benchmark's TypeScript chunks are unchanged.
# 47: an anonymous default export (`export default function (…)`, `export default class`) is
#     named `default`, as tsserver lists it; a window of a documented top-level variable or
#     constant (Effect's `export const configureGlobal = Internal.configureGlobal` under its
#     documentation), its comment's windows too, leads with its name in words.
# 48: an escaped backtick in a template literal type no longer ends a TypeScript file's parse
#     (`chunking.ts_repairs`): Effect's Schema.ts, 19,744 lines, was one error node (its 1,691
#     symbols were misreadings); it now has 2,142 symbols and 42 windows with no name, not 373.
# 49: a ".js" file the JavaScript grammar reads with errors is read with the TSX grammar where
#     that leaves less of it in error nodes (Flow-typed JavaScript), and a ".h" by C where C++
#     leaves more of it in errors (it took C only when C read the file without any)
# 50: Vue and Svelte components: the definitions of their `<script>` blocks are chunks and
#     symbols (chunking/components.py); their markup stays in windows, never boilerplate
# 51: Astro components, their frontmatter and scripts read as TypeScript
# 52: Jupyter notebooks: their cells read where they stand in the JSON (code with the kernel's
#     grammar, Markdown as comments beside it, never boilerplate), outputs and metadata left out
# 53: HTML pages: their inline scripts parsed as JavaScript, as a component's are
# 54: C# parsed (tree-sitter-c-sharp), its `#if` branches after the first blanked, its usings
#     under `#pragma`/`#nullable` lines boilerplate
# 55: PHP parsed (tree-sitter-php), the HTML around its tags windowed where it stands
# 56: Ruby parsed (tree-sitter-ruby), `require` lines boilerplate
# 57: Kotlin and Swift parsed (tree-sitter-kotlin, tree-sitter-swift), Swift's `#if` branches after
#     the first blanked
# 58: PHP's promoted constructor parameters are the class's properties; C#'s local functions
#     are symbols
# 59: a Kotlin definition's signature runs to its body (the grammar names no body field), its
#     annotations joined to it; a one-line `fun f() = …` is defined, not declared
# 60: Lua parsed (tree-sitter-lua)
# 61: shell scripts parsed (tree-sitter-bash)
# 62: Ruby's `attr_reader`/`attr_writer`/`attr_accessor` names are properties
# 63: Objective-C parsed (tree-sitter-objc; `.m`, `.mm`, and `.h` headers declaring an
#     `@interface` or `@protocol`); a macro line after an Objective-C `@` line, or with an
#     `@{…}` argument, blanked like any other
# 64: an Objective-C(++) method's or function's body that holds C++ is read as its extent only
# 65: a `.h` that declares an Objective-C `@interface` or `@protocol` is language objective-c
# 66: C#'s operators, conversions, finalizers and indexers and Swift's operator functions and
#     `deinit` are methods; a member with no words (`==`) is left out of a header's list
# 67: Swift's custom operators, `associatedtype`s and macros, TypeScript's ambient `declare
#     const`/`let`/`var` are symbols
# 68: a section's heading (a few comment lines between definitions) leads the definition below
#     it when both fit one chunk
# 69: a heading left alone above a definition too big for one chunk leads its first chunk
# 70: a few comment lines after the last definition close the chunk above
# 71: a conditional's opening (`#if os(iOS)`, `#ifdef`) under nothing but comments leads the
#     definition below it
# 72: such an opening, left alone above a definition too big for one chunk, leads its first chunk
# 73: a chunk never ends (or starts) on a blank line a node took in (C#'s `#define`)
# 74: a definition's span (its chunk's and its symbol's) ends on its last line of text
# 75: a heading over code is not cut off from it where lines are windowed (ESLint's `// Rule
#     Definition` banner above `module.exports = {…}`)
# 76: Lua's LuaCATS types (`---@class`, `---@alias`, `---@enum`) are symbols
CHUNKER_VERSION = 76

log = logging.getLogger(__name__)

# Chosen by measurement: chunking the CPython 3.11 standard library (734 non-test .py files,
# 328k lines) and counting all-MiniLM-L6-v2 WordPiece tokens of what the indexer embeds
# ("path\nheader\ntext"), the share of chunks within the model's 256 tokens is 97.6 % at 700,
# 93.7 % at 800, 89.8 % at 900 and 86.3 % at 1000 characters. 800 leaves a margin for denser
# code (JavaScript: 91.3 %, LLVM's C++ headers: 89 %; C headers full of hex constants tokenize
# at 2.8 characters per token against 3.5 for Python and reach only ~77 %) and keeps the mean
# near 136 tokens, where the model is ~2.5x faster than at 256.
DEFAULT_MAX_CHARS = 800

# Beyond these a file is windowed without parsing: parse time grows with size, and a file whose
# text is mostly very long lines is minified or generated, where definitions help nobody.
_MAX_PARSE_CHARS = 2_000_000
_LONG_LINE = 2_000
_LONG_LINE_SHARE = 0.5

_Row = tuple[int, int, str, str | None, str]  # start, end, kind, symbol, header


def _is_minified(index: LineIndex, total: int) -> bool:
    long_chars = sum(len(line) for line in index.lines if len(line) > _LONG_LINE)
    return long_chars > _LONG_LINE_SHARE * total


def _windows(index: LineIndex, budget: int) -> list[_Row]:
    return [(start, end, "window", None, "") for start, end in pack_windows(index, 1, index.count, budget)]


def chunk_source(path: str, text: str, language: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> ChunkedFile:
    """Chunks and symbols of one file.

    ``path`` (POSIX, relative to the workspace root) is only used in log messages;
    ``language`` is a name from ``kenning.languages``; ``max_chars`` is the chunk budget.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    if language == "jupyter":
        return _chunk_notebook(path, text, max_chars)
    index = LineIndex(text)
    rows: list[_Row]
    symbols: list[Symbol] = []
    grammar = GRAMMARS.get(language)
    scripts = None
    if language in COMPONENT_LANGUAGES:
        # A Vue, Svelte or Astro component: its scripts are read by their grammar (components.py).
        scripts = script_spans(text.encode("utf-8", "surrogatepass"), language)
        grammar = GRAMMARS[script_grammar(scripts)] if scripts else None
    if grammar is not None and len(text) <= _MAX_PARSE_CHARS and not _is_minified(index, len(text)):
        try:
            fallback = None
            if language == "c" and path.endswith(".h"):
                # ".h" is C or C++; the C grammar reads `class X {…}` as a function without an
                # error, so try C++ first (a superset for declarations) and fall back to C when
                # C++ fails (C code using `new` or `class` as identifiers).
                grammar, fallback = GRAMMARS["cpp"], grammar
            elif language == "objective-c" and path.endswith((".mm", ".h")):
                # Objective-C++ (and a header that may be): the Objective-C grammar reads no C++
                # (`std::vector<int>`, lambdas) and the C++ grammar no `@implementation`;
                # whichever leaves less in errors.
                fallback = GRAMMARS["cpp"]
            elif language == "javascript":
                # Flow-typed JavaScript (React Native, Jest, Metro …) annotates types in ".js"
                # files; the JavaScript grammar loses whole files to them, the TSX grammar reads
                # nearly all of Flow's annotations.
                fallback = GRAMMARS["tsx"]
            chunker = CodeChunker(grammar, text, index, max_chars, fallback=fallback, scripts=scripts)
            rows, symbols = chunker.run()
        except (RecursionError, ValueError, RuntimeError) as error:
            # tree-sitter can raise on pathological input; the file still gets indexed.
            log.warning("%s: %s parse failed (%s); indexing in line windows", path, language, error)
            rows, symbols = _windows(index, max_chars), []
    elif language == "markdown":
        rows = chunk_markdown(index, max_chars)
    else:
        rows = _windows(index, max_chars)
    chunks = [
        Chunk(start, end, index.text(start, end), kind, symbol, header)
        for start, end, kind, symbol, header in rows
    ]
    return ChunkedFile(chunks=chunks, symbols=symbols)


def _chunk_notebook(path: str, text: str, max_chars: int) -> ChunkedFile:
    """A notebook's cells, chunked from its view (notebooks.py) at the file's own lines."""
    view = notebook_view(text)
    if view is None:
        # Not written a source line to a line: its JSON in windows, unless it holds outputs
        # (their long lines are why the reader did not skip it as generated).
        if any(len(line) > _LONG_LINE for line in text.split("\n")):
            return ChunkedFile(chunks=[], symbols=[])
        return chunk_source(path, text, "text", max_chars=max_chars)
    chunked = chunk_source(path, view.text, view.language, max_chars=max_chars)
    # Markdown cells read as comments, and comments beside imports make boilerplate; a
    # notebook's prose says what its code does, and is never boilerplate.
    chunks = [
        replace(c, kind="window") if c.kind in BOILERPLATE_CHUNK_KINDS and _holds_prose(c, view) else c
        for c in chunked.chunks
    ]
    symbols = [replace(s, name_col=s.name_col + view.offsets[s.name_line - 1]) for s in chunked.symbols]
    return ChunkedFile(chunks=chunks, symbols=symbols)


def _holds_prose(chunk: Chunk, view: NotebookView) -> bool:
    return any(n in view.prose for n in range(chunk.start_line, chunk.end_line + 1))
