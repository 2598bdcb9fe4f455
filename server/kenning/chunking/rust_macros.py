"""Rust items written inside a macro invocation, opened up before chunking.

tokio writes much of its API inside ``cfg_rt! { … }`` and ``cfg_io_util! { … }``, hyper its C
API inside ``ffi_fn! { … }``, and crates pick items per platform with ``cfg_if! { if
#[cfg(unix)] { … } else { … } }``. tree-sitter reads a macro's argument as a token tree, not
as items, so the functions in it were no symbols and their lines unnamed windows: tokio 1.24
lists 4,169 functions and methods with them opened and 3,737 without (``tokio::spawn`` among
the missing), and its windows with no name fall from 911 to 396.

``open_item_macros`` blanks (spaces; newlines kept) an invocation in item position (at the top
level or in an ``impl``, ``trait`` or ``mod`` body) around each braced body of it that parses as
Rust items on its own: the whole argument (``cfg_rt! { pub fn spawn … }``) or, when that does
not parse, each braced group directly in it (``cfg_if!``'s branches). The parser then sees those
items in place, with every offset, line and column unchanged; chunk texts are still cut from the
original file. A body that is not items (``impl_from! { u8, u16 }``, ``lazy_static! { static ref
… }``) is left as written, and so is every macro in a function body (``select! { … }``).
"""

from __future__ import annotations

import tree_sitter as ts

from kenning.chunking.macros import blank_range

# Where an invocation stands in place of items: the file, or an impl / trait / mod body.
_ITEM_PARENTS = frozenset({"source_file", "declaration_list"})
# A body that parses as items has at least one of these, not only expressions or attributes.
_ITEMS = frozenset(
    {
        "function_item",
        "function_signature_item",
        "impl_item",
        "trait_item",
        "struct_item",
        "enum_item",
        "union_item",
        "type_item",
        "const_item",
        "static_item",
        "mod_item",
        "use_declaration",
        "foreign_mod_item",
        "macro_definition",
    }
)
# Invocations inside an opened body are opened by another round; real code nests two deep.
_ROUNDS = 4


def _is_items(parser: ts.Parser, body: bytes) -> bool:
    root = parser.parse(body).root_node
    if root.has_error:
        return False
    kinds = {child.type for child in root.named_children}
    return bool(kinds & _ITEMS) and kinds <= _ITEMS | {
        "attribute_item",
        "inner_attribute_item",
        "line_comment",
        "block_comment",
        "macro_invocation",
        "empty_statement",
    }


def _item_bodies(parser: ts.Parser, src: bytes, macro: ts.Node) -> list[tuple[int, int]]:
    """The byte ranges of ``macro``'s braced bodies that are items: its argument's inside, or
    the insides of the braced groups directly in it."""
    argument = next((child for child in macro.children if child.type == "token_tree"), None)
    if argument is None or src[argument.start_byte : argument.start_byte + 1] != b"{":
        return []
    inside = (argument.start_byte + 1, argument.end_byte - 1)
    if _is_items(parser, src[inside[0] : inside[1]]):
        return [inside]
    return [
        (group.start_byte + 1, group.end_byte - 1)
        for group in argument.children
        if group.type == "token_tree"
        and src[group.start_byte : group.start_byte + 1] == b"{"
        and _is_items(parser, src[group.start_byte + 1 : group.end_byte - 1])
    ]


def open_item_macros(parser: ts.Parser, src: bytes, tree: ts.Tree) -> tuple[bytes, ts.Tree]:
    """``src`` with the item macros around item bodies blanked, and its parse; the same
    ``src`` and ``tree`` when there are none."""
    for _ in range(_ROUNDS):
        buffer: bytearray | None = None
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            for child in node.children:
                if child.type in _ITEM_PARENTS:
                    stack.append(child)
                elif child.type == "macro_invocation" and node.type in _ITEM_PARENTS:
                    bodies = _item_bodies(parser, src, child)
                    if not bodies:
                        continue
                    if buffer is None:
                        buffer = bytearray(src)
                    position = child.start_byte
                    for start, end in bodies:
                        blank_range(buffer, position, start)
                        position = end
                    blank_range(buffer, position, child.end_byte)
                elif child.type in ("impl_item", "trait_item", "mod_item"):
                    stack.append(child)
        if buffer is None:
            break
        src = bytes(buffer)
        tree = parser.parse(src)
    return src, tree
