"""Which language a workspace file is written in, decided from its path (and, for a ``.h``
header, whether it declares an Objective-C class: ``language_of``).

This module owns the table of language names kenning knows (the names users type in a
``languages`` search filter and that ``kenning languages`` lists), the file extensions and file
names that map to them, and which chunker handles each one: tree-sitter for the languages with a
grammar wheel, the Markdown block splitter, or plain line windows for everything else. Unknown
files are ``"text"``: they are still indexed, just without structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ParserKind = Literal["tree-sitter", "markdown", "text"]


@dataclass(frozen=True, slots=True)
class LanguageInfo:
    """One language: its name, how files are recognised, and which chunker reads them."""

    name: str
    extensions: tuple[str, ...]  # with the leading dot, matched case-sensitively first
    filenames: tuple[str, ...]  # exact base names ("Makefile"), checked before extensions
    parser: ParserKind


def _lang(
    name: str,
    extensions: tuple[str, ...] = (),
    filenames: tuple[str, ...] = (),
    parser: ParserKind = "text",
) -> LanguageInfo:
    return LanguageInfo(name, extensions, filenames, parser)


_TABLE: tuple[LanguageInfo, ...] = (
    # Structured: these get definition-level chunks and symbols.
    _lang("python", (".py", ".pyi", ".pyw"), ("SConstruct", "SConscript"), "tree-sitter"),
    _lang("javascript", (".js", ".mjs", ".cjs", ".jsx"), (), "tree-sitter"),
    _lang("typescript", (".ts", ".mts", ".cts"), (), "tree-sitter"),
    _lang("tsx", (".tsx",), (), "tree-sitter"),
    _lang("go", (".go",), (), "tree-sitter"),
    _lang("rust", (".rs",), (), "tree-sitter"),
    _lang("java", (".java",), (), "tree-sitter"),
    _lang("csharp", (".cs", ".csx"), (), "tree-sitter"),
    _lang("php", (".php", ".phtml"), (), "tree-sitter"),
    _lang("ruby", (".rb", ".rake", ".gemspec"), ("Gemfile", "Rakefile", "Guardfile"), "tree-sitter"),
    _lang("kotlin", (".kt", ".kts"), (), "tree-sitter"),
    _lang("swift", (".swift",), (), "tree-sitter"),
    _lang("lua", (".lua",), (), "tree-sitter"),
    # ".mm" is Objective-C++: read as Objective-C, or as C++ where that leaves less in error nodes.
    _lang("objective-c", (".m", ".mm"), (), "tree-sitter"),
    # Bourne-family scripts, read with tree-sitter-bash (zsh and ksh mostly parse; what does not is
    # a local error).
    _lang(
        "shell",
        (".sh", ".bash", ".zsh", ".ksh"),
        (".bashrc", ".bash_profile", ".zshrc", ".profile"),
        "tree-sitter",
    ),
    # ".h" is C by convention (as GitHub linguist defaults it); the chunker retries a C header
    # that does not parse cleanly with the C++ grammar.
    _lang("c", (".c", ".h"), (), "tree-sitter"),
    # ".C"/".H" (upper case) are C++ on case-sensitive systems; the exact-case lookup finds them
    # before the lower-cased fallback would turn them into C.
    _lang(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl", ".C", ".H"),
        (),
        "tree-sitter",
    ),
    # Single-file components: their `<script>` blocks (and Astro's frontmatter) are parsed,
    # TypeScript or JavaScript, their markup and styles windowed where they stand
    # (chunking/components.py).
    _lang("vue", (".vue",), (), "tree-sitter"),
    _lang("svelte", (".svelte",), (), "tree-sitter"),
    _lang("astro", (".astro",), (), "tree-sitter"),
    # Pages: their inline `<script>`s are parsed as JavaScript, the rest windowed
    # (chunking/components.py). Templates too: `{{ … }}` in a script is a local parse error.
    _lang("html", (".html", ".htm", ".xhtml", ".jinja", ".jinja2", ".j2"), (), "tree-sitter"),
    # Jupyter notebooks: their cells are read where they stand in the JSON, code cells with
    # their kernel's grammar (chunking/notebooks.py).
    _lang("jupyter", (".ipynb",), (), "tree-sitter"),
    _lang("markdown", (".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"), (), "markdown"),
    # Text-only: indexed in line windows, but filterable by name.
    _lang("fish", (".fish",)),
    _lang("powershell", (".ps1", ".psm1", ".psd1")),
    _lang("batch", (".bat", ".cmd")),
    _lang("toml", (".toml",), ("Pipfile", "poetry.lock", "Cargo.lock")),
    _lang("yaml", (".yaml", ".yml")),
    _lang("json", (".json", ".jsonc", ".json5", ".jsonl", ".ndjson")),
    _lang("xml", (".xml", ".xsd", ".xsl", ".xslt", ".svg", ".plist", ".csproj")),
    _lang("css", (".css",)),
    _lang("scss", (".scss", ".sass")),
    _lang("less", (".less",)),
    _lang("sql", (".sql",)),
    _lang("graphql", (".graphql", ".gql")),
    _lang("protobuf", (".proto",)),
    _lang("rst", (".rst", ".rest")),
    _lang("asciidoc", (".adoc", ".asciidoc")),
    _lang("latex", (".tex", ".sty", ".cls", ".bib")),
    _lang("ini", (".ini", ".cfg", ".conf", ".properties"), (".editorconfig", "setup.cfg")),
    _lang("dockerfile", (".dockerfile",), ("Dockerfile", "Containerfile")),
    _lang("makefile", (".mk", ".mak"), ("Makefile", "GNUmakefile", "makefile")),
    _lang("cmake", (".cmake",), ("CMakeLists.txt",)),
    _lang("terraform", (".tf", ".tfvars", ".hcl")),
    _lang("scala", (".scala", ".sc")),
    _lang("fsharp", (".fs", ".fsi", ".fsx")),
    _lang("perl", (".pl", ".pm", ".t")),
    _lang("r", (".r", ".R", ".Rmd")),
    _lang("julia", (".jl",)),
    _lang("dart", (".dart",)),
    _lang("elixir", (".ex", ".exs")),
    _lang("erlang", (".erl", ".hrl")),
    _lang("haskell", (".hs", ".lhs")),
    _lang("ocaml", (".ml", ".mli")),
    _lang("clojure", (".clj", ".cljs", ".cljc", ".edn")),
    _lang("zig", (".zig",)),
    _lang("nim", (".nim",)),
    _lang("text", (".txt", ".text")),
)

LANGUAGES: dict[str, LanguageInfo] = {info.name: info for info in _TABLE}

_BY_FILENAME: dict[str, str] = {}
_BY_EXTENSION: dict[str, str] = {}
_BY_EXTENSION_LOWER: dict[str, str] = {}
for _info in _TABLE:
    for _filename in _info.filenames:
        _BY_FILENAME[_filename] = _info.name
    for _ext in _info.extensions:
        _BY_EXTENSION[_ext] = _info.name
        # setdefault: the first table entry wins a lower-case clash (".c" stays C, not ".C" C++).
        _BY_EXTENSION_LOWER.setdefault(_ext.lower(), _info.name)
del _info, _filename, _ext


# Languages whose files keep what nobody searches on very long lines, which their chunker leaves
# out: such a file is not skipped as generated (a notebook's outputs: base64 images, tables).
LONG_LINED_LANGUAGES = frozenset({"jupyter"})


def language_for_path(rel_path: str) -> str:
    """The language name of a file, from its (POSIX, relative) path; ``"text"`` when unknown.

    An exact file name wins over the extension (``CMakeLists.txt`` is cmake, not text). The
    extension is the part after the last dot of the base name, matched with its case first and
    then lower-cased, so ``README.MD`` is markdown while ``x.C`` stays C++.
    """
    base = rel_path.rsplit("/", 1)[-1]
    by_name = _BY_FILENAME.get(base)
    if by_name is not None:
        return by_name
    dot = base.rfind(".")
    if dot <= 0:  # no extension, or a dot file like ".gitignore" that is not a known file name
        return "text"
    ext = base[dot:]
    return _BY_EXTENSION.get(ext) or _BY_EXTENSION_LOWER.get(ext.lower(), "text")


# An Objective-C header: a class, category or protocol declared at a line's start (not the one
# indented in a C++ header's comment, as JUCE shows one).
_OBJC_HEADER = re.compile(r"^@(?:interface|protocol)\b", re.MULTILINE)


def language_of(rel_path: str, text: str) -> str:
    """The language of a file read: its path's (``language_for_path``), but a ``.h`` header that
    declares an ``@interface`` or ``@protocol`` is Objective-C (``.h`` alone says C, as GitHub's
    linguist defaults it, and C++ headers stay C)."""
    language = language_for_path(rel_path)
    if language == "c" and rel_path.endswith(".h") and _OBJC_HEADER.search(text):
        return "objective-c"
    return language


def known_languages() -> list[LanguageInfo]:
    """Every language kenning knows, sorted by name."""
    return sorted(LANGUAGES.values(), key=lambda info: info.name)


def is_known_language(name: str) -> bool:
    """Whether ``name`` is a language name kenning knows (used to reject unknown filters)."""
    return name in LANGUAGES
