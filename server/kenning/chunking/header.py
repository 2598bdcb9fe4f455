"""The first line of a definition chunk's header: its name in words and, for a definition kept
whole, the names defined inside it. The chunker writes it (``code._header``) and search's name
boost reads the member names back (``search.fusion.members``); both go through this module, so
the format lives in one place.

``Box.into_raw`` → ``box into raw``; ``impl PartialOrd for Rc<T>`` kept whole → ``rc: partial
cmp, lt, le, gt, ge``, the list cut with ``…`` when long.
"""

from __future__ import annotations

from kenning.lexical import name_parts, written_out

_LIST_START = ": "
_SEPARATOR = ", "
_CUT = "…"
# Between the defined members and the declared ones; name words never hold a ";".
_DECLARED = "; declares "


def name_line(symbol: str, members: tuple[str, ...], limit: int, declared: tuple[str, ...] = ()) -> str:
    """The name in words, its abbreviations written out (``lexical.written_out``), then the
    members' names in words (``name: a, b``), then the names of the functions only declared in
    it, prototypes and pure virtual methods (``; declares c, d``); what follows the name at
    most ``limit`` characters (cut with ``…``)."""
    name = written_out(symbol)
    defined_words = _in_words(members)
    listed = _SEPARATOR.join(defined_words)
    declared_words = _in_words(declared)
    if declared_words:
        listed += _DECLARED + _SEPARATOR.join(declared_words)
    listed = _cut(listed, limit)
    return f"{name}{_LIST_START}{listed}" if defined_words else name + listed


def names_line(names: tuple[str, ...], limit: int) -> str:
    """Names in words (``A.Len``, ``IPv4Unspecified`` → ``a len, i pv 4 unspecified``), at most
    ``limit`` characters: what a window of one-liners that no one name fits leads with."""
    return _cut(_SEPARATOR.join(_in_words(names)), limit)


def _in_words(names: tuple[str, ...]) -> list[str]:
    """Each name in words; an operator (Swift's and C#'s `==`, Ruby's `[]`) has none to list."""
    return [words for words in (" ".join(name_parts(name)) for name in names) if words]


def _cut(listed: str, limit: int) -> str:
    return listed[: limit - 1].rstrip(" ,") + _CUT if len(listed) > limit else listed


def listed_members(symbol: str | None, header: str, *, declared: bool = False) -> list[str]:
    """The defined member names ``name_line`` listed in ``header`` (its first line), in words,
    or with ``declared`` the declared ones; a list cut short loses its cut name."""
    if not symbol:
        return []
    first = header.split("\n", 1)[0]
    name = written_out(symbol)
    if first.startswith(name + _LIST_START):
        defined, marker, declarations = first[len(name) + len(_LIST_START) :].partition(_DECLARED)
    elif declared and first.startswith(name + _DECLARED):
        defined, marker, declarations = "", _DECLARED, first[len(name) + len(_DECLARED) :]
    else:
        return []
    if declared and not marker:
        return []
    listed = declarations if declared else defined
    names = listed.split(_SEPARATOR)
    if (declared or not marker) and names[-1].endswith(_CUT):
        names.pop()
    return [n for n in names if n]
