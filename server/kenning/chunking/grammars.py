"""Per-language tree-sitter tables: what counts as a definition, and the cached grammars.

Each language is data, not code: a tree-sitter query whose capture names are rule keys
(``@class``, ``@function`` …), a ``Rule`` per key (symbol kind, how to find the name, whether it
is a chunk of its own, whether its members are chunked separately when it is too big), the
wrapper nodes a definition's span grows into (``export``, decorators, ``template<…>``), the
comment/attribute nodes glued to the definition below them, and the statement-list node types
whose children are good places to cut an oversized function. The few name shapes that a field
name cannot express (C declarators, Go receivers, Rust ``impl`` targets) are small functions.

Grammars come from the per-language PyPI wheels (``tree_sitter_python`` …), never from
tree-sitter-language-pack (it downloads grammars at run time). ``Language`` and ``Query`` objects
are built once and shared between threads; a ``Parser`` is not thread-safe, so each thread gets
its own (``parser_for``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import tree_sitter as ts

# A name found for a definition: the identifier node, plus container parts that the definition
# spells out itself (Go receiver type, C++ ``Outer::Inner::`` qualifier, Rust ``impl`` target).
Name = tuple[ts.Node, tuple[str, ...]]
NameFn = Callable[[ts.Node, bytes], Sequence[Name]]


def node_text(node: ts.Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def error_nodes(root: ts.Node, *, within_errors: bool = True) -> Iterator[ts.Node]:
    """The error and missing nodes under ``root``, descending only where there are some; with
    ``within_errors`` false, not into an error node (only the outermost ones)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            yield node
            if not within_errors:
                continue
        stack.extend(child for child in node.children if child.has_error or child.is_missing)


def names_in(field_name: str) -> NameFn:
    """The definition's ``field_name`` children (several for ``var a, b int``)."""

    def names(node: ts.Node, src: bytes) -> Sequence[Name]:
        return [(child, ()) for child in node.children_by_field_name(field_name) if child.is_named]

    return names


def names_in_children(field_name: str, inner: str) -> NameFn:
    """``inner`` of each ``field_name`` child: Java ``int x, y;`` → the declarators' names."""

    def names(node: ts.Node, src: bytes) -> Sequence[Name]:
        found: list[Name] = []
        for child in node.children_by_field_name(field_name):
            name = child.child_by_field_name(inner)
            if name is not None:
                found.append((name, ()))
        return found

    return names


_BY_NAME = names_in("name")


def php_element_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The names a PHP property or constant declaration declares (``private $a = 1, $b;``,
    ``const A = 1, B = 2;``): each element's, as written (a property's with its ``$``)."""
    found: list[Name] = []
    for element in node.named_children:
        if element.type == "property_element":
            name = element.child_by_field_name("name")
        elif element.type == "const_element":
            name = next((c for c in element.named_children if c.type == "name"), None)
        else:
            continue
        if name is not None:
            found.append((name, ()))
    return found


def csharp_declarator_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The names a C# field or event field declares (``int a = 1, b;`` → a, b): its
    ``variable_declaration``'s declarators, which no field name leads to."""
    found: list[Name] = []
    for declaration in node.named_children:
        if declaration.type == "variable_declaration":
            for declarator in declaration.named_children:
                name = declarator.child_by_field_name("name")
                if declarator.type == "variable_declarator" and name is not None:
                    found.append((name, ()))
    return found


def _itself(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The node is its own name: a bare TypeScript enum member (``enum E { A, B }``)."""
    return [(node, ())]


# C and C++ bury the name inside nested declarators: ``static int *(*f)(void)``.
_C_NAME_TYPES = frozenset(
    {"identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "operator_cast"}
)


# Name nodes that begin with a sigil that is no part of the name: Ruby's `attr_reader :email`
# names `email`. The characters to skip, by node type.
SIGILS = {"simple_symbol": 1}


def is_selector(node: ts.Node) -> bool:
    """An Objective-C method, which its selector names (``objc_method_name``)."""
    if node.type not in ("method_declaration", "method_definition"):
        return False
    first = node.child(0)
    return first is not None and first.type in ("-", "+")


def selector(node: ts.Node, src: bytes) -> str:
    """An Objective-C method's selector: ``- (id)initWithName:(NSString *)name count:(int)n`` →
    ``initWithName:count:``, ``- (void)reset`` → ``reset``, as Xcode and clangd name it."""
    parts: list[str] = []
    children = node.children
    for i, child in enumerate(children):
        if child.type == "identifier":
            # A keyword, or (after the parameters) an attribute macro: `NS_DESIGNATED_INITIALIZER`
            keyword = not parts or (i + 1 < len(children) and children[i + 1].type == "method_parameter")
            if keyword:
                parts.append(node_text(child, src))
        elif child.type == "method_parameter" and parts and not parts[-1].endswith(":"):
            parts[-1] += ":"
        elif child.type == "method_parameter":
            parts.append(":")  # an unnamed part, `- (void)a:(int)x :(int)y`
    return "".join(parts)


# C# members whose name is several tokens, as Roslyn lists them: `operator ==`, `implicit
# operator int`, the finalizer `~Cache` and the indexer `this[]`. The definition node stands
# for its name (``csharp_member_name``); the name runs from its first token to the parameters.
_CSHARP_NAME_STARTS = {
    "operator_declaration": ("operator",),
    "conversion_operator_declaration": ("implicit", "explicit", "operator"),
    "destructor_declaration": ("~",),
    "indexer_declaration": ("this",),
}


def csharp_member_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """An operator, conversion, finalizer or indexer: the node itself stands for its name."""
    return [(node, ())] if _csharp_name_start(node) is not None else []


def _csharp_name_start(node: ts.Node) -> ts.Node | None:
    starts = _CSHARP_NAME_STARTS.get(node.type, ())
    return next((child for child in node.children if child.type in starts), None)


def _csharp_member_text(node: ts.Node, src: bytes) -> str:
    start = _csharp_name_start(node)
    parameters = node.child_by_field_name("parameters")
    if start is None or parameters is None:
        return ""
    if node.type == "indexer_declaration":
        return "this[]"
    return " ".join(src[start.start_byte : parameters.start_byte].decode("utf-8", "replace").split())


def name_anchor(node: ts.Node) -> ts.Node:
    """Where a name starts: a selector at its first part (past the ``-`` and return type); a C#
    operator at ``operator`` (or ``implicit``, ``~``, ``this``)."""
    if is_selector(node):
        return next((child for child in node.children if child.type == "identifier"), node)
    if node.type in _CSHARP_NAME_STARTS:
        return _csharp_name_start(node) or node
    return node


def name_text(node: ts.Node, src: bytes) -> str:
    """A definition's name as written, less a sigil (``SIGILS``); an Objective-C method's
    selector; a C# operator's as Roslyn lists it. A C++ conversion operator (``operator_cast``)
    has no name node: its name is the keyword and the target type, up to the parameters
    (``operator const char*() const`` → ``operator const char*``)."""
    if node.type in SIGILS:
        return node_text(node, src)[SIGILS[node.type] :]
    if is_selector(node):
        return selector(node, src)
    if node.type in _CSHARP_NAME_STARTS:
        return _csharp_member_text(node, src)
    if node.type != "operator_cast":
        return node_text(node, src)
    end = node.end_byte
    declarator = node.child_by_field_name("declarator")
    for _ in range(16):  # the parameters sit under any pointer / reference declarators
        if declarator is None:
            break
        parameters = declarator.child_by_field_name("parameters")
        if parameters is not None:
            end = parameters.start_byte
            break
        inner = declarator.child_by_field_name("declarator")
        declarator = (
            inner
            if inner is not None
            else next((c for c in declarator.named_children if c.type.endswith("declarator")), None)
        )
    written = src[node.start_byte : end].decode("utf-8", "replace").rstrip()
    return " ".join(written.split()) if "\n" in written else written  # one line: as written


def _c_scope_text(scope: ts.Node, src: bytes) -> str:
    if scope.type == "template_type":  # Foo<T>::bar → Foo
        name = scope.child_by_field_name("name")
        if name is not None:
            scope = name
    return node_text(scope, src)


def c_declarator_name(node: ts.Node | None, src: bytes, *, variables_only: bool = False) -> Name | None:
    """The identifier a C/C++ declarator declares, with any ``A::B::`` qualifier split off;
    ``variables_only``: None for a function's declarator (``char *dup (const char*)``)."""
    scope: list[str] = []
    for _ in range(64):  # declarators nest a handful deep; the bound only guards odd trees
        if node is None:
            return None
        kind = node.type
        if kind in _C_NAME_TYPES:
            return node, tuple(scope)
        if variables_only and kind == "function_declarator":
            return None
        if kind == "qualified_identifier":
            part = node.child_by_field_name("scope")
            if part is not None:
                scope.append(_c_scope_text(part, src))
            node = node.child_by_field_name("name")
        elif kind in ("template_function", "template_type"):  # f<int>, X<T> (specialisations)
            node = node.child_by_field_name("name")
        elif kind == "parenthesized_declarator":
            node = node.named_children[0] if node.named_child_count else None
        elif kind == "reference_declarator":  # `String& append (…)`: no `declarator` field
            node = node.named_children[-1] if node.named_child_count else None
        else:
            node = node.child_by_field_name("declarator")
    return None


def c_type_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``struct X``, ``struct X<T*>`` (a specialisation), ``class ns::X``."""
    found = c_declarator_name(node.child_by_field_name("name"), src)
    return [found] if found is not None else []


def c_typedef_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The name a ``typedef`` gives the unnamed struct, union or enum it wraps."""
    parent = node.parent
    return (
        c_declarator_names(parent, src)[:1] if parent is not None and parent.type == "type_definition" else []
    )


def c_function_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    found = c_declarator_name(node.child_by_field_name("declarator"), src)
    return [found] if found is not None else []


def c_declarator_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    found: list[Name] = []
    for child in node.children_by_field_name("declarator"):
        name = c_declarator_name(child, src)
        if name is not None:
            found.append(name)
    return found


def c_variable_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The variables a file-scope declaration declares (``int count = 0, *last;``); a prototype
    (``int add (int, int);``, ``char *dup (const char*);``) declares none."""
    found = (
        c_declarator_name(child, src, variables_only=True)
        for child in node.children_by_field_name("declarator")
    )
    return [name for name in found if name is not None]


def python_assigned_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``A = B = 1`` assigns both names (the right side of the first is the second)."""
    found: list[Name] = []
    current: ts.Node | None = node
    while current is not None and current.type == "assignment":
        left = current.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            found.append((left, ()))
        current = current.child_by_field_name("right")
    return found


def python_type_alias_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``type Point = tuple[float, float]`` and ``type Pair[T] = tuple[T, T]`` name ``Point``
    and ``Pair``."""
    left = node.child_by_field_name("left")
    while left is not None and left.type != "identifier":
        left = left.named_children[0] if left.named_child_count else None
    return [(left, ())] if left is not None else []


_PYTHON_NAMED_PARAMETERS = frozenset({"typed_parameter", "default_parameter", "typed_default_parameter"})


def python_receiver(method: ts.Node, span: ts.Node, src: bytes) -> str | None:
    """The name a method's first parameter gives its receiver (``self``, ``cls``); None for a
    ``@staticmethod`` (``span`` is the method with its decorators) or a method taking none."""
    if span.type == "decorated_definition":
        decorators = (node_text(d, src).lstrip("@ ") for d in span.children if d.type == "decorator")
        if any(d.rsplit(".", 1)[-1] == "staticmethod" for d in decorators):
            return None
    parameters = method.child_by_field_name("parameters")
    if parameters is None or not parameters.named_child_count:
        return None
    first: ts.Node | None = parameters.named_children[0]
    if first is not None and first.type in _PYTHON_NAMED_PARAMETERS:  # `self: Self`, `self=None`
        first = first.child_by_field_name("name") or next(iter(first.named_children), None)
    # Not `*args`, `*` or `/`: a receiver is a plain first parameter.
    return node_text(first, src) if first is not None and first.type == "identifier" else None


def python_attribute_targets(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The attributes an assignment sets (``self.timeout = t``, ``self.a, self.b = pair``), each
    qualified by the name of the object it is set on; the chunker keeps those set on the
    receiver of the method the assignment is directly in (``Rule.receiver``)."""
    assignment = node.named_children[0] if node.named_child_count else None
    left = assignment.child_by_field_name("left") if assignment is not None else None
    if left is None:
        return []
    targets = left.named_children if left.type in ("pattern_list", "tuple_pattern") else [left]
    return [
        (attr, (node_text(obj, src),))
        for target in targets
        if target.type == "attribute"
        and (obj := target.child_by_field_name("object")) is not None
        and obj.type == "identifier"
        and (attr := target.child_by_field_name("attribute")) is not None
    ]


def _base_type_name(node: ts.Node | None, src: bytes) -> str | None:
    """``*Foo`` / ``Foo[T]`` / ``Vec<T>`` / ``a::Foo`` / ``&'a Foo`` → ``Foo``."""
    for _ in range(16):
        if node is None:
            return None
        kind = node.type
        if kind in ("type_identifier", "identifier", "primitive_type"):
            return node_text(node, src)
        if kind in ("pointer_type", "reference_type", "parenthesized_type"):
            node = node.child_by_field_name("type") or (
                node.named_children[-1] if node.named_child_count else None
            )
        elif kind in ("generic_type", "qualified_type"):
            node = node.child_by_field_name("type") or node.child_by_field_name("name")
        elif kind in ("scoped_type_identifier", "scoped_identifier"):
            node = node.child_by_field_name("name")
        else:
            return node_text(node, src)
    return None


def go_method_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    name = node.child_by_field_name("name")
    if name is None:
        return []
    receiver_type: str | None = None
    receiver = node.child_by_field_name("receiver")
    if receiver is not None:
        for param in receiver.named_children:
            if param.type == "parameter_declaration":
                receiver_type = _base_type_name(param.child_by_field_name("type"), src)
                break
    return [(name, (receiver_type,) if receiver_type else ())]


def go_field_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """A struct field's names; an embedded field (``*os.File``, ``sync.Mutex``, ``List[T]``) is
    named by its type, as Go itself names it (``f.File``) and gopls lists it."""
    names = node.children_by_field_name("name")
    if names:
        return [(name, ()) for name in names]
    embedded = node.child_by_field_name("type")
    while embedded is not None and embedded.type in ("qualified_type", "generic_type"):
        embedded = embedded.child_by_field_name("name" if embedded.type == "qualified_type" else "type")
    return [(embedded, ())] if embedded is not None and embedded.type == "type_identifier" else []


# Objects whose properties are no owner a reader would name: `exports.helper = function`.
_JS_NO_OWNER = frozenset({"exports", "module", "this", "window", "globalThis", "self"})


_JS_FUNCTIONS = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function_declaration",
        "generator_function",
        "generator_function_declaration",
        "method_definition",
    }
)


def _js_parameter_names(function: ts.Node, src: bytes) -> set[str]:
    """The plain names a function's parameters bind (``(inst, def) =>``, ``x =>``, ``(a: T, b
    = 1)``); not destructured ones."""
    single = function.child_by_field_name("parameter")
    if single is not None:
        return {node_text(single, src)}
    parameters = function.child_by_field_name("parameters")
    names = set()
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type in ("required_parameter", "optional_parameter"):  # TypeScript
            parameter = parameter.child_by_field_name("pattern") or parameter
        elif parameter.type == "assignment_pattern":
            parameter = parameter.child_by_field_name("left") or parameter
        if parameter.type == "identifier":
            names.add(node_text(parameter, src))
    return names


def _js_set_on_parameter(assignment: ts.Node, name: str, src: bytes) -> bool:
    """Whether ``assignment`` is a statement of a function's body that sets a property on one of
    that function's parameters. Three steps up and no further (assignment, statement, block,
    function): tree-sitter finds a parent by walking down from the root, so climbing to any
    enclosing function would cost the depth at every step (quadratic in generated code)."""
    statement = assignment.parent
    block = statement.parent if statement is not None and statement.type == "expression_statement" else None
    function = block.parent if block is not None and block.type == "statement_block" else None
    if function is None or function.type not in _JS_FUNCTIONS:
        return False
    return name in _js_parameter_names(function, src)


def js_default_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """A module's anonymous default export is named by its ``default`` keyword."""
    parent = node.parent
    keyword = next((c for c in parent.children if c.type == "default"), None) if parent else None
    return [] if keyword is None else [(keyword, ())]


def js_assigned_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``Emitter.prototype.on = function`` and ``Emitter.create = function`` are Emitter's, as
    tsserver reads them; ``exports.helper = function`` is nobody's; and a function set on a
    parameter (zod's ``inst.min = …`` in ``$constructor("ZodString", (inst, def) => {…})``)
    belongs to what builds it (``ZodString.min``), not to ``inst``."""
    left = node.child_by_field_name("left")
    prop = left.child_by_field_name("property") if left is not None else None
    if left is None or prop is None:
        return []
    owner = left.child_by_field_name("object")
    if owner is not None and owner.type == "member_expression":
        tail = owner.child_by_field_name("property")
        is_prototype = tail is not None and node_text(tail, src) == "prototype"
        owner = owner.child_by_field_name("object") if is_prototype else None
    if owner is None or owner.type != "identifier" or node_text(owner, src) in _JS_NO_OWNER:
        return [(prop, ())]
    if _js_set_on_parameter(node, node_text(owner, src), src):
        return [(prop, ())]
    return [(prop, (node_text(owner, src),))]


def keyword_name(keyword: str) -> NameFn:
    """A definition its keyword names: Kotlin's ``constructor(…)``, Swift's ``init`` and
    ``subscript``, as their language servers list them."""

    def names(node: ts.Node, src: bytes) -> Sequence[Name]:
        found = next((child for child in node.children if child.type == keyword), None)
        return [] if found is None else [(found, ())]

    return names


def first_child_named(*types: str) -> NameFn:
    """The definition's first child of one of ``types``: a Kotlin enum entry's or ``val``
    constructor parameter's identifier, which no field name leads to."""

    def names(node: ts.Node, src: bytes) -> Sequence[Name]:
        found = next((child for child in node.named_children if child.type in types), None)
        return [] if found is None else [(found, ())]

    return names


def _last_identifier(node: ts.Node | None, types: tuple[str, ...]) -> ts.Node | None:
    """``a.b.Foo<T>`` / ``Foo?`` → the ``Foo`` node: the last of ``types`` among the children
    of a (nullable, parenthesised) user type."""
    for _ in range(8):
        if node is None or node.type in types:
            return node
        if node.type != "user_type":
            node = node.named_children[0] if node.named_child_count else None
            continue
        return next((c for c in reversed(node.named_children) if c.type in types), None)
    return None


def kotlin_function_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """A function's name; an extension function (``fun String.shout()``) is its receiver
    type's, as it is called (``"a".shout()``) and Go's methods are."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    previous = name.prev_sibling
    if previous is None or previous.type != ".":
        return [(name, ())]
    receiver = _last_identifier(previous.prev_named_sibling, ("identifier",))
    return [(name, (node_text(receiver, src),) if receiver is not None else ())]


def kotlin_property_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The names a ``val``/``var`` declares: one, or each of a destructuring ``val (a, b)``."""
    found: list[Name] = []
    for child in node.named_children:
        declarations = child.named_children if child.type == "multi_variable_declaration" else [child]
        for declaration in declarations:
            if declaration.type == "variable_declaration":
                name = next((c for c in declaration.named_children if c.type == "identifier"), None)
                if name is not None:
                    found.append((name, ()))
    return found


def swift_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """A Swift definition's name: its first ``name`` child, where it is an identifier or an
    operator function's operator (``static func ==`` is ``==``, as sourcekit-lsp lists it).
    tree-sitter-swift gives return and aliased types the same field name (``func f() -> Int``
    has two)."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    written = name.type in ("simple_identifier", "type_identifier")
    operator = node.type == "function_declaration" and (not name.is_named or name.type == "custom_operator")
    return [(name, ())] if written or operator else []


def swift_extended_type(node: ts.Node, src: bytes) -> Sequence[Name]:
    """An ``extension`` has no name of its own; its members live in the extended type
    (``extension Foo.Bar: Codable`` → ``Bar``), as a Rust ``impl``'s do."""
    found = _last_identifier(node.child_by_field_name("name"), ("type_identifier",))
    return [(found, ())] if found is not None else []


def swift_property_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The names a ``let``/``var`` declares (``var a = 1, b = 2``): each pattern's bound
    identifier."""
    found: list[Name] = []
    for pattern in node.children_by_field_name("name"):
        name = pattern.child_by_field_name("bound_identifier")
        if name is None:
            name = next((c for c in pattern.named_children if c.type == "simple_identifier"), None)
        if name is not None:
            found.append((name, ()))
    return found


def _lua_name(name: ts.Node | None, src: bytes) -> Sequence[Name]:
    """``f`` → f; ``M.util.start`` → start in ``M.util``; ``Client:send`` → send in Client. An
    owner that is not a plain name path (``t[1].f``, ``f().g``) is left out."""
    if name is None:
        return []
    if name.type == "identifier":
        return [(name, ())]
    field = name.child_by_field_name("field") or name.child_by_field_name("method")
    table = name.child_by_field_name("table")
    if field is None or table is None:
        return []
    path = node_text(table, src)
    plain = all(part.isidentifier() for part in path.split("."))
    return [(field, (path,) if plain else ())]


def lua_function_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``function M.start(config)``, ``local function helper()``, ``function Client:send()``."""
    return _lua_name(node.child_by_field_name("name"), src)


def lua_assigned_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``M.handler = function (err, result) … end``, ``local on_exit = function () … end``: the
    name on the left of the function."""
    names = next((c for c in node.named_children if c.type == "variable_list"), None)
    return _lua_name(names.child_by_field_name("name") if names is not None else None, src)


def ruby_attribute_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """The accessors ``attr_reader :name, :email`` defines: each symbol argument."""
    arguments = node.child_by_field_name("arguments")
    return [(a, ()) for a in arguments.named_children if a.type == "simple_symbol"] if arguments else []


def objc_type_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``@interface RCTFoo : NSObject``, ``@implementation RCTFoo (Private)``, ``@protocol
    RCTDelegate``: the first identifier (the class's, for a category: its members are the
    class's, as a Swift extension's are)."""
    found = next((child for child in node.named_children if child.type == "identifier"), None)
    return [(found, ())] if found is not None else []


def objc_method_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """A method is named by its selector (``name_text``): the node itself stands for it."""
    return [(node, ())]


def objc_property_names(node: ts.Node, src: bytes) -> Sequence[Name]:
    """``@property (nonatomic, copy) NSString *name, *title;``: each declarator's name."""
    found: list[Name] = []
    for declaration in node.named_children:
        if declaration.type != "struct_declaration":
            continue
        for declarator in declaration.named_children:
            if declarator.type == "struct_declarator" and declarator.named_child_count:
                name = c_declarator_name(declarator.named_children[0], src)
                if name is not None:
                    found.append(name)
    return found


def rust_impl_name(node: ts.Node, src: bytes) -> Sequence[Name]:
    """An ``impl`` has no name of its own; its members live in the implemented type."""
    target = node.child_by_field_name("type")
    while target is not None and target.type in ("generic_type", "reference_type"):
        target = target.child_by_field_name("type")
    if target is not None and target.type == "scoped_type_identifier":
        target = target.child_by_field_name("name")
    return [(target, ())] if target is not None else []


@dataclass(frozen=True, slots=True)
class Rule:
    """How one capture of the definitions query becomes a symbol and/or a chunk."""

    kind: str  # symbol kind; "function" becomes "method"/"constructor" inside a type
    names: NameFn = _BY_NAME
    chunk: bool = False  # its span is a chunk of its own (when it spans several lines)
    container: bool = False  # too big → header part + one chunk per member
    scope: bool = False  # nested definitions are qualified by its name
    symbol: bool = True  # False: a scope or chunk without a symbol of its own (Rust impl)
    sig_from_span: bool = False  # signature starts at the wrapper (``const f = () =>``)
    name_pattern: str | None = None  # regex the name must match (Python UPPER_CASE constants)
    # What an unnamed definition's members are qualified by, when something else names it: the
    # fields of C's `typedef struct {…} point_t;` are point_t's, as clangd lists them.
    scope_name: NameFn | None = None
    # A member declaration (``fn f(&self);`` in a trait, a method signature in an interface): a
    # chunk of its own, one line or not, but only directly inside a trait or interface (see
    # DECLARING_KINDS); its container is then always split, even when it fits the budget.
    declaration: bool = False
    # An attribute set on a method's receiver (Python's `self.x = …`, its names qualified by the
    # object they are set on): kept only when that object is the receiver of the method it is
    # directly in, with the method's class as container; a name's first assignment only.
    receiver: bool = False
    # What a method's body sets attributes on (its first parameter): (node, span, src) → name.
    receiver_of: Callable[[ts.Node, ts.Node, bytes], str | None] | None = None
    # False: the kind stands as written, whatever qualifies the name or holds the definition
    # (Lua's `function M.start` is a function and `function M:stop` a method, as LuaLS lists
    # them; C++'s rule would make a capitalised owner's function a method).
    refine: bool = True


@dataclass(frozen=True)
class Grammar:
    """One language's tables; ``language()`` and the queries are built lazily and cached."""

    name: str
    module: str  # the PyPI wheel's module
    loader: str  # the function in it that returns the language pointer
    definitions: str  # query: each capture name is a key of `rules`
    rules: dict[str, Rule]
    blocks: tuple[str, ...]  # node types whose named children are statements (cut points)
    wrappers: frozenset[str] = frozenset()  # parents the span always grows into
    sole_wrappers: frozenset[str] = frozenset()  # ... only when the definition is alone in them
    attached: frozenset[str] = frozenset()  # glued to the definition right below them
    # Signatures glued (across blank lines) to the next definition of the same name: overloads.
    overloads: frozenset[str] = frozenset()
    # Top-level statements that only bring names in (imports, includes, package clauses): a
    # window of nothing else is boilerplate (kind "imports"), kept out of the dense ranking.
    imports: frozenset[str] = frozenset()
    # The comments between a definition's first line and its body's first statement are the
    # definition's children, outside the body (Ruby's `module Rack` / `# Lint …` / `class
    # Lint`): glued to that statement all the same, and no part of the definition's signature.
    comments_outside_body: bool = False
    # Calls that only bring names in, where the language imports by calling (Ruby's
    # `require`): a window of nothing else is boilerplate too.
    import_calls: frozenset[str] = frozenset()
    # A definition's body, where the grammar gives it no field name (Kotlin's `class_body` and
    # `function_body`): where its signature ends, and whether it is defined or only declared.
    body_types: frozenset[str] = frozenset()
    _cache: dict[str, object] = field(default_factory=dict, repr=False, compare=False)


_FUNC = Rule("function", chunk=True, scope=True)
# An enum's members (Rust variants, TypeScript members, Java constants, C enumerators) are
# symbols, as the language servers list them (SymbolKind.EnumMember); never chunks.
_ENUM_MEMBER = Rule("enum_member")
_CLASS = Rule("class", chunk=True, container=True, scope=True)
_INTERFACE = Rule("interface", chunk=True, container=True, scope=True)
# An enum with members of its own (Java, C#, PHP, Kotlin): split as a class is when too big.
_ENUM_TYPE = Rule("enum", chunk=True, container=True, scope=True)
_METHOD = Rule("method", chunk=True, scope=True)
_CONSTRUCTOR = Rule("constructor", chunk=True, scope=True)
_UPPER = r"[A-Z][A-Z0-9_]*\Z"
_CAP_WORDS = r"[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*\Z"


def _module_level(declaration: str) -> str:
    """Query patterns for a declaration at a module's top level, exported or not."""
    return f"(program {declaration})\n(program (export_statement {declaration}))\n"


_JS_SHARED_DEFINITIONS = """
(class_declaration) @class
(export_statement value: (class) @default_class)
(export_statement
  value: [(function_expression) (arrow_function) (generator_function)] @default_function)
(class) @class_expression
(function_declaration) @function
(generator_function_declaration) @function
(method_definition) @method
(variable_declarator value: [(arrow_function) (function_expression) (generator_function)]) @var_function
(variable_declarator value: (class)) @var_class
(assignment_expression
  left: (member_expression property: (property_identifier))
  right: [(arrow_function) (function_expression)]) @assigned_function
(pair
  key: (property_identifier)
  value: [(arrow_function) (function_expression) (generator_function)]) @pair_function
""" + "".join(
    _module_level(declaration)
    for declaration in (
        """(lexical_declaration kind: "const"
             (variable_declarator name: (identifier) value: (object)) @object)""",
        """(lexical_declaration kind: "const"
             (variable_declarator name: (identifier) value: (call_expression function: (_) @_callee)) @made
             (#not-eq? @_callee "require"))""",
        """(lexical_declaration kind: "const"
             (variable_declarator name: (identifier) value: (new_expression)) @instance)""",
        "(lexical_declaration (variable_declarator name: (identifier)) @constant)",
    )
)
# Any other `const` a module or a TypeScript namespace exports (`export const version =
# "7.8.1"`); the rules above take the ones they read first (functions, objects, UPPER_CASE …).
_JS_SHARED_DEFINITIONS += "".join(
    f"""({parent} (export_statement (lexical_declaration kind: "const"
         (variable_declarator name: (identifier)) @exported)))\n"""
    for parent in ("program", "statement_block")
)

_JS_DEFINITIONS = (
    _JS_SHARED_DEFINITIONS
    + """
(field_definition value: [(arrow_function) (function_expression)]) @field_function
(field_definition) @field
"""
)

_TS_DEFINITIONS = (
    _JS_SHARED_DEFINITIONS
    + """
(abstract_class_declaration) @class
(interface_declaration) @interface
(type_alias_declaration) @type
(enum_declaration) @enum
(internal_module) @namespace
(module) @namespace
(function_signature) @function_signature
(method_signature) @method_signature
(abstract_method_signature) @method_signature
(property_signature) @property
(public_field_definition value: [(arrow_function) (function_expression)]) @field_function
(public_field_definition) @field
(enum_body (property_identifier) @enum_member_bare)
(enum_body (enum_assignment) @enum_member)
(ambient_declaration
  (lexical_declaration kind: "const" (variable_declarator name: (identifier)) @ambient_constant))
(ambient_declaration
  (lexical_declaration kind: "let" (variable_declarator name: (identifier)) @ambient_variable))
(ambient_declaration (variable_declaration (variable_declarator name: (identifier)) @ambient_variable))
"""
)

_JS_RULES: dict[str, Rule] = {
    "class": _CLASS,
    # `export default class {…}` and `export default function (…) {…}`: named `default`, as
    # tsserver lists them. Before "class_expression".
    "default_class": Rule("class", names=js_default_name, chunk=True, container=True, scope=True),
    "default_function": Rule("function", names=js_default_name, chunk=True, scope=True),
    # `class {}` in an expression is only a definition when something names it.
    "class_expression": _CLASS,
    "var_class": Rule("class", chunk=True, container=True, scope=True, sig_from_span=True),
    "function": _FUNC,
    "method": _METHOD,
    "var_function": Rule("function", chunk=True, scope=True, sig_from_span=True),
    "assigned_function": Rule(
        "function",
        names=js_assigned_name,
        chunk=True,
        scope=True,
        sig_from_span=True,
    ),
    # `{ handler: function () {…} }` in an object literal (option objects, module exports).
    "pair_function": Rule("method", names=names_in("key"), chunk=True, scope=True),
    # A class field holding a function (`setValue = (updater) => {…}`, TanStack's and React's
    # bound handlers) is a method to its reader: a chunk named with its class. Before "field".
    "field_function": Rule("method", names=names_in("property"), chunk=True, scope=True, sig_from_span=True),
    "field": Rule("field", names=names_in("property")),
    # A module's constant object literal (`export const api = { get() {…} }`) names its methods,
    # as tsserver lists them (api.get); a symbol whatever its case. Before "constant", which
    # would take the node otherwise.
    "object": Rule("constant", scope=True),
    # A module's `const` made by a call (zod's `ZodString = $constructor("ZodString", (inst) =>
    # {…})`, React's `Button = forwardRef((props, ref) => {…})`, `createSlice({…})`) is a
    # definition: a chunk named after it when it spans lines.
    "made": Rule("constant", chunk=True, scope=True, sig_from_span=True),
    # A module's `const` made by `new` is a symbol (RxJS's `asyncScheduler = new
    # AsyncScheduler(AsyncAction)`), not a chunk: as chunks, ESLint's `new Set([…])` tables
    # drew sentences from the functions using them (JavaScript −0.003 on two samples).
    "instance": Rule("constant"),
    "constant": Rule("constant", name_pattern=_UPPER),
    # What a module exports is its API, whatever its case, as tsserver lists it (a symbol only).
    "exported": Rule("constant"),
}

_TS_RULES: dict[str, Rule] = {
    **_JS_RULES,
    "interface": _INTERFACE,
    "type": Rule("type", chunk=True, scope=True),
    "enum": Rule("enum", chunk=True, scope=True),
    "namespace": Rule("namespace", chunk=True, container=True, scope=True),
    "function_signature": Rule("function"),
    "method_signature": Rule("method", declaration=True),
    "property": Rule("property"),
    "field_function": Rule("method", names=names_in("name"), chunk=True, scope=True, sig_from_span=True),
    "field": Rule("field", names=names_in("name")),
    "enum_member_bare": Rule("enum_member", names=_itself),
    "enum_member": _ENUM_MEMBER,
    # `declare const lanePhase: unique symbol`, a `.d.ts`'s `declare var process: Process`: the
    # names tsserver lists, though nothing defines them here.
    "ambient_constant": Rule("constant"),
    "ambient_variable": Rule("variable"),
}

_JS_BLOCKS = ("program", "statement_block", "class_body", "switch_body", "switch_case", "switch_default")

_C_DEFINITIONS = """
(function_definition) @function
(struct_specifier body: (_)) @struct
(union_specifier body: (_)) @struct
(enum_specifier body: (_)) @enum
(type_definition) @typedef
(preproc_def value: (_)) @macro
(preproc_function_def) @macro
(field_declaration_list (field_declaration) @field)
(enumerator_list (enumerator) @enum_member)
(translation_unit (declaration) @variable)
"""

_C_RULES: dict[str, Rule] = {
    "function": Rule("function", names=c_function_name, chunk=True, scope=True),
    "struct": Rule(
        "struct", names=c_type_name, chunk=True, container=True, scope=True, scope_name=c_typedef_name
    ),
    "enum": Rule("enum", names=c_type_name, chunk=True, scope=True, scope_name=c_typedef_name),
    "typedef": Rule("type", names=c_declarator_names, chunk=True),
    "macro": Rule("macro"),
    "field": Rule("field", names=c_declarator_names),
    "enum_member": _ENUM_MEMBER,
    "variable": Rule("variable", names=c_variable_names),  # file-scope, as clangd lists them
}

_CPP_DEFINITIONS = (
    _C_DEFINITIONS
    + """
(field_declaration_list (field_declaration declarator: (function_declarator)) @method_declaration)
(field_declaration_list
  (field_declaration declarator: (pointer_declarator declarator: (function_declarator)))
  @method_declaration)
(field_declaration_list
  (field_declaration declarator: (reference_declarator (function_declarator)))
  @method_declaration)
(class_specifier body: (_)) @class
(namespace_definition) @namespace
(namespace_definition body: (declaration_list (declaration) @variable))
(alias_declaration) @alias
(field_declaration_list (declaration declarator: [(function_declarator) (operator_cast)]) @method_declaration)
(field_declaration_list
  (template_declaration
    (declaration
      declarator: [
        (function_declarator)
        (pointer_declarator declarator: (function_declarator))
        (reference_declarator (function_declarator))
        (operator_cast)
      ]) @method_declaration))
"""
)

# In C a function-typed member is a function pointer (a field); in C++ it declares a method,
# so only C++ has the method-declaration patterns, and they must win over the field pattern.
_CPP_RULES: dict[str, Rule] = {
    "method_declaration": Rule("function", names=c_declarator_names),
    **_C_RULES,
    "class": Rule("class", names=c_type_name, chunk=True, container=True, scope=True),
    "namespace": Rule("namespace", chunk=True, container=True, scope=True),
    "alias": Rule("type", chunk=True),
}

_C_BLOCKS = (
    "translation_unit",
    "compound_statement",
    "field_declaration_list",
    "declaration_list",
    "case_statement",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
)

GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        name="python",
        module="tree_sitter_python",
        loader="language",
        definitions="""
            (class_definition) @class
            (function_definition) @function
            (module (expression_statement (assignment left: (identifier)) @constant))
            (module (expression_statement (assignment left: (identifier) right: (call)) @made))
            (module (expression_statement (assignment left: (identifier) right: (subscript)) @alias))
            (module (expression_statement
              (assignment left: (identifier) type: (type) @_annotation) @annotated_alias)
              (#match? @_annotation "TypeAlias$"))
            (module (type_alias_statement) @type_alias)
            (class_definition
              superclasses: (argument_list [(identifier) (attribute)] @_base)
              body: (block (expression_statement (assignment left: (identifier)) @enum_member))
              (#match? @_base "(Enum|Flag)$"))
            (class_definition body: (block (expression_statement (assignment left: (identifier)) @field)))
            (expression_statement
              (assignment left: [(attribute) (pattern_list) (tuple_pattern)])) @instance_field
        """,
        rules={
            "class": _CLASS,
            "function": Rule("function", chunk=True, scope=True, receiver_of=python_receiver),
            "constant": Rule("constant", names=python_assigned_names, name_pattern=_UPPER),
            # A CapWords name a call makes at module level is a type by another means, which
            # pyright lists: typing's `List = _alias(list, 1)`, `Point = namedtuple(…)`,
            # `Session = sessionmaker(…)`. Not `log = getLogger(…)`.
            "made": Rule("variable", names=python_assigned_names, name_pattern=_CAP_WORDS),
            # Type aliases, as pyright lists them: a CapWords name given a subscripted type
            # (`Vector = list[float]`), one annotated `TypeAlias`, and `type Point = …`.
            "alias": Rule("type", names=python_assigned_names, name_pattern=_CAP_WORDS),
            "annotated_alias": Rule("type", names=python_assigned_names),
            "type_alias": Rule("type", names=python_type_alias_name),
            # A class's attributes (dataclass fields, class constants) and an Enum's members, as
            # pyright lists them; the Enum pattern comes first, as it must win.
            "enum_member": Rule("enum_member", names=python_assigned_names),
            "field": Rule("field", names=python_assigned_names),
            "instance_field": Rule("field", names=python_attribute_targets, receiver=True),
        },
        blocks=("module", "block"),
        wrappers=frozenset({"decorated_definition"}),
        attached=frozenset({"comment"}),
        imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
    ),
    "javascript": Grammar(
        name="javascript",
        module="tree_sitter_javascript",
        loader="language",
        definitions=_JS_DEFINITIONS,
        rules=_JS_RULES,
        blocks=_JS_BLOCKS,
        wrappers=frozenset({"export_statement", "expression_statement"}),
        sole_wrappers=frozenset({"lexical_declaration", "variable_declaration"}),
        attached=frozenset({"comment", "decorator"}),
        imports=frozenset({"import_statement"}),
    ),
    "go": Grammar(
        name="go",
        module="tree_sitter_go",
        loader="language",
        definitions="""
            (function_declaration) @function
            (method_declaration) @method
            (type_spec type: (struct_type)) @struct
            (type_spec type: (interface_type)) @interface
            (type_spec) @type
            (type_alias) @type
            (field_declaration_list (field_declaration) @field)
            (method_elem) @method_elem
            (source_file (const_declaration (const_spec) @constant))
            (source_file (var_declaration (var_spec) @variable))
            (source_file (var_declaration (var_spec_list (var_spec) @variable)))
        """,
        rules={
            "function": _FUNC,
            "method": Rule("method", names=go_method_name, chunk=True, scope=True),
            "struct": Rule("struct", chunk=True, scope=True),
            "interface": _INTERFACE,
            "type": Rule("type", chunk=True, scope=True),
            "field": Rule("field", names=go_field_names),
            "method_elem": Rule("method", declaration=True),
            "constant": Rule("constant"),
            "variable": Rule("variable"),
        },
        blocks=(
            "source_file",
            "statement_list",
            "field_declaration_list",
            "expression_case",
            "default_case",
            "type_case",
            "communication_case",
        ),
        sole_wrappers=frozenset({"type_declaration"}),
        attached=frozenset({"comment"}),
        imports=frozenset({"package_clause", "import_declaration"}),
    ),
    "rust": Grammar(
        name="rust",
        module="tree_sitter_rust",
        loader="language",
        definitions="""
            (function_item) @function
            (function_signature_item) @function_signature
            (struct_item) @struct
            (union_item) @struct
            (enum_item) @enum
            (trait_item) @trait
            (impl_item) @impl
            (mod_item body: (_)) @module
            (type_item) @type
            (associated_type) @associated_type
            (const_item) @constant
            (static_item) @variable
            (macro_definition) @macro
            (field_declaration_list (field_declaration) @field)
            (enum_variant_list (enum_variant) @enum_member)
        """,
        rules={
            "function": _FUNC,
            "function_signature": Rule("function", declaration=True),
            "struct": Rule("struct", chunk=True, scope=True),
            "enum": Rule("enum", chunk=True, scope=True),
            "trait": Rule("trait", chunk=True, container=True, scope=True),
            "impl": Rule(
                "impl",
                names=rust_impl_name,
                chunk=True,
                container=True,
                scope=True,
                symbol=False,
            ),
            "module": Rule("module", chunk=True, container=True, scope=True),
            "type": Rule("type", chunk=True),
            # A trait's `type Item;` (its impls' `type Item = u8;` are type items), as
            # rust-analyzer lists it under the trait; a symbol only, so trait chunks are unchanged.
            "associated_type": Rule("type"),
            "constant": Rule("constant"),
            "variable": Rule("variable"),
            "macro": Rule("macro", chunk=True),
            "field": Rule("field"),
            # A struct variant's fields belong to the variant (Event.Key.code), as rust-analyzer
            # lists them; no variant is a chunk, so chunk headers are unchanged.
            "enum_member": Rule("enum_member", scope=True),
        },
        blocks=(
            "source_file",
            "block",
            "declaration_list",
            "match_block",
            "field_declaration_list",
            "enum_variant_list",
        ),
        attached=frozenset({"line_comment", "block_comment", "attribute_item"}),
        imports=frozenset({"use_declaration", "extern_crate_declaration", "mod_item"}),
    ),
    "java": Grammar(
        name="java",
        module="tree_sitter_java",
        loader="language",
        definitions="""
            (class_declaration) @class
            (record_declaration) @class
            (interface_declaration) @interface
            (annotation_type_declaration) @interface
            (enum_declaration) @enum
            (method_declaration) @method
            (constructor_declaration) @constructor
            (compact_constructor_declaration) @constructor
            (annotation_type_element_declaration) @method_signature
            (field_declaration) @field
            (constant_declaration) @constant
            (enum_body (enum_constant) @enum_member)
            (record_declaration parameters: (formal_parameters (formal_parameter) @record_component))
        """,
        rules={
            "class": _CLASS,
            "interface": _INTERFACE,
            "enum": _ENUM_TYPE,
            "method": _METHOD,
            "constructor": _CONSTRUCTOR,
            "method_signature": Rule("method"),
            "field": Rule("field", names=names_in_children("declarator", "name")),
            "constant": Rule("constant", names=names_in_children("declarator", "name")),
            "enum_member": _ENUM_MEMBER,
            "record_component": Rule("field"),  # record Point(int x, int y): jdtls lists x, y
        },
        blocks=(
            "program",
            "block",
            "class_body",
            "interface_body",
            "constructor_body",
            "enum_body_declarations",
            "switch_block",
            "switch_block_statement_group",
        ),
        attached=frozenset({"line_comment", "block_comment"}),
        imports=frozenset({"package_declaration", "import_declaration"}),
    ),
    "csharp": Grammar(
        name="csharp",
        module="tree_sitter_c_sharp",
        loader="language",
        definitions="""
            (class_declaration) @class
            (record_declaration) @class
            (struct_declaration) @struct
            (interface_declaration) @interface
            (enum_declaration) @enum
            (namespace_declaration) @namespace
            (file_scoped_namespace_declaration) @file_namespace
            (method_declaration) @method
            (constructor_declaration) @constructor
            (operator_declaration) @operator
            (conversion_operator_declaration) @operator
            (destructor_declaration) @operator
            (indexer_declaration) @operator
            (local_function_statement) @local_function
            (property_declaration) @property
            (event_declaration) @event
            (event_field_declaration) @event_field
            (delegate_declaration) @delegate
            (field_declaration (modifier) @_const (#eq? @_const "const")) @constant
            (field_declaration) @field
            (enum_member_declaration_list (enum_member_declaration) @enum_member)
            (record_declaration (parameter_list (parameter) @record_component))
        """,
        rules={
            "class": _CLASS,
            "struct": Rule("struct", chunk=True, container=True, scope=True),
            "interface": _INTERFACE,
            "enum": _ENUM_TYPE,
            # A namespace holds a file's types, as Java's package does: not a scope, so a member
            # is `BlobStore.Save` whether the file writes `namespace Acme { … }` or the
            # file-scoped `namespace Acme;` (whose types are not inside it in the tree).
            "namespace": Rule("namespace", chunk=True, container=True),
            "file_namespace": Rule("namespace"),
            "method": _METHOD,
            "constructor": _CONSTRUCTOR,
            # Methods as C++'s are: `operator ==`, `implicit operator int`, `~Cache`, `this[]`.
            "operator": Rule("method", names=csharp_member_name, chunk=True, scope=True),
            # `int Local(int x) => …` inside a method: the method's, as OmniSharp lists it.
            "local_function": _FUNC,
            # Properties with accessor bodies span lines: a chunk of their own, as a method's.
            "property": Rule("property", chunk=True, scope=True),
            "event": Rule("event", chunk=True, scope=True),
            "event_field": Rule("event", names=csharp_declarator_names),
            "delegate": Rule("type", chunk=True),
            "constant": Rule("constant", names=csharp_declarator_names),
            "field": Rule("field", names=csharp_declarator_names),
            "enum_member": _ENUM_MEMBER,
            "record_component": Rule("property"),  # record Point(int X, int Y): X and Y are properties
        },
        blocks=("compilation_unit", "declaration_list", "block", "switch_section"),
        attached=frozenset({"comment"}),
        imports=frozenset({"using_directive", "extern_alias_directive", "file_scoped_namespace_declaration"}),
    ),
    "php": Grammar(
        name="php",
        module="tree_sitter_php",
        loader="language_php",  # PHP with the HTML around `<?php … ?>` (not `language_php_only`)
        definitions="""
            (class_declaration) @class
            (interface_declaration) @interface
            (trait_declaration) @trait
            (enum_declaration) @enum
            (namespace_definition) @namespace
            (method_declaration name: (name) @_name (#eq? @_name "__construct")) @constructor
            (method_declaration) @method
            (function_definition) @function
            (property_declaration) @property
            (property_promotion_parameter) @promoted_property
            (const_declaration) @constant
            (enum_case) @enum_member
        """,
        rules={
            "class": _CLASS,
            "interface": _INTERFACE,
            "trait": Rule("trait", chunk=True, container=True, scope=True),
            "enum": _ENUM_TYPE,
            # A namespace holds a file's types, as Java's package does: not a scope, whether
            # written `namespace App\Http;` or with braces.
            "namespace": Rule("namespace", chunk=True, container=True),
            # No scope: the properties its promoted parameters declare (`public function
            # __construct(private Storage $storage)`) are the class's, as Intelephense lists them.
            "constructor": Rule("constructor", chunk=True),
            "method": _METHOD,
            "function": _FUNC,
            "property": Rule("property", names=php_element_names),
            "promoted_property": Rule("property"),
            "constant": Rule("constant", names=php_element_names),
            "enum_member": _ENUM_MEMBER,
        },
        blocks=("program", "declaration_list", "compound_statement", "enum_declaration_list", "switch_block"),
        attached=frozenset({"comment"}),
        # `<?php`, `declare(strict_types=1);`, `namespace …;` and the `use` lines above a class.
        imports=frozenset(
            {"php_tag", "declare_statement", "namespace_definition", "namespace_use_declaration"}
        ),
    ),
    "ruby": Grammar(
        name="ruby",
        module="tree_sitter_ruby",
        loader="language",
        definitions="""
            (module) @module
            (class) @class
            (module body: (body_statement (method) @module_method))
            (method) @function
            (singleton_method) @singleton_method
            (program (assignment left: (constant)) @constant)
            (body_statement (assignment left: (constant)) @constant)
            (call
              method: (identifier) @_attr
              arguments: (argument_list (simple_symbol))
              (#match? @_attr "^attr_(reader|writer|accessor)$")) @attribute
        """,
        rules={
            "module": Rule("module", chunk=True, container=True, scope=True),
            "class": _CLASS,
            # A module is a mixin: its `def`s are methods, as in a class (where `def` becomes
            # one anyway), and a function only at the top level or in a block.
            "module_method": _METHOD,
            "function": _FUNC,
            "singleton_method": _METHOD,  # `def self.build`
            "constant": Rule("constant", names=names_in("left")),
            # `attr_reader :name, :email` defines the accessors `name` and `email`, which
            # Solargraph lists with the class's methods.
            "attribute": Rule("property", names=ruby_attribute_names),
        },
        blocks=("program", "body_statement"),
        attached=frozenset({"comment"}),
        comments_outside_body=True,
        import_calls=frozenset({"require", "require_relative", "load", "autoload"}),
    ),
    "kotlin": Grammar(
        name="kotlin",
        module="tree_sitter_kotlin",
        loader="language",
        definitions="""
            (class_declaration "interface") @interface
            (class_declaration (enum_class_body)) @enum
            (class_declaration) @class
            (object_declaration) @object
            (function_declaration) @function
            (secondary_constructor) @constructor
            (class_parameter ["val" "var"]) @constructor_property
            (property_declaration
              (modifiers (property_modifier) @_const) (#eq? @_const "const")) @constant
            (source_file (property_declaration) @property)
            (class_body (property_declaration) @property)
            (enum_class_body (property_declaration) @property)
            (enum_entry) @enum_member
            (type_alias) @type
        """,
        rules={
            "interface": _INTERFACE,
            "enum": _ENUM_TYPE,
            "class": _CLASS,
            # `object Registry { … }`: a singleton, a class to its reader. A companion object is
            # no rule: its members are called on the class (`Foo.create()`) and listed there.
            "object": _CLASS,
            "function": Rule("function", names=kotlin_function_name, chunk=True, scope=True),
            "constructor": Rule("constructor", names=keyword_name("constructor"), chunk=True, scope=True),
            # `class Point(val x: Int, val y: Int)`: x and y are properties, as the IDE lists them.
            "constructor_property": Rule("property", names=first_child_named("identifier")),
            "constant": Rule("constant", names=kotlin_property_names),
            # A property with a getter, or `by lazy { … }`, spans lines: a chunk of its own.
            "property": Rule("property", names=kotlin_property_names, chunk=True, scope=True),
            "enum_member": Rule("enum_member", names=first_child_named("identifier")),
            "type": Rule("type", names=names_in("type")),
        },
        blocks=("source_file", "class_body", "enum_class_body", "block"),
        attached=frozenset({"line_comment", "block_comment"}),
        imports=frozenset({"file_annotation", "package_header", "import"}),
        body_types=frozenset({"class_body", "enum_class_body", "function_body", "block"}),
    ),
    "swift": Grammar(
        name="swift",
        module="tree_sitter_swift",
        loader="language",
        definitions="""
            (class_declaration declaration_kind: "struct") @struct
            (class_declaration declaration_kind: "enum") @enum
            (class_declaration declaration_kind: "extension") @extension
            (class_declaration) @class
            (protocol_declaration) @protocol
            (function_declaration) @function
            (init_declaration) @constructor
            (deinit_declaration) @deinit
            (subscript_declaration) @subscript
            (protocol_function_declaration) @method_signature
            (protocol_property_declaration) @protocol_property
            (source_file (property_declaration) @variable)
            (class_body (property_declaration) @property)
            (enum_class_body (property_declaration) @property)
            (enum_entry) @enum_member
            (typealias_declaration) @type
            (associatedtype_declaration) @type
            (macro_declaration) @macro
        """,
        rules={
            "struct": Rule("struct", names=swift_name, chunk=True, container=True, scope=True),
            "enum": Rule("enum", names=swift_name, chunk=True, container=True, scope=True),
            # An extension's members are its type's (`Camera.encode`), as a Rust impl's are.
            "extension": Rule(
                "impl", names=swift_extended_type, chunk=True, container=True, scope=True, symbol=False
            ),
            "class": Rule("class", names=swift_name, chunk=True, container=True, scope=True),  # and actors
            "protocol": Rule("interface", names=swift_name, chunk=True, container=True, scope=True),
            "function": Rule("function", names=swift_name, chunk=True, scope=True),
            "constructor": Rule("constructor", names=keyword_name("init"), chunk=True, scope=True),
            "subscript": Rule("method", names=keyword_name("subscript"), chunk=True, scope=True),
            "deinit": Rule("method", names=keyword_name("deinit"), chunk=True, scope=True),  # as C++'s ~T
            "method_signature": Rule("method", names=swift_name, declaration=True),
            "protocol_property": Rule("property", names=swift_property_names),
            "variable": Rule("variable", names=swift_property_names, chunk=True, scope=True),
            # A computed property's body spans lines: a chunk of its own, as a method's.
            "property": Rule("property", names=swift_property_names, chunk=True, scope=True),
            "enum_member": Rule("enum_member"),  # `case on, off`: both
            "type": Rule("type", names=swift_name),  # and a protocol's `associatedtype`
            # `public macro Union() = #externalMacro(…)`: a declaration whose name no field gives.
            "macro": Rule("function", names=first_child_named("simple_identifier"), chunk=True),
        },
        blocks=("source_file", "class_body", "enum_class_body", "protocol_body", "statements"),
        attached=frozenset({"comment", "multiline_comment"}),
        imports=frozenset({"import_declaration"}),
    ),
    "shell": Grammar(
        name="shell",
        module="tree_sitter_bash",
        loader="language",
        definitions="""
            (function_definition) @function
            (program (variable_assignment) @constant)
            (program (declaration_command (variable_assignment) @constant))
        """,
        rules={
            "function": _FUNC,
            # A script's settings (`readonly ROOT=…`, `VERSION=1.2`), as bash-language-server
            # lists its variables; UPPER_CASE ones only, the names a reader looks for.
            "constant": Rule("constant", name_pattern=_UPPER),
        },
        blocks=("program", "compound_statement", "do_group", "case_item", "if_statement", "else_clause"),
        attached=frozenset({"comment"}),
    ),
    "lua": Grammar(
        name="lua",
        module="tree_sitter_lua",
        loader="language",
        definitions="""
            (function_declaration name: (method_index_expression)) @method
            (function_declaration) @function
            (assignment_statement
              (variable_list . name: (_))
              (expression_list . value: (function_definition))) @assigned_function
            (field name: (identifier) value: (function_definition)) @field_function
            (assignment_statement
              (variable_list . name: (_))
              (expression_list . value: (table_constructor))) @table
        """,
        rules={
            # As LuaLS lists them: `function Client:send()` takes `self`, a method of Client;
            # `function M.start()` is a function of the table M (container M); a local one is
            # a function (container: the function it is in).
            "method": Rule("method", names=lua_function_name, chunk=True, scope=True, refine=False),
            "function": Rule("function", names=lua_function_name, chunk=True, scope=True, refine=False),
            "assigned_function": Rule(
                "function", names=lua_assigned_name, chunk=True, scope=True, sig_from_span=True, refine=False
            ),
            # `local M = { start = function (config) … end }`: a function of the table, as LuaLS
            # lists it (container: the table's name, when something names it).
            "field_function": Rule("function", chunk=True, scope=True, sig_from_span=True, refine=False),
            # `local M = { … }`, `M.handlers = { … }`: what names the functions in it; no symbol
            # (every module would list its `M`).
            "table": Rule("variable", names=lua_assigned_name, scope=True, symbol=False),
        },
        blocks=("chunk", "block"),
        wrappers=frozenset({"variable_declaration"}),
        attached=frozenset({"comment"}),
    ),
    "objective-c": Grammar(
        name="objective-c",
        module="tree_sitter_objc",
        loader="language",
        definitions=_C_DEFINITIONS
        + """
            (class_interface category: (_)) @category
            (class_interface) @class
            (class_implementation) @implementation
            (protocol_declaration) @protocol
            (method_definition) @method
            (method_declaration) @method_declaration
            (property_declaration) @property
        """,
        rules={
            **_C_RULES,
            # A category's and an implementation's members are the class's (`RCTFoo.reset`), as a
            # Swift extension's are; the class is the `@interface`'s symbol. (Before "class":
            # the earlier rule takes a node both capture.)
            "category": Rule(
                "impl", names=objc_type_name, chunk=True, container=True, scope=True, symbol=False
            ),
            "class": Rule("class", names=objc_type_name, chunk=True, container=True, scope=True),
            "implementation": Rule(
                "impl", names=objc_type_name, chunk=True, container=True, scope=True, symbol=False
            ),
            "protocol": Rule("interface", names=objc_type_name, chunk=True, container=True, scope=True),
            "method": Rule("method", names=objc_method_name, chunk=True, scope=True),
            # In a protocol a chunk of its own (what a conforming class implements); in an
            # `@interface` a symbol, as a C++ class's member declarations are.
            "method_declaration": Rule("method", names=objc_method_name, declaration=True),
            "property": Rule("property", names=objc_property_names),
        },
        blocks=(
            *_C_BLOCKS,
            "class_interface",
            "class_implementation",
            "protocol_declaration",
            "qualified_protocol_interface_declaration",
        ),
        wrappers=frozenset({"type_definition", "declaration", "implementation_definition"}),
        attached=frozenset({"comment"}),
        imports=frozenset({"preproc_include"}),
        body_types=frozenset({"compound_statement"}),
    ),
    "c": Grammar(
        name="c",
        module="tree_sitter_c",
        loader="language",
        definitions=_C_DEFINITIONS,
        rules=_C_RULES,
        blocks=_C_BLOCKS,
        wrappers=frozenset({"type_definition", "declaration"}),
        attached=frozenset({"comment"}),
        imports=frozenset({"preproc_include"}),
    ),
    "cpp": Grammar(
        name="cpp",
        module="tree_sitter_cpp",
        loader="language",
        definitions=_CPP_DEFINITIONS,
        rules=_CPP_RULES,
        blocks=_C_BLOCKS,
        wrappers=frozenset({"type_definition", "declaration", "template_declaration"}),
        attached=frozenset({"comment"}),
        imports=frozenset({"preproc_include", "using_declaration"}),
    ),
}


def _typescript(name: str, loader: str) -> Grammar:
    """TypeScript and TSX: one wheel, two languages, the same tables."""
    return Grammar(
        name=name,
        module="tree_sitter_typescript",
        loader=loader,
        definitions=_TS_DEFINITIONS,
        rules=_TS_RULES,
        blocks=_JS_BLOCKS,
        wrappers=frozenset({"export_statement", "expression_statement", "ambient_declaration"}),
        sole_wrappers=frozenset({"lexical_declaration", "variable_declaration"}),
        attached=frozenset({"comment", "decorator"}),
        imports=frozenset({"import_statement", "import_alias"}),
        overloads=frozenset({"function_signature", "method_signature"}),
    )


GRAMMARS["typescript"] = _typescript("typescript", "language_typescript")
GRAMMARS["tsx"] = _typescript("tsx", "language_tsx")

# Symbol kinds whose functions are methods.
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
# Containers whose member declarations (Rule.declaration) are chunks of their own: a one-line
# `fn next(&mut self) -> Option<Self::Item>;` inside a trait window is found only through its
# neighbours' text. Elsewhere (TypeScript class overloads, Rust `extern` blocks) they are not.
DECLARING_KINDS = frozenset({"trait", "interface"})

_lock = threading.Lock()
_local = threading.local()


@dataclass(frozen=True, slots=True)
class Compiled:
    """A grammar's shareable, immutable tree-sitter objects."""

    language: ts.Language
    definitions: ts.Query
    blocks: ts.Query
    rule_order: tuple[str, ...]  # rule keys in table order: earlier wins a doubly captured node


def compiled(grammar: Grammar) -> Compiled:
    """The grammar's Language and queries, built on first use (thread-safe)."""
    cached = grammar._cache.get("compiled")
    if cached is None:
        with _lock:
            cached = grammar._cache.get("compiled")
            if cached is None:
                module = importlib.import_module(grammar.module)
                language = ts.Language(getattr(module, grammar.loader)())
                blocks = "\n".join(f"({block} (_) @s)" for block in grammar.blocks)
                cached = Compiled(
                    language=language,
                    definitions=ts.Query(language, grammar.definitions),
                    blocks=ts.Query(language, blocks),
                    rule_order=tuple(grammar.rules),
                )
                grammar._cache["compiled"] = cached
    assert isinstance(cached, Compiled)
    return cached


def parser_for(grammar: Grammar) -> ts.Parser:
    """This thread's parser for the grammar (tree-sitter parsers must not be shared)."""
    parsers: dict[str, ts.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(grammar.name)
    if parser is None:
        parser = parsers[grammar.name] = ts.Parser(compiled(grammar).language)
    return parser
