"""C, C++ and Objective-C macros that tree-sitter cannot read, blanked before parsing.

tree-sitter parses C and C++ without running the preprocessor, so a macro that expands to an
attribute or to a whole declaration reads as garbage: glibc's ``void attribute_hidden
__foo (void)``, ``weak_alias (__foo, foo)`` with no semicolon, JUCE's ``class JUCE_API Button``
and ``JUCE_DECLARE_NON_COPYABLE (Button)`` inside a class body. The parser then makes ERROR
nodes that swallow the definitions around them (the function below a ``weak_alias`` line, the
methods after a ``JUCE_LEAK_DETECTOR``), and the chunker loses them.

``blank_macros`` replaces such invocations by spaces in the bytes handed to the parser, so every
offset, line and column stays the same; chunk texts are still cut from the original file. It
blanks:

* known attribute-like words (``__THROW``, ``attribute_hidden``, ``JUCE_API``, ``forcedinline``
  …), wherever they stand as a whole word;
* a macro invocation that is a whole line of its own (``NAME`` or ``NAME (…)``, optionally with
  ``;``, the parentheses balanced across lines): an ALL-CAPS name at any indentation, any name at
  column 0 (glibc's ``libc_hidden_def (x)``), but only where a statement may end before it (the
  previous code line ends with ``;``, ``{``, ``}`` or ``:``, or is a directive, a comment, an
  Objective-C ``@`` line or blank; an argument may hold an Objective-C ``@{ … }`` literal) and
  a definition does not continue after it (the next line does not open a body ``{`` or
  continue indented, as a GNU-style ``name (args)`` line of a definition does).

Measured on glibc 2.36 and JUCE 7's modules by ``bench/multilang.py`` (docs/performance.md).
"""

from __future__ import annotations

import bisect
import re

# Attribute-like macros that expand to nothing the parser needs (calling conventions,
# visibility, ``noexcept`` spellings). Only whole words are blanked.
_WORDS = (
    # glibc
    "__THROW",
    "__THROWNL",
    "__wur",
    "__attribute_noinline__",
    "__attribute_pure__",
    "__attribute_const__",
    "__attribute_malloc__",
    "__attribute_used__",
    "__attribute_warn_unused_result__",
    "__always_inline",
    "__extern_inline",
    "__extern_always_inline",
    "__fortify_function",
    "__libc_freeres_fn_section",
    "__cleanup_fct_attribute",
    "attribute_hidden",
    "attribute_relro",
    "attribute_compat_text_section",
    "attribute_tls_model_ie",
    "internal_function",
    "inhibit_loop_to_libcall",
    "DL_ARCH_FIXUP_ATTRIBUTE",
    "weak_function",
    # JUCE
    "JUCE_API",
    "JUCE_CALLTYPE",
    "JUCE_PUBLIC_IN_DLL_BUILD",
    "JUCE_NODISCARD",
    "JUCE_CONSTEXPR",
    "forcedinline",
)
_WORD_RE = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(w.encode()) for w in _WORDS) + rb")(?!\w)")

# A line that may be a macro invocation on its own: indentation, name, optional arguments.
_LINE_RE = re.compile(rb"^([ \t]*)([A-Za-z_]\w*)[ \t]*(\(|;|\r?$)", re.MULTILINE)
_NOT_LINE_BREAK = re.compile(rb"[^\r\n]")
_CAPS_RE = re.compile(rb"[A-Z][A-Z0-9_]{2,}\Z")
_KEYWORDS = frozenset(
    b"if while for switch return sizeof do else case default break continue goto typedef"
    b" struct union enum class public private protected namespace template using".split()
)


# No macro invocation's arguments nest deeper (glibc's and JUCE's nest 4 at most); a line of
# `X(` after `X(` would otherwise scan its 4 kB once per line (0.3 ms a line, a minute a MB).
_MAX_DEPTH = 32


def close_paren(src: bytes, start: int, limit: int = 4096) -> int:
    """The offset after the ``)`` matching the ``(`` at ``start``, or -1 (none within ``limit``
    bytes, or a brace or more than ``_MAX_DEPTH`` parentheses first: no macro's arguments)."""
    depth = 0
    literals = 0  # open Objective-C dictionary literals, `@{ … }`: an argument, not a body
    for i in range(start, min(len(src), start + limit)):
        c = src[i]
        if c == 0x28:  # (
            depth += 1
            if depth > _MAX_DEPTH:
                return -1  # a run of unclosed parentheses, no macro's arguments
        elif c == 0x29:  # )
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == 0x7B and i > start and src[i - 1] == 0x40:  # @{
            literals += 1
        elif c == 0x7D and literals:
            literals -= 1
        elif c in (0x7B, 0x7D):  # a brace: not a macro's argument list
            return -1
    return -1


def _prev_line_allows(src: bytes | bytearray, line_start: int) -> bool:
    """Whether a statement can end right before ``line_start`` (see the module docstring)."""
    if line_start == 0:
        return True  # the file's first line
    begin = src.rfind(b"\n", 0, line_start - 1) + 1
    end = line_start - 1 if src[line_start - 1] == 0x0A else line_start
    line = src[begin:end].strip()
    if not line:
        return True
    if line.endswith(b"\\"):
        return False  # inside a macro definition
    if line.startswith((b"#", b"//", b"/*", b"*", b"@")) or line.endswith(b"*/"):
        return True  # a directive, a comment, Objective-C's `@implementation X (Y)`, `@end`
    return line.endswith((b";", b"{", b"}", b":"))


def _opens_body(lines: list[bytes]) -> list[bool]:
    """Per line: whether the lines from it down (up to a blank line or a statement's end) open a
    body, as they do below a GNU-style return type (``FLOAT`` / ``ElfW(Addr)`` above ``name
    (args)`` and ``{``). One pass from the bottom."""
    opens = [False] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i].strip()
        if not line:
            opens[i] = False
        elif line.startswith(b"{"):
            opens[i] = True
        elif line.endswith((b";", b"}")) or line.startswith((b"#", b"//", b"/*")):
            opens[i] = False
        elif line.endswith(b"{"):
            opens[i] = True
        else:
            opens[i] = opens[i + 1]
    return opens


def blank_range(buffer: bytearray, start: int, end: int) -> None:
    """Bytes ``start..end`` of ``buffer`` replaced by spaces, line breaks kept: every offset,
    line and column of the rest stays where it was."""
    buffer[start:end] = _NOT_LINE_BREAK.sub(b" ", bytes(buffer[start:end]))


def blank_macros(src: bytes) -> bytes:
    """``src`` with the macro invocations tree-sitter misreads replaced by spaces (same length,
    newlines kept)."""
    if not src:
        return src
    out = bytearray(src)
    starts = [0, *(m.end() for m in re.finditer(rb"\n", src))]  # line start offsets
    opens = _opens_body(src.split(b"\n"))

    for match in _WORD_RE.finditer(src):
        blank_range(out, match.start(), match.end())
    for match in _LINE_RE.finditer(src):
        indent, name = match.group(1), match.group(2)
        if name in _KEYWORDS:
            continue
        caps = _CAPS_RE.match(name) is not None
        if not caps and indent:
            continue  # a lower-case name counts only at column 0 (glibc's top-level macros)
        end = match.end(2)
        if match.group(3) == b"(":
            end = close_paren(src, match.start(3))
            if end < 0:
                continue
        elif not caps:
            continue  # a bare lower-case word on its line: a type or return type, not a macro
        after = end
        while after < len(src) and src[after] in (0x20, 0x09):
            after += 1
        if after < len(src) and src[after] == 0x3B:  # ;
            after += 1
        # The previous line as blanked so far: a run of invocations goes line by line.
        row = bisect.bisect_right(starts, after) - 1  # the invocation's last line
        rest = starts[row + 1] - 1 if row + 1 < len(starts) else len(src)
        if src[after:rest].strip() or opens[row + 1]:
            continue  # more on its line, or a definition continues below it
        if not _prev_line_allows(out, match.start()):
            continue
        blank_range(out, match.start(2), after)
    return bytes(out)
