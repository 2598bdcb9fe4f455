"""C#'s, Swift's and Objective-C's conditional compilation, for the parser.

``#if``, ``#elif`` (Swift's ``#elseif``), ``#else`` and ``#endif`` (and Objective-C's
``#ifdef``, ``#ifndef``) may stand anywhere, in the middle of a statement too (pythonnet's ``#if
FINALIZER_CHECK`` before ``lock (_queueLock)``, the block after its ``#endif``; Expo's ``#if
os(iOS)`` between a `switch`'s cases; React Native's ``#ifdef RCT_DYNAMIC_FRAMEWORKS`` around a
method of an ``@implementation``), and tree-sitter-c-sharp, tree-sitter-swift and
tree-sitter-objc lose the rest of such a method, or of its class, to one error. The parser
reads a copy with the directive lines blanked and, of each conditional, the first branch kept
and the others blanked (line breaks kept, offsets unchanged), as if every symbol the first
branches test were defined; chunk texts still come from the file as written. A definition
written once in each branch is then read once.
"""

from __future__ import annotations

import re

from kenning.chunking.macros import blank_range

_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elseif|else|endif)\b")


def blank_inactive_branches(src: bytes) -> bytes:
    """``src`` with its conditional directives, and every branch but each conditional's first,
    made spaces (line breaks kept)."""
    if b"#" not in src:
        return src
    out = bytearray(src)
    # Per open conditional: whether its current branch is a later one (blanked).
    later: list[bool] = []
    inactive = 0  # open conditionals whose current branch is a later one
    at = 0
    while at < len(src):
        end = src.find(b"\n", at)
        end = len(src) if end < 0 else end
        directive = _DIRECTIVE.match(src, at, end)
        if directive is not None:
            word = directive.group(1)
            if word in (b"if", b"ifdef", b"ifndef"):
                later.append(False)
            elif later and word in (b"elif", b"elseif", b"else") and not later[-1]:
                later[-1] = True
                inactive += 1
            elif later and word == b"endif":
                inactive -= later.pop()
            blank_range(out, at, end)
        elif inactive:
            blank_range(out, at, end)
        at = end + 1
    return bytes(out)
