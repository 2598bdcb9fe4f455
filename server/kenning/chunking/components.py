"""The scripts of a single-file component (Vue's ``.vue``, Svelte's ``.svelte``, Astro's
``.astro``) and of an HTML page, for the parser.

A component keeps its code in ``<script>`` blocks beside its markup and styles (and an Astro
component in its ``---`` fenced frontmatter too); so does a page, in its inline scripts. The
code is read
with the TypeScript or JavaScript grammar from a copy of the file in which every byte outside
those blocks is blanked (line breaks kept), so that offsets, lines and columns are the file's
own, chunk texts still come from the file as written, and the markup and styles between
definitions are windowed like any other lines no definition covers.
"""

from __future__ import annotations

import re

from kenning.chunking.macros import blank_range

# The languages (``kenning.languages`` names) whose files are components, or pages with
# scripts in them: they are read the same way.
COMPONENT_LANGUAGES = frozenset({"vue", "svelte", "astro", "html"})

# An opening script tag; its attributes are group 1. They stop at a `<` too, so a file of
# `<script` with no `>` is scanned once, not once from each. The closing tag is searched for
# on its own, not with a lazy `.*?` here, which would rescan the file from each unclosed tag.
_OPEN = re.compile(rb"<script\b([^<>]*)>", re.IGNORECASE)
_CLOSE = re.compile(rb"</script\s*>", re.IGNORECASE)
# Attributes of the opening tag, by name (not `data-lang=`).
_LANG = re.compile(rb"""(?:^|\s)lang\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
_TYPE = re.compile(rb"""(?:^|\s)type\s*=\s*["']?([\w/+.-]+)""", re.IGNORECASE)
# Astro's frontmatter: a `---` line first in the file, up to the next `---` line.
_FRONTMATTER_OPEN = re.compile(rb"\A\s*---[ \t]*\r?\n")
_FRONTMATTER_CLOSE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)

# A script's `lang` → the grammar that reads it; with no `lang`, the component's default. A
# script in another language (`lang="coffee"`) is not read, nor one whose `type` is not a
# script's (Astro's `application/ld+json`, Vue's `text/x-template`, an import map).
_SCRIPT_TYPES = frozenset(
    {b"module", b"text/javascript", b"application/javascript", b"text/typescript", b"application/typescript"}
)
_GRAMMAR_OF_LANG = {
    b"ts": "typescript",
    b"typescript": "typescript",
    b"tsx": "tsx",
    b"js": "javascript",
    b"javascript": "javascript",
    b"jsx": "javascript",
}


def script_spans(src: bytes, language: str) -> list[tuple[int, int, str]]:
    """``(start, end, grammar)`` of each script of the component ``src`` (of ``language``), in
    order: the bytes between ``<script …>`` and ``</script>`` (and Astro's frontmatter, between
    its ``---`` lines), and the grammar its ``lang`` asks for. Astro's scripts are TypeScript;
    Vue's and Svelte's JavaScript unless ``lang`` says otherwise. A script with nothing but
    white space in it (``<script src="…">``), one in another language or of data, and an
    opening tag with no closing one are left out."""
    default = "typescript" if language == "astro" else "javascript"
    spans: list[tuple[int, int, str]] = []
    at = 0
    if language == "astro" and (fence := _FRONTMATTER_OPEN.match(src)) is not None:
        closing = _FRONTMATTER_CLOSE.search(src, fence.end())
        if closing is not None:
            if src[fence.end() : closing.start()].strip():
                spans.append((fence.end(), closing.start(), default))
            at = closing.end()
    while (opening := _OPEN.search(src, at)) is not None:
        closing = _CLOSE.search(src, opening.end())
        if closing is None:
            break
        start, end = opening.end(), closing.start()
        grammar = _grammar(opening.group(1), default)
        if grammar is not None and src[start:end].strip():
            spans.append((start, end, grammar))
        at = closing.end()
    return spans


def _grammar(attributes: bytes, default: str) -> str | None:
    """The grammar that reads a script with these attributes, None for one that is no code."""
    kind = _TYPE.search(attributes)
    if kind is not None and kind.group(1).lower() not in _SCRIPT_TYPES:
        return None
    lang = _LANG.search(attributes)
    return default if lang is None else _GRAMMAR_OF_LANG.get(lang.group(1).lower())


def script_grammar(spans: list[tuple[int, int, str]]) -> str:
    """The one grammar that reads all of a component's scripts: TypeScript's if any script is
    TypeScript (it reads JavaScript too), TSX's for TSX, else JavaScript's."""
    grammars = {grammar for _, _, grammar in spans}
    for name in ("tsx", "typescript"):
        if name in grammars:
            return name
    return "javascript"


def script_lines(src: bytes, spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The 1-based first and last line of each span of ``src``: the lines of its opening and
    closing tags."""
    lines: list[tuple[int, int]] = []
    line, at = 1, 0
    for start, end, _ in spans:
        line += src.count(b"\n", at, start)
        first = line
        line += src.count(b"\n", start, end)
        lines.append((first, line))
        at = end
    return lines


def blank_outside(src: bytes, spans: list[tuple[int, int, str]]) -> bytes:
    """``src`` with every byte outside ``spans`` (in order) made a space, but line breaks."""
    out = bytearray(src)
    at = 0
    for start, end, _ in spans:
        blank_range(out, at, start)
        at = end
    blank_range(out, at, len(out))
    return bytes(out)
