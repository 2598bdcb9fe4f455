"""Objective-C that tree-sitter-objc misreads, rewritten in place before parsing.

tree-sitter reads Objective-C without running the preprocessor, and the two macros every
Cocoa and React Native file uses to *define* things read as garbage:

* ``typedef NS_ENUM(NSInteger, RCTMode) { … }`` (and ``NS_OPTIONS``, ``NS_CLOSED_ENUM``,
  ``NS_ERROR_ENUM``) is Apple's way to write an enum: it reads as a macro type and an error. It is
  rewritten to ``typedef enum RCTMode { … }``, the name where it stood.
* ``RCT_EXPORT_METHOD(show:(NSString *)message) { … }`` is how a React Native module writes a
  method JavaScript calls (and ``RCT_REMAP_METHOD(jsName, …)``,
  ``RCT_EXPORT_BLOCKING_SYNCHRONOUS_METHOD(…)``, ``RCT_EXPORT_SYNCHRONOUS_TYPED_METHOD(type, …)``):
  it reads as a function with errors in its name. It is rewritten to the method it expands to,
  ``-(id)show:(NSString *)message { … }`` (the parser needs a return type, the chunker reads
  none).

C++ in Objective-C++ (``.mm``) files is not Objective-C's; a ``using namespace facebook::react;``
line, which would make the rest of the file one error, is blanked, and so is the body of a
method or function that holds C++ (``const auto &props = static_cast<const ViewProps &>(…)``,
``std::``, ``nullptr``, lambdas: ``blank_cxx_bodies``), its braces kept: what the chunker needs of
a method is its signature and its extent, and the errors in such a body broke the rest of the
``@implementation`` (React Native's ``RCTViewComponentView.mm`` was one error node).

Every rewrite keeps the byte length of what it replaces (spaces fill the rest), so offsets, lines
and columns hold; chunk texts are cut from the original file, as for the C macros
(``kenning.chunking.macros``, which runs first).
"""

from __future__ import annotations

import re

from kenning.chunking.macros import blank_range, close_paren

_ENUM_RE = re.compile(
    rb"\btypedef([ \t]+)(NS_ENUM|NS_OPTIONS|NS_CLOSED_ENUM|NS_ERROR_ENUM)"
    rb"[ \t]*\([^(),\n]*,[ \t]*(\w+)[ \t]*\)"
)
# The macro and what comes before the method's selector: the JavaScript name of a remapped
# method, the return type of a typed synchronous one.
_METHOD_RE = re.compile(
    rb"^([ \t]*)(?:RCT_EXPORT_METHOD\(|RCT_EXPORT_BLOCKING_SYNCHRONOUS_METHOD\("
    rb"|RCT_REMAP_METHOD\([ \t]*\w*[ \t]*,|RCT_REMAP_BLOCKING_SYNCHRONOUS_METHOD\([ \t]*\w*[ \t]*,"
    rb"|RCT_EXPORT_SYNCHRONOUS_TYPED_METHOD\([^,()\n]*(?:\([^()\n]*\)[^,()\n]*)?,)",
    re.MULTILINE,
)
_USING_RE = re.compile(rb"^[ \t]*using[ \t]+namespace[ \t]+[\w:]+[ \t]*;", re.MULTILINE)
_METHOD_HEAD = b"-(id)"  # what the parser needs to read a method


def repair_objc(src: bytes) -> bytes:
    """``src`` with the macros above rewritten in place (same length)."""
    if b"NS_" not in src and b"RCT_" not in src and b"using" not in src:
        return src
    out = bytearray(src)
    for m in _ENUM_RE.finditer(src):
        start, end = m.start(2), m.end()
        name_start = m.start(3)
        # `enum` where the macro stood, the name where it was, the parenthesis gone
        out[start:end] = b" " * (end - start)
        out[start : start + 4] = b"enum"
        out[name_start : m.end(3)] = m.group(3)
    for m in _METHOD_RE.finditer(src):
        head_start, args = m.end(1), m.end()
        end = close_paren(src, src.index(b"(", head_start), limit=2048)  # the macro's `(`
        if end < 0 or args - head_start < len(_METHOD_HEAD):
            continue
        out[head_start:args] = _METHOD_HEAD + b" " * (args - head_start - len(_METHOD_HEAD))
        out[end - 1] = 0x20  # its `)`
    for m in _USING_RE.finditer(src):
        out[m.start() : m.end()] = b" " * (m.end() - m.start())
    return bytes(out)


# What only C++ writes: a scope (`facebook::react`), `auto`, `nullptr`, casts, templates,
# `constexpr`, lambdas (`[&]`, `[=]`, `[this]`).
_CXX = re.compile(rb"::|\bauto\b|\bnullptr\b|_cast<|\btemplate\s*<|\bconstexpr\b|\[[&=]|\[this\b")
# What may hold braces without being code: comments (an unterminated one runs to the end), string
# and character literals (to the line's end at most).
_COMMENT = rb"//[^\n]*|/\*.*?(?:\*/|\Z)"
_LITERAL = rb"\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?"
_LITERALS = re.compile(_COMMENT + b"|" + _LITERAL, re.S)
_TOKENS = re.compile(_COMMENT + b"|" + _LITERAL + rb"|[{};]", re.S)  # and braces, statement ends
_NOT_CODE = re.compile(_COMMENT + rb"|^[ \t]*#[^\n]*", re.S | re.M)  # and directives
_METHOD_START = re.compile(rb"^[ \t]*[-+][ \t]*\(", re.M)
_CLASS_START = re.compile(rb"^[ \t]*@(?:implementation|interface)\b", re.M)


def blank_cxx_bodies(src: bytes) -> bytes:
    """``src`` with the inside of each top-level method or function body (and instance variable
    block) that holds C++ made spaces (braces and line breaks kept, so offsets and lines hold)."""
    if not _CXX.search(src):
        return src
    out: bytearray | None = None
    depth = 0
    statement = 0  # where the current top-level statement began
    body = -1  # the offset of the `{` of the body being skipped, or -1
    for token in _TOKENS.finditer(src):
        c = src[token.start()]
        if token.end() - token.start() > 1 or c in (0x22, 0x27):
            continue  # a comment or a literal
        at = token.start()
        if c == 0x7B:  # {
            if depth == 0 and body < 0:
                head = _NOT_CODE.sub(b"", src[statement:at])
                # a method's body, a function's, or a class's instance variables
                if _METHOD_START.search(head) or head.rstrip().endswith(b")") or _CLASS_START.search(head):
                    body = at
            depth += 1
        elif c == 0x7D:  # }
            depth = max(0, depth - 1)
            if depth == 0:
                if body >= 0 and _CXX.search(_LITERALS.sub(b" ", src[body:at])):
                    out = out if out is not None else bytearray(src)
                    blank_range(out, body + 1, at)
                body = -1
                statement = at + 1
        elif depth == 0:  # ;
            statement = at + 1
    return bytes(out) if out is not None else src
