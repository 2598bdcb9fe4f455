"""What a sentence says of the definitions it names besides naming them: which way a conversion it
describes goes ("Converts a `Cow<'a, OsStr>` into an `OsString`", "Converts radians to
degrees"), which names it says its subject is not ("is like setPath but for Fragment", "calls
ParseAddr(s) and panics on error"), whether what it describes answers yes or no ("reports
whether the port is valid"), which parameters it names ("scans text read from r"), and which type
it calls "this" ("Consumes this `RwLock`")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kenning.abbreviations import ABBREVIATIONS
from kenning.lexical import FUNCTION_WORDS, NAME, name_words, word_forms
from kenning.search.signatures import conversion
from kenning.store.rows import ChunkRow

_WORDS = re.compile(r"\w+")
# The words that say which way a sentence's conversion goes: "X into Y", "Y from X", "X to Y".
_DIRECTION_WORDS = ("into", "from", "to")


def conversion_sides(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """A sentence's words on the source and on the target side of the word that says which way
    a conversion goes: "Converts a `Cow<'a, OsStr>` into an `OsString`" → ``{converts, cow,
    osstr}``, ``{osstring}``; after "from" the source, before it the target. None when the
    sentence has no such word."""
    words = [word.lower() for word in _WORDS.findall(text)]
    for direction in _DIRECTION_WORDS:
        if direction in words:
            at = words.index(direction)
            before, after = frozenset(words[:at]), frozenset(words[at + 1 :])
            return (after, before) if direction == "from" else (before, after)
    return None


def converts_as_said(row: ChunkRow, sides: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether the chunk implements the conversion a sentence describes (``conversion_sides``)
    in its direction: its source type named on the source side, its target on the target side,
    and more of them so than the other way round (`From<Box<str>> for Box<[u8]>` is "a
    `Box<str>` into a `Box<[u8]>`", not the reverse, though both sides name `Box`)."""
    found = conversion(row)
    if found is None:
        return False
    source, target = found
    source_side, target_side = sides
    if not (source & source_side and target & target_side):
        return False
    as_said = len(source & source_side) + len(target & target_side)
    reversed_ = len(target & source_side) + len(source & target_side)
    return as_said > reversed_


# A sentence that starts with one of these says it converts ("Converts radians to degrees"); only
# such a sentence is read for the direction a name says (`name_converts_as_said`): "Gets a raw
# pointer to the start", "Creates a `Box` from a raw pointer" lifted every `to_*` and `from_*`.
_CONVERSION_VERBS = frozenset(
    {"convert", "converts", "translate", "translates", "transform", "transforms", "turn", "turns"}
)
# The words in a name that say which way it converts: `to_degrees`, `into_boxed_os_str`,
# `from_le_bytes`, `AddrFromSlice`, `normalizeSeverityToNumber`.
_NAME_DIRECTION_WORDS = frozenset({"to", "into", "from"})
_CODE_SPAN = re.compile(r"`[^`]*`")
_DIRECTION = re.compile(r"\b(?:into|from|to)\b", re.IGNORECASE)


def says_conversion(text: str) -> bool:
    """Whether the sentence starts by saying it converts ("Converts radians to degrees")."""
    words = _WORDS.findall(text)
    return bool(words) and words[0].lower() in _CONVERSION_VERBS


def conversion_clause(text: str) -> str:
    """The sentence up to the first comma after its direction word ("Translates a double into
    a BigDecimal, using the double's canonical string representation" → "… into a BigDecimal"):
    what follows says how, not what into (`toString` is no answer). Commas inside code spans
    (`Cow<'a, OsStr>`) do not count."""
    plain = _CODE_SPAN.sub(lambda span: span.group().replace(",", " "), text)
    found = _DIRECTION.search(plain)
    if found is None:
        return text
    comma = plain.find(",", found.end())
    return text if comma < 0 else text[:comma]


def conversion_in_names(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The sides a name's direction is read against (``name_converts_as_said``): for a sentence
    that says it converts, the ``conversion_sides`` of its ``conversion_clause`` with each word's
    base forms, made once per query; None for any other sentence."""
    if not says_conversion(text):
        return None
    sides = conversion_sides(conversion_clause(text))
    if sides is None:
        return None
    return _with_forms(sides[0]), _with_forms(sides[1])


def name_converts_as_said(symbol: str | None, sides: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether a definition's name says the conversion a sentence describes
    (``conversion_in_names``) in its direction: the words after the name's ``to`` or ``into``
    more on the sentence's target side than on its source side, after its ``from`` the other way
    round. "Converts radians to degrees": `to_degrees`, not `to_radians`, which the name boost put
    first for spelling "radians"."""
    if not symbol:
        return False
    parts = name_words(symbol.rsplit(".", 1)[-1])
    at = next((i for i, part in enumerate(parts) if part in _NAME_DIRECTION_WORDS), None)
    if at is None or at == len(parts) - 1:
        return False
    after = _with_forms(parts[at + 1 :])
    source_side, target_side = sides
    said, other = (source_side, target_side) if parts[at] == "from" else (target_side, source_side)
    return len(after & said) > len(after & other)


def _with_forms(words: Iterable[str]) -> frozenset[str]:
    """``words`` and their base forms (``boxed`` → ``box``), less the function words."""
    out: set[str] = set()
    for word in words:
        out.add(word)
        out.update(word_forms(word))
    return frozenset(out - FUNCTION_WORDS)


# What a sentence names as other than its subject: what it is like ("is like setPath but for
# Fragment", "the same as `reserve`", "performs the same function as call_once()", "equivalent
# to ParseInt(…)", "Like quote(), but accepts bytes"), what it calls or hands its work to
# ("calls ParseAddr(s) and panics on error", "a call to Write", "the severity passed to New", "an
# error returned by parseFloatPrefix") and what it implements ("implements Fprint", "Concrete
# implementation of InspectLoader.get_source", "the internal version of Flush"). A sentence's
# first word is capitalised.
_OTHER_THAN_SUBJECT = re.compile(
    r"(?<![\w-])(?:[Ll]ike|same as|same \w+ as|[Ss]imilar to|[Ee]quivalent to|[Cc]alls to|[Cc]all to|[Cc]alls"
    r"|passed to|returned by|[Ii]mplements|[Ii]mplementation of|[Vv]ersion of)\s+(?:the\s+)?`?"
    r"(?P<name>[A-Za-z_][\w.:]*)"
)
# ... and what it works with or against, when written as code: who acts on what it handles
# ("arrays already normalized by `convertResult`", "Called by ManagedARAHandle to deregister …",
# "a data block that was written with writeToStream()", "Called from onStartCommand",
# "dispatched using EventDispatcher.dispatchEvent"), what it uses, calls, throws or overrides
# ("do it only once using __gconv_read_conf", "Call unlink() on all tracked shared memory",
# "Throw FindException with …", "Overrides AbstractTask version"), what it mirrors ("does the
# inverse transformation of QueryEscape", "The symmetric clone of `fix_right_border`"). Only a
# name written as code right after such words: "the memory owned by the `RawVec`" is the
# receiver's own (its `impl Drop` holds the method meant), and "invalidated by further calls",
# "sorted by key" name nothing.
_WORKS_WITH = re.compile(
    r"(?<![\w-])(?:"
    r"(?:[A-Za-z]+ed|[Mm]ade|built|written|set|held|thrown|given|done|kept|sent|taken|shown|drawn)"
    r" (?:by|with|using|via|from)"
    r"|[Uu]sing|[Uu]ses?|[Cc]all|[Tt]hrows?|[Oo]verrides"
    r"|(?:[Ii]nverse|[Oo]pposite|[Rr]everse|[Cc]ounterpart|[Cc]lone|[Mm]irror)(?: \w+)? (?:of|to)"
    r")\s+(?P<mark>[`\[]*)(?P<name>[A-Za-z_][\w.:]*)(?P<call>\(\))?"
)
# ... and what it says is called ("without a deferred handlePanic call", "once `connect()` is
# called on it"), when written as code.
_CALLED = re.compile(
    r"(?<![\w.:`\[])(?P<mark>[`\[]*)(?P<name>[A-Za-z_][\w.:]*)(?P<call>\(\))?[`\]]*\s+(?:calls?|is called)\b"
)
# A name written as code: camel case, an inner capital (`ManagedARAHandle`), `_`, `.` or `::`.
_CODE_SHAPED = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}|_|\.|::")


def other_names(text: str) -> frozenset[tuple[str, ...]]:
    """The names a sentence says its subject is not but is like, calls, hands its work to,
    implements, works with or mirrors, each as written, split at ``.`` and ``::``
    (``names_exactly``): "The same as `RawVec::reserve`, but …" → ``{("RawVec", "reserve")}``;
    "Concrete implementation of InspectLoader.get_source" names the abstract method, not the
    `get_source` that implements it."""
    written = [found["name"] for found in _OTHER_THAN_SUBJECT.finditer(text)]
    written += [
        found["name"]
        for pattern in (_WORKS_WITH, _CALLED)
        for found in pattern.finditer(text)
        if found["mark"] or found["call"] or _CODE_SHAPED.search(found["name"])
    ]
    names = (tuple(part for part in re.split(r"::|\.", name) if part) for name in written)
    return frozenset(name for name in names if name and name[-1] not in FUNCTION_WORDS)  # "like a …"


# A sentence about a predicate: "reports whether …", "Returns `true` if …", "Checks if …".
_PREDICATE = re.compile(
    r"(?i)\b(?:reports whether|returns? `?true`? (?:if|when|iff)|returns whether|checks? (?:whether|if)"
    r"|determines? (?:whether|if)|tests? (?:whether|if)|indicates whether|tells whether|whether or not)\b"
)


def asks_whether(text: str) -> bool:
    """Whether a sentence describes a predicate: what it describes answers yes or no ("reports
    whether port is either empty or matches …", "Returns `true` if the ordering is `Less`")."""
    return _PREDICATE.search(text) is not None


# "e.g.", "i.e.": letters alone that are no names.
_ABBREVIATED = re.compile(r"\b(?:e\.g|i\.e|cf|vs)\.", re.IGNORECASE)
# A backticked span, or a word (a letter after digits too: "x³ - 3x + b", "this * 10n"); not
# the letters after an apostrophe ("ip's", "doesn't").
_SPAN_OR_WORD = re.compile(rf"`([^`]+)`|(?<!['’])({NAME.pattern})")
_CAMEL_CASE = re.compile(r"[a-z][A-Z]")


def parameters_named(text: str) -> frozenset[str]:
    """The words of a sentence that can only be names, as a doc comment writes its parameters':
    a letter alone ("scans text read from r"; not "a" or "I"), a name in backticks ("`dur`"),
    one in camel case or with an underscore ("If returnStmt != nil"), a programmer's
    abbreviation ("copies src to dst"). A word ("delta", "value") may be a parameter too, but is
    as often only a word."""
    names: set[str] = set()
    for code, word in _SPAN_OR_WORD.findall(_ABBREVIATED.sub(" ", text)):
        if code:
            if NAME.fullmatch(code):
                names.add(code)
        elif len(word) == 1:
            if word not in ("a", "A", "I"):
                names.add(word)
        elif "_" in word or _CAMEL_CASE.search(word) or word in ABBREVIATIONS:
            names.add(word)
    return frozenset(names)


# "Consumes this `RwLock`", "Returns the scale of this BigDecimal": a type the sentence calls
# "this".
_THIS_TYPE = re.compile(r"\b[Tt]his\s+`?([A-Z]\w*)")


def owners_said(text: str) -> frozenset[str]:
    """The types a sentence calls "this" ("Consumes this `RwLock`, returning the underlying
    data", "Lay out this BigDecimal into a char[] array"): a doc comment's name for the object
    its method is called on, so the owner of the method it documents."""
    return frozenset(_THIS_TYPE.findall(text))
