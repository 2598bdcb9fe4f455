"""The types a Lua file defines in LuaCATS comments, as lua-language-server reads them.

Neovim's runtime and the plugins written for it declare their types in ``---`` comments:

    --- Optional keyword arguments:
    --- @class vim.treesitter.query.lint.Opts
    --- @inlinedoc
    --- @field langs? string|string[]
    --- @field clear boolean

``@class`` names a class (its ``@field`` lines below it), ``@alias`` a type (its ``---|``
variants below it), ``@enum`` the table below it. Each annotation covers its tag's line, the
description lines right above it and the lines after it, up to the next tag's description or
the end of its run of ``---`` lines; the first tag of a run also takes the run's first lines
(``---@nodoc`` above ``---@class``). Only the comments are read: which table a class names
(``local Client = {}`` below it) is lua-language-server's business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# `---@class (exact) vim.lsp.Client : Base`, `--- @alias lsp.Handler fun(…)`, `---@enum Kind`:
# the name is a dotted path (generic parameters `<T>` and the parent after `:` are not part of it).
_TAG = re.compile(r"---\s*@(class|alias|enum)\s+(?:\([^)]*\)\s*)?([A-Za-z_][\w.]*)")
# A line of the run that is a tag of its own (`---@field`, `---@nodoc`) or an alias's variant
# (`---| 'changedtree'`), not a description of the tag below it.
_TAGGED = re.compile(r"---\s*[@|]")
KINDS = {"class": "class", "alias": "type", "enum": "enum"}


@dataclass(frozen=True, slots=True)
class Annotation:
    """One type a run of ``---`` lines defines."""

    kind: str  # symbol kind: class, type (an alias) or enum
    name: str  # as written: `vim.treesitter.LanguageTree`
    tag_line: int  # 1-based line of the `@class`/`@alias`/`@enum` tag
    name_col: int  # 0-based column of the name on that line, in characters
    start: int  # 1-based first and last line the annotation covers
    end: int


def declared_types(lines: Sequence[str], runs: Sequence[tuple[int, int]]) -> list[Annotation]:
    """The annotations in each run of ``---`` comment lines ``(first, last)`` (1-based, inclusive)
    of ``lines``, in order."""
    found: list[Annotation] = []
    for first, last in runs:
        tags: list[tuple[int, re.Match[str], int]] = []  # (line, match, column of the text)
        for number in range(first, last + 1):
            line = lines[number - 1]
            text = line.lstrip()
            match = _TAG.match(text)
            if match is not None:
                tags.append((number, match, len(line) - len(text)))
        starts: list[int] = []
        for i, (number, _, _) in enumerate(tags):
            if i == 0:
                starts.append(first)
                continue
            # The description lines right above the tag are its own (`---Optional arguments:`).
            start = number
            while start - 1 > tags[i - 1][0] and not _TAGGED.match(lines[start - 2].lstrip()):
                start -= 1
            starts.append(start)
        for i, (number, match, indent) in enumerate(tags):
            end = starts[i + 1] - 1 if i + 1 < len(tags) else last
            found.append(
                Annotation(
                    KINDS[match.group(1)], match.group(2), number, indent + match.start(2), starts[i], end
                )
            )
    return found
