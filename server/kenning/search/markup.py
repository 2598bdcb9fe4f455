"""A query's documentation markup as the words a reader sees.

A query is often a doc comment's sentence, pasted or written by an agent in the style of the
code's docs: ``Converts an Observable of {@link ObservableNotification} objects``, ``Performs an
HTTP PUT using the [XMLHttpRequest](https://developer.mozilla.org/…)``. The tag (``link``) and
the link's address are not what the code says: as query words they find chunks that mention
"link" or "mozilla", and they pull the query's vector toward prose. Backticks stay: the model
reads them as code (removing them cost bench.multilang descriptive MRR@10 in TypeScript, Rust
and JavaScript alike), and a backticked type (`Box<[T], A>`) is code the chunk may hold as
written (:func:`code_spans`), which neither half can see whole.
"""

from __future__ import annotations

import re

from kenning.lexical import NAME, identifier_like

# JSDoc/TSDoc and Javadoc inline tags: {@link Target}, {@link Target label}, {@link Target|label},
# {@linkcode Target}, {@code x}, {@literal x}, {@inheritDoc}.
_INLINE_TAG = re.compile(r"\{@(\w+)(?:\s+([^{}]*))?\}")
_LINK_TAGS = frozenset({"link", "linkcode", "linkplain"})
# rustdoc's code with links in it, `<code>[Box]&lt;[OsStr]&gt;</code>`: code, the links' brackets and
# the HTML entities read as what they show, `Box<OsStr>`.
_HTML_CODE = re.compile(r"<code>(.*?)</code>")
_CODE_LINK = re.compile(r"\[((?:[A-Z]\w+|\w+(?:::\w+)+))\]")  # [Box], [io::Error]; not [T], [u8]
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&nbsp;": " "}
_ENTITY = re.compile("|".join(map(re.escape, _ENTITIES)))
# A Markdown link with its address (a URL, a path, an anchor): [text](https://…) → text. Code
# such as `handlers[0](event)` is not one.
_MARKDOWN_LINK = re.compile(r"\[([^\[\]]*[^\W\d][^\[\]]*)\]\((?:[a-z][a-z0-9+.-]*://|[./#])[^()\s]*\)")
# rustdoc's intra-doc links, [`Once`], [Once], [`Vec`][vec]: what a reader sees is the name (in
# backticks when written so). Not a call or an index (`f[0](x)`, `a[i][j]`), and not in code:
# `&[T]` keeps its brackets.
_INTRA_DOC_LINK = re.compile(
    r"(?<![\w\])])"  # not an index: `a[i]`, `f()[0]`
    r"\[(`[^`\[\]]+`|[A-Za-z_][\w:]*(?:\(\))?)\]"  # [`Once`], [Once], [`call_once()`]
    r"(?:\[[^\[\]\s]*\])?"  # a reference label: [`Vec`][vec]
    r"(?![(\[])"  # not a call or a Markdown link with its address
)


def _link(content: str) -> tuple[str, str]:
    """A link tag's target as a dotted name, and its label ("" when it has none): ``List#add(Object)
    add`` → ``("List.add", "add")``, ``#size`` → ``("size", "")``."""
    # The target, then its label after a space or `|`.
    target, *label = re.split(r"\s*\|\s*|\s+", content, maxsplit=1)
    # `List#add(Object)` and `#size` name a member: `List.add`, `size`.
    return re.sub(r"\(.*\)$", "", target).replace("#", ".").lstrip("."), label[0] if label else ""


def linked_names(query: str) -> frozenset[tuple[str, ...]]:
    """The definitions the query's inline doc links point at, as dotted names split into parts:
    ``{@link #add}`` → ``("add",)``, ``{@link List#add(Object) add}`` → ``("List", "add")``. A
    doc comment links to something other than what it documents ("Removes a finalizer … added
    with the {@link #add} method" documents `remove`)."""
    names = set()
    for found in _INLINE_TAG.finditer(query):
        if found.group(1).lower() in _LINK_TAGS:
            target, _ = _link((found.group(2) or "").strip())
            parts = tuple(part for part in target.split(".") if part)
            if parts:
                names.add(parts)
    return frozenset(names)


def _inline_tag(match: re.Match[str]) -> str:
    tag, content = match.group(1), (match.group(2) or "").strip()
    if tag.lower() not in _LINK_TAGS:
        return content  # {@code x} → x; {@inheritDoc} → nothing
    target, label = _link(content)
    return label or target


def reader_text(query: str) -> str:
    """``query`` with inline doc tags and Markdown link addresses replaced by what they show:
    ``{@link Observable}`` → ``Observable``, ``{@link List#add(Object) add}`` → ``add``,
    ``[XMLHttpRequest](https://…)`` → ``XMLHttpRequest``, rustdoc's
    ``<code>[Box]&lt;[OsStr]&gt;</code>`` → ``Box<OsStr>`` in backticks and its intra-doc links
    ``[`Once`]`` → ``Once`` in backticks. Other text is kept as it is."""
    if "{@" in query:
        query = _INLINE_TAG.sub(_inline_tag, query)
    if "](" in query:
        query = _MARKDOWN_LINK.sub(r"\1", query)
    if "<code>" in query:
        query = _HTML_CODE.sub(_html_code, query)
    if "[" in query and not identifier_like(query):  # `[T] as_mut` is a name
        query = _without_link_brackets(query)
    return query


def _without_link_brackets(query: str) -> str:
    """``query`` with its intra-doc links' brackets dropped, except where they are in code."""
    code = [m.span() for m in _BACKTICKED.finditer(query)] if "`" in query else []

    def shown(match: re.Match[str]) -> str:
        if any(start < match.start() < end for start, end in code):
            return match.group(0)
        return match.group(1)

    return _INTRA_DOC_LINK.sub(shown, query)


def _html_code(match: re.Match[str]) -> str:
    # Entities only here: a query may be about them ("unescapes entities like "&lt;"").
    code = _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], _CODE_LINK.sub(r"\1", match.group(1)))
    return f"`{code}`"


_BACKTICKED = re.compile(r"`([^`]+)`")


def backticked(query: str) -> list[str]:
    """What the query writes as code: its backticked spans, in order (`` `Box<str>` ``, `` `+=` ``)."""
    return _BACKTICKED.findall(query) if "`" in query else []


def written_names(query: str) -> frozenset[str]:
    """The names the query writes as code, one to a span (`` `String` `` and `` `OsString` `` in
    "Converts a `String` into an `OsString`"), when it writes two or more: together they say
    what the definition's signature relates (``impl From<String> for OsString``), where one
    alone (`` `Rc` ``, `` `self` ``) is any code about it."""
    names = frozenset(span for span in backticked(query) if NAME.fullmatch(span))
    return names if len(names) >= 2 else frozenset()


_STRUCTURE = re.compile(r"[^\w\s.:]")  # punctuation other than a path's `.` and `::`
_WORD = re.compile(r"\w+")


def code_spans(query: str) -> list[str]:
    """The query's backticked code that relates two names or more by punctuation (`Box<str>`,
    `Box<[T], A>`, `process.on('error')`; not `&[T]`, one name), without its spaces: what BM25's
    words and the model's vector both blur (which type is inside which). A name alone (`Rc`,
    `"json"`, `connect()`) is left to them, an operator to ``search.aliases``."""
    return [
        "".join(span.split())
        for span in backticked(query)
        if _STRUCTURE.search(span) and len(_WORD.findall(span)) >= 2
    ]
