"""Words for the lexical half: identifier splitting for FTS5 rows and query terms, whether a
query is shaped like an identifier, and the base forms of a sentence's words.

FTS5's unicode61 tokenizer already splits on ``_`` and ``.`` but keeps ``parseHttpHeader`` whole;
the ``idents`` column adds the camelCase parts so "http header parse" finds it too.
"""

from __future__ import annotations

import functools
import re

from kenning.abbreviations import ABBREVIATIONS
from kenning.compounds import compound_parts

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# One name as code spells it (`OsString`, `_url`, `r`): what search reads as a name in a
# query's backticks or a signature's parameter list.
NAME = re.compile(r"[A-Za-z_]\w*")

# English function words that names are built with (`send_to`, `as_ptr`, `is_empty`,
# `into_iter`): every sentence has some, so alone they do not say which name a sentence means
# (search.fusion.name_boost). bench.multilang descriptive MRR@10, stripped / documented: Rust
# 0.640 / 0.534 -> 0.646 / 0.538 (4 up / 7 up 1 down), C++ +0.003, Go -0.002 (1 query),
# TypeScript -0.001; a second sample (selection seed 8): Rust +0.004, Java +0.003, the rest
# within 0.001.
# fmt: off
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "to", "of", "in", "on", "at", "by", "for", "from", "with", "as", "is", "are",
    "be", "it", "its", "this", "that", "and", "or", "not", "if", "into", "onto", "no",
})
# fmt: on

_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAS_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")


def identifier_parts(word: str) -> list[str]:
    """``getHTTPResponse`` → ``["get", "http", "response"]``; other words → themselves."""
    parts = [p.lower() for p in _CAMEL_PART.findall(word)]
    # Only split words the ASCII pattern covers whole (no letters outside it are lost).
    if len(parts) > 1 and "".join(parts) == word.lower():
        return parts
    return [word.lower()]


def split_identifiers(text: str) -> str:
    """The camelCase parts of every mixed-case word in ``text``, space-joined (for FTS).
    Compounds (``sizeof``) are split only in names (``name_words``): split in every word of the
    text, they moved more queries down than up outside Python (docs/performance.md, session 38)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        # Most words of code are all lower case: skip them with one C call before the regex
        # (a third of the indexer's identifier-splitting time on the standard library).
        if not word.islower() and _HAS_INNER_CAPITAL.search(word):
            out.extend(_parts_cached(word))
    return " ".join(out)


_PARTS_CACHE: dict[str, list[str]] = {}
_PARTS_CACHE_MAX = 50_000


def _parts_cached(word: str) -> list[str]:
    """``identifier_parts`` memoised: the same identifiers recur in every chunk of a project."""
    parts = _PARTS_CACHE.get(word)
    if parts is None:
        if len(_PARTS_CACHE) >= _PARTS_CACHE_MAX:
            _PARTS_CACHE.clear()
        parts = _PARTS_CACHE[word] = identifier_parts(word)
    return parts


@functools.lru_cache(maxsize=65_536)
def name_parts(name: str) -> tuple[str, ...]:
    """Lower-case words of an identifier, splitting snake_case, dots and camelCase. Memoised:
    fusion splits every candidate's name for every query (a tenth of a hybrid query's CPU)."""
    words: list[str] = []
    for word in _WORD.findall(name):
        words.extend(identifier_parts(word))
    return tuple(words)


@functools.lru_cache(maxsize=65_536)
def name_words(name: str) -> tuple[str, ...]:
    """``name_parts`` with each compound split into its words (``Sizeof`` → ``size of``,
    ``_formatparam`` → ``format param``): the words a sentence may say of the name. The model
    reads ``name_parts`` (its tokenizer splits compounds its own way), search matches these."""
    words: list[str] = []
    for part in name_parts(name):
        words.extend(compound_parts(part) or (part,))
    return tuple(words)


def written_out(name: str) -> str:
    """A name in words with its abbreviations written out, as a chunk's header leads with it:
    ``MetadataExt.st_ino`` → ``metadata ext st inode``, ``Sprintf`` → ``string print
    formatted``."""
    return " ".join(ABBREVIATIONS.get(part, part) for part in name_parts(name))


def with_compound_parts(terms: list[str]) -> set[str]:
    """``terms`` and the words of each compound among them (``namespace`` → also ``name``,
    ``space``): what a query's words may spell of a name split by ``name_words``."""
    out = set(terms)
    for term in terms:
        out.update(compound_parts(term) or ())
    return out


def query_terms(query: str) -> list[str]:
    """Distinct lower-case terms of a query: each word, plus the parts of identifiers in it."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.lower(), None)
        for part in identifier_parts(word):
            seen.setdefault(part, None)
    return list(seen)


_CODE_WORD = re.compile(r"_*[A-Za-z]\w*?(?:(?:_|\.|::)\w+|[a-z0-9][A-Z]\w*)")


def identifier_like(text: str) -> bool:
    """One word, or at most three with one shaped like code (``snake_case``, ``camelCase``,
    ``a.b``, ``A::b``)."""
    words = text.split()
    if len(words) == 1:
        return True
    return 0 < len(words) <= 3 and any(_CODE_WORD.fullmatch(w.strip("`()")) for w in words)


def word_forms(term: str) -> list[str]:
    """Base forms an inflected English word may have (``delays`` → ``delay``, ``copies`` →
    ``copy``, ``created`` → ``create``, ``creating`` → ``create``), some of them not words:
    the caller keeps only those the index holds. Documentation conjugates what code names in
    the base form, and FTS5's unicode61 tokenizer does not stem."""
    if len(term) <= 3 or not term.isalpha():
        return []
    if term.endswith("ies"):
        return [term[:-3] + "y"]
    if term.endswith("es"):
        return [term[:-1], term[:-2]]  # caches → cache, matches → match
    if term.endswith("s") and not term.endswith("ss"):
        return [term[:-1]]
    if term.endswith("ed") and len(term) > 4:
        forms = [term[:-1], term[:-2]]  # created → create, delayed → delay
        if term[-3] == term[-4]:
            forms.append(term[:-3])  # stopped → stop
        return forms
    if term.endswith("ing") and len(term) > 5:
        forms = [term[:-3], term[:-3] + "e"]  # delaying → delay, creating → create
        if term[-4] == term[-5]:
            forms.append(term[:-4])  # stopping → stop
        return forms
    return []
