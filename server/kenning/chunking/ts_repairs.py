"""Three TypeScript forms tree-sitter-typescript cannot read, rewritten in place before the parse.

tree-sitter-typescript 0.23 (the newest on PyPI; each is open upstream as of 2026) misreads:

- **Variance annotations** (TypeScript 4.7): ``interface Cache<in out Key, out A = never>``,
  ``type Equivalence<in A> = …``. ``in`` and ``out`` there are errors.
- **A generic call signature on its own line** after another member with no ``;`` between:
  Effect declares every dual API as ``const map: {⏎  <A, B>(f: …): (self: …) => …⏎  <A,
  B>(self: …, f: …): …⏎} = dual(…)``, and the grammar reads the ``<`` as the previous member's
  type arguments.
- **An escaped backtick in a template literal type**: ``type MissingSelf<U> = `use \\`class
  Self extends ${U}<Self>\\``` never ends for the grammar, and Effect's ``Schema.ts`` (19,744
  lines) parsed as one error node: not one symbol.

Error recovery can then swallow what follows: in Effect 4, 187 of 625 ``.ts`` files parsed with
errors, and in ``Function.ts`` ``memoize`` and two dozen other functions after the first dual
were no symbols and their lines unnamed windows. Zod 4 and TanStack's cores write variance too.

``repair`` parses a rewritten copy, every offset, line and column kept, so the tree fits the
file as written, from which names, signatures and chunk texts are still read. A variance
modifier after ``<`` or ``,`` and before a parameter's name becomes spaces, and the
indentation's last space before a line's ``<T…`` becomes ``;``, and an escaped backtick becomes
two spaces (inside a string or a template, where it can only stand, that is still text). It does
so only where the parse has errors, and keeps each rewrite only if it leaves fewer error nodes:
neither shape is valid code elsewhere, and a match in a comment or a string only changes text
the parser skips.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from kenning.chunking.grammars import error_nodes
from kenning.chunking.macros import blank_range

_BLOCK_COMMENT = rb"/\*(?:[^*]|\*(?!/))*\*/"
# A block comment, or a line comment with its line break, and the blank space after it. Each
# way to match is the only one (a run of `/` is one line comment, not many): no backtracking.
_COMMENT = rb"(?:" + _BLOCK_COMMENT + rb"|//[^\n]*\n)\s*"
# `<in out K,` / `, out A = never` / `<in T extends X>`: group 1 is the modifier to blank.
_VARIANCE = re.compile(
    rb"[<,]\s*(?:" + _COMMENT + rb")*(?:const\s+)?((?:in\s+out|in|out)\s+)"
    rb"(?=[A-Za-z_$][\w$]*\s*(?:[,>=]|extends\b))"
)
# A line `  <A, B>(…` after a line of code that ends a member (a name, `)`, `]`, `>` but not
# `=>`, or `}`), blank lines and comments between; group 1 is the space that becomes `;`. A line
# comment is never where this starts, so each comment line is scanned for one line of code only;
# all of it is a lookahead, so a signature's own line can anchor the next one.
_GENERIC_SIGNATURE = re.compile(
    rb"(?m)^(?=(?![ \t]*//)[^\n]*(?:[\w$)\]}]|(?<!=)>)[ \t]*\n"
    rb"(?:[ \t]*(?:" + _BLOCK_COMMENT + rb"[ \t]*|//[^\n]*)?\n)*"
    rb"[ \t]*([ \t])<\s*(?:const\s+)?[A-Za-z_$][\w$]*\s*(?:[,>=]|extends\b))"
)

# A backtick escaped by a backslash that is not itself escaped (`\\` then a backtick closes
# the template); group 1 is the pair to blank.
_ESCAPED_BACKTICK = re.compile(rb"(?<!\\)(?:\\\\)*(\\`)")


def repair(parser: ts.Parser, src: bytes, tree: ts.Tree) -> ts.Tree:
    """``src``'s tree, from ``src`` with each rewrite applied (all its matches) where that
    leaves fewer errors. Its offsets are ``src``'s, and ``src`` is what names and signatures
    are read from: the rewrites are for the parser alone."""
    rewrites = ((_VARIANCE, blank_range), (_GENERIC_SIGNATURE, _semicolon), (_ESCAPED_BACKTICK, blank_range))
    errors: int | None = None  # the current tree's error nodes, counted once it has some
    for pattern, rewrite in rewrites:
        if not tree.root_node.has_error:
            break
        matches = list(pattern.finditer(src))
        if not matches:
            continue
        out = bytearray(src)
        for match in matches:
            rewrite(out, match.start(1), match.end(1))
        repaired = bytes(out)
        new_tree = parser.parse(repaired)
        if errors is None:
            errors = _errors(tree.root_node)
        new_errors = _errors(new_tree.root_node)
        if new_errors < errors:
            src, tree, errors = repaired, new_tree, new_errors
    return tree


def _semicolon(out: bytearray, start: int, end: int) -> None:
    out[start:end] = b";"


def _errors(root: ts.Node) -> int:
    """Error and missing nodes under ``root``."""
    return sum(1 for _ in error_nodes(root))
