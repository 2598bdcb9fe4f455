"""Fuzzy name matching for ``workspace/symbol`` (the editor's "Go to Symbol in Workspace" box).

This module owns the ranking of symbol names against what the user typed, and an index that
answers it quickly over 100k+ names. The ranking is editor-style and deliberately coarse, so
results are predictable:

1. **class** — exact > prefix > word-boundary ("camel hump") > substring > subsequence; names that
   do not contain the query's characters in order are excluded;
2. **case** — a match that also holds case-sensitively beats one that only holds ignoring case;
3. **length** — shorter names first; then alphabetical; then, for the same name, the caller's
   tie order (``FuzzyIndex(names, ties=…)``: workspace symbols put public containers before
   private ones, then shallower paths), then position.

An all-capitals query (``TPE``, ``HS``) is an abbreviation: a name whose word starts spell it as
written (``ThreadPoolExecutor``) comes before a name that only starts with it ignoring case
(``TPen``), which ranks just above the case-insensitive word-boundary matches.

Word boundaries ("segments") start a run of letters/digits, a camelCase hump (``getNetrc``), a
letter/digit change (``utf8``) and the last capital of an acronym (``HTTP|Server``). A query is
in the word-boundary class when it can be cut into pieces that are each a prefix of a segment,
in order: ``urp`` is u+r+p of UploadRetryPolicy, ``retpol`` is "Ret" + "Pol". Space-separated
query words must each begin a segment (``retry pol``). Exact, prefix and substring compare the
query with its whitespace collapsed to single spaces; subsequence ignores the spaces.

Speed (p50 of a few ms at 100k names, see ``bench/fuzzy_latency.py``) comes from never looping
over all names in Python. The names are laid out once, sorted by (length, name), as newline-joined
strings ("blobs": as written, lowercased, and with a mark before every segment) plus per-name bit
sets (characters present, characters starting a segment, hashed adjacent pairs). A search walks
the classes best first; numpy filters on the bit sets, regex scans of a blob (C speed) and, for
the word class only, an exact Python check on the few survivors yield each class's members *in
display order*, so the walk stops as soon as ``limit`` results are certain and an unselective
query (one letter) costs no more than a selective one.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import NDArray

    # Code points of a text: one byte each when it is ASCII (the usual case), else four.
    _Codes: TypeAlias = NDArray[np.uint8] | NDArray[np.uint32]

__all__ = ["FuzzyIndex", "fuzzy_score"]

# Match classes, best first. The numbers only matter through their order and the score formula.
EXACT = 5
PREFIX = 4
WORD = 3
SUBSTRING = 2
SUBSEQUENCE = 1

_MARK = "\x01"  # inserted before every segment start in the "marked" blobs
_LINE = "\n"

# Character-class bits for segmentation.
_ALNUM = 1
_UPPER = 2
_LOWER = 4
_LETTER = 8
_DIGIT = 16


def _char_flags(ch: str) -> int:
    flags = 0
    if ch.isalnum():
        flags |= _ALNUM
    if ch.isupper():
        flags |= _UPPER
    if ch.islower():
        flags |= _LOWER
    if ch.isalpha():
        flags |= _LETTER
    if ch.isdigit():
        flags |= _DIGIT
    return flags


@cache
def _bmp_flags() -> NDArray[np.uint8]:
    # Built once per process (~30 ms); str methods are the definition of letter/case, so the
    # table agrees with Python's Unicode database whatever the name's script.
    return np.fromiter((_char_flags(chr(c)) for c in range(0x10000)), dtype=np.uint8, count=0x10000)


def _codes(text: str) -> _Codes:
    """The code points of ``text`` as an array: one byte each when it is ASCII (the usual case)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _segment_starts(codes: _Codes) -> NDArray[np.intp]:
    """Positions in ``codes`` where a segment starts."""
    table = _bmp_flags()
    if codes.dtype == np.uint8:
        flags = table[codes]
    else:
        flags = table[np.minimum(codes, 0xFFFF)]
        astral = codes > 0xFFFF
        if astral.any():
            # Rare (emoji, historic scripts): classify the few distinct characters one by one.
            for cp in np.unique(codes[astral]).tolist():
                flags[codes == cp] = _char_flags(chr(cp))

    def has(bit: int, arr: NDArray[np.uint8]) -> NDArray[np.bool_]:
        return np.asarray((arr & bit) != 0, dtype=np.bool_)

    prev = np.zeros_like(flags)
    prev[1:] = flags[:-1]
    nxt = np.zeros_like(flags)
    nxt[:-1] = flags[1:]
    boundary = (
        (has(_ALNUM, flags) & ~has(_ALNUM, prev))  # start of a letter/digit run
        | (has(_LOWER, prev) & has(_UPPER, flags))  # camelCase hump
        | (has(_LETTER, prev) & has(_DIGIT, flags))  # utf|8
        | (has(_DIGIT, prev) & has(_LETTER, flags))  # 8|bit
        | (has(_UPPER, prev) & has(_UPPER, flags) & has(_LOWER, nxt))  # HTTP|Server
    )
    return np.flatnonzero(boundary)


def _mark_segments(text: str) -> str:
    """Return ``text`` with ``_MARK`` inserted before every segment start.

    Vectorised with numpy: a regex with look-arounds tried at every position costs ~0.2 s over
    1.5 MB of names, most of the budget for building an index.
    """
    if not text:
        return text
    codes = _codes(text)
    where = _segment_starts(codes)
    if where.size == 0:
        return text
    marked = np.insert(codes, where, ord(_MARK))
    if codes.dtype == np.uint8:
        return marked.tobytes().decode("ascii")
    return marked.astype("<u4", copy=False).tobytes().decode("utf-32-le", "surrogatepass")


def _clean(text: str) -> str:
    # "\n" separates names in the blobs and "\x01" marks segments; neither may occur inside one.
    if _LINE in text or _MARK in text:
        return text.replace(_LINE, " ").replace(_MARK, " ")
    return text


# Pre-filter bits: one per ASCII letter (each case), digit and "_"; every other character shares
# the top bit. Used for "which characters does a name have" and "which start a segment".
def _mask_table() -> NDArray[np.uint64]:
    table = np.full(129, 1 << 63, dtype=np.uint64)
    for c in range(128):
        ch = chr(c)
        if "a" <= ch <= "z":
            table[c] = 1 << (c - ord("a"))
        elif "A" <= ch <= "Z":
            table[c] = 1 << (26 + c - ord("A"))
        elif "0" <= ch <= "9":
            table[c] = 1 << (52 + c - ord("0"))
        elif ch == "_":
            table[c] = 1 << 62
    table[ord(_LINE)] = 0
    table[ord(_MARK)] = 0
    return table


_MASK_TABLE = _mask_table()


def _char_bit(ch: str) -> int:
    return int(_MASK_TABLE[min(ord(ch), 128)])


def _bigram_bit(first: int, second: int) -> int:
    # Must agree with the vectorised hash in FuzzyIndex._bigram_masks.
    return 1 << ((first * 31 + second) & 63)


class _Query:
    """The forms of one query (one case variant) that the match classes need."""

    __slots__ = ("chars_mask", "forced", "hump_steps", "literal", "word_chars")

    def __init__(self, words: list[str]) -> None:
        self.literal = " ".join(words)  # exact / prefix / substring compare this
        self.word_chars = "".join(words)  # word-boundary and subsequence ignore the spaces
        forced: set[int] = set()
        pos = 0
        for word in words:
            forced.add(pos)
            pos += len(word)
        self.forced = frozenset(forced)  # query positions that must begin a segment

        mask = 0
        for ch in self.word_chars:
            mask |= _char_bit(ch)
        self.chars_mask = mask
        # Word-boundary pre-filter, per query position: the character must start a segment of
        # the name, or (if it may continue a piece) follow the previous query character there.
        steps: list[tuple[int, int]] = []
        for i, ch in enumerate(self.word_chars):
            follows = 0
            if i not in self.forced:
                follows = _bigram_bit(ord(self.word_chars[i - 1]), ord(ch))
            steps.append((_char_bit(ch), follows))
        self.hump_steps = steps

    # Compiled on first use (most searches stop after a class or two); re caches compilations.
    @property
    def prefix(self) -> re.Pattern[str]:
        return re.compile(_LINE + re.escape(self.literal))

    @property
    def substring(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.literal))

    @property
    def subseq(self) -> re.Pattern[str]:
        return re.compile(_subsequence_regex(self.word_chars))

    @property
    def hump(self) -> re.Pattern[str]:
        return re.compile(_hump_prefilter_regex(self.word_chars, self.forced))


def _subsequence_regex(chars: str) -> str:
    # "[^c\n]*+c": possessive and excluding the next character, so each step takes the earliest
    # occurrence and never backtracks — linear time per line, and exact for "is a subsequence".
    parts = [re.escape(chars[0])]
    for ch in chars[1:]:
        esc = re.escape(ch)
        parts.append(f"[^{esc}\\n]*+{esc}")
    return "".join(parts)


def _hump_prefilter_regex(chars: str, forced: frozenset[int]) -> str:
    # The same necessary condition as _Query.hump_steps, but positional, checked in C: the
    # characters in order, each at a segment start or right after the previous query character
    # (a forced one only at a segment start). A property of each position alone, so taking the
    # earliest position (atomic groups) is exact for it and linear in time.
    parts = [_MARK + re.escape(chars[0])]
    for i, ch in enumerate(chars[1:], start=1):
        esc = re.escape(ch)
        if i in forced:
            parts.append(f"(?>[^\\n]*?{_MARK}{esc})")
        else:
            after = re.escape(chars[i - 1])
            parts.append(f"(?>[^\\n]*?(?:{_MARK}|(?<={after})){esc})")
    return "".join(parts)


def _hump_match(chars: str, forced: frozenset[int], marked_line: str) -> bool:
    """Can ``chars`` be cut into pieces that are prefixes of successive segments?

    A set-of-reachable-positions DP over the segments: polynomial, unlike a backtracking regex,
    which explodes on names such as ``a_a_a_a_a_a_a_a`` against a long query.
    """
    n = len(chars)
    if n == 0:
        return True
    reach = {0}
    first = set(chars)
    for seg in marked_line.split(_MARK)[1:]:
        if not seg or seg[0] not in first:
            continue
        grown: list[int] = []
        for p in reach:
            k = 0
            # Extend a piece from query position p along the segment; a forced position can only
            # start a piece (k == 0), never continue one.
            while p + k < n and k < len(seg) and seg[k] == chars[p + k] and (k == 0 or (p + k) not in forced):
                k += 1
                grown.append(p + k)
        if n in grown:
            return True
        reach.update(grown)
    return False


def _split_query(query: str) -> list[str]:
    return _clean(query).split()


def _classify_one(q: _Query, name: str, marked: str) -> int | None:
    """The class of one case variant — the definition the index's scans must agree with."""
    if name == q.literal:
        return EXACT
    if name.startswith(q.literal):
        return PREFIX
    if _hump_match(q.word_chars, q.forced, marked):
        return WORD
    if q.literal in name:
        return SUBSTRING
    if q.subseq.search(name) is not None:
        return SUBSEQUENCE
    return None


def _is_abbreviation(words: list[str]) -> bool:
    """``TPE``, ``HTTP2``: one word, at least two capitals, nothing in lower case."""
    if len(words) != 1:
        return False
    word = words[0]
    return word.isalnum() and word.isupper() and sum(ch.isupper() for ch in word) >= 2


def _score(klass: int, case_exact: bool, length: int, abbreviation: bool = False) -> float:
    # Class dominates (gap 1), case next (0.5), then length (at most 0.2); divides into (0, 1]
    # with a one-character, case-exact, exact match scoring 1.0. For an abbreviation a prefix
    # that only holds ignoring case sits between the word-boundary matches as written and the
    # case-insensitive ones (0.25 above the latter, whose length term stays below 0.25).
    if abbreviation and klass == PREFIX and not case_exact:
        base = WORD + 0.25
    else:
        base = klass + (0.5 if case_exact else 0.0)
    return (base + 0.2 / max(length, 1)) / 5.7


def _rank(words: list[str], name: str) -> tuple[int, bool] | None:
    clean = _clean(name)
    marked = _mark_segments(clean)
    as_written = _classify_one(_Query(words), clean, marked)
    any_case = _classify_one(_Query([w.lower() for w in words]), clean.lower(), marked.lower())
    best = max(as_written or 0, any_case or 0)
    if best == 0:
        return None
    # Usually "as written" implies "any case", but not always (a final sigma lowercases to "ς"),
    # so the class is the better of the two and case-exact means "as written" reached it.
    return best, as_written == best


def fuzzy_score(query: str, name: str) -> float | None:
    """Score one name against a query: ``None`` if it does not match, else a score in (0, 1].

    An empty (or all-whitespace) query matches everything with score 0.0. Higher is better, and
    ordering by score (then name) is the order :meth:`FuzzyIndex.search` returns.
    """
    words = _split_query(query)
    if not words:
        return 0.0
    ranked = _rank(words, name)
    if ranked is None:
        return None
    klass, case_exact = ranked
    return _score(klass, case_exact, len(name), _is_abbreviation(words))


def _line_starts(codes: _Codes) -> NDArray[np.intp]:
    return np.flatnonzero(codes == ord(_LINE))


class _Blob:
    """Newline-joined lines (display order) and the offset of the newline before each line."""

    __slots__ = ("starts", "text")

    def __init__(self, text: str, starts: NDArray[np.intp] | None = None) -> None:
        self.text = text
        if starts is None:
            starts = _line_starts(_codes(text))
        # array, not list: bisect reads it as fast, and it is a memcpy away from numpy.
        self.starts = array("q", starts.astype(np.int64, copy=False).tobytes())

    def line(self, i: int) -> str:
        starts = self.starts
        end = starts[i + 1] if i + 1 < len(starts) else len(self.text)
        return self.text[starts[i] + 1 : end]


def _per_line_or(bits: NDArray[np.uint64], starts: NDArray[np.intp]) -> NDArray[np.uint64]:
    """OR ``bits`` (one per position) over each line."""
    return np.bitwise_or.reduceat(bits, starts)


def _char_masks(codes: _Codes, starts: NDArray[np.intp]) -> NDArray[np.uint64]:
    return _per_line_or(_MASK_TABLE[np.minimum(codes, 128)], starts)


def _initial_masks(marked: _Codes, starts: NDArray[np.intp]) -> NDArray[np.uint64]:
    """Per line, the bits of the characters that start a segment (those after a mark)."""
    after = np.flatnonzero(marked == ord(_MARK)) + 1  # a mark is always followed by a character
    bits = np.zeros(len(marked), dtype=np.uint64)
    bits[after] = _MASK_TABLE[np.minimum(marked[after], 128)]
    return _per_line_or(bits, starts)


# 2**h for the 64 hash values, and 0 at index 64 for pairs that straddle a line break.
_POW2 = np.array([1 << h for h in range(64)] + [0], dtype=np.uint64)


def _bigram_masks(codes: _Codes, starts: NDArray[np.intp]) -> NDArray[np.uint64]:
    """Per line, hashed bits of its adjacent character pairs (the same hash as _bigram_bit)."""
    wide = codes.astype(np.uint32)
    pair_hash = np.full(len(codes), 64, dtype=np.uint32)  # pair_hash[i]: the pair (i, i + 1)
    pair_hash[:-1] = (wide[:-1] * np.uint32(31) + wide[1:]) & np.uint32(63)
    pair_hash[starts] = 64  # ("\n", first character)
    pair_hash[starts[1:] - 1] = 64  # (last character, "\n")
    pair_hash[-1] = 64
    return _per_line_or(_POW2[pair_hash], starts)


class FuzzyIndex:
    """Names laid out for fast fuzzy search; immutable after construction, so thread-safe."""

    def __init__(self, names: Sequence[str], ties: Sequence[int] | None = None) -> None:
        """``ties``: per name, an order among equal names (lower first); position otherwise."""
        names = list(names)
        self._count = len(names)
        if ties is not None and len(ties) != self._count:
            raise ValueError(f"ties has {len(ties)} entries for {self._count} names")
        # Display order (length, name, tie, position), from stable sorts with C-level keys.
        order = list(range(self._count))
        if ties is not None:
            order.sort(key=list(ties).__getitem__)
        order.sort(key=names.__getitem__)
        order.sort(key=list(map(len, names)).__getitem__)
        # Machine integers, not a list of int objects: 8 bytes a name instead of ~36.
        self._order = array("q", order)
        # A name defined many times (``__init__``, ``get``, a vendored copy's every name) is one
        # line: the search walks distinct names, and line i stands for the names at display
        # positions _groups[i] to _groups[i + 1]. A monorepo has a few times fewer distinct
        # names than definitions, and every scan below is over the lines.
        lines: list[str] = []
        groups = array("q")
        previous: str | None = None
        for position, name in enumerate(map(names.__getitem__, order)):
            if name != previous:
                lines.append(name)
                groups.append(position)
                previous = name
        groups.append(self._count)
        self._groups = groups
        self._n = n = len(lines)
        self._lengths = array("q", map(len, lines))
        plain = _LINE + _LINE.join(lines)
        if _MARK in plain or plain.count(_LINE) != n:
            lines = [_clean(line) for line in lines]
            plain = _LINE + _LINE.join(lines)
        self._lines = lines
        marked = _mark_segments(plain)
        # Everything per case variant: [0] as written, [1] lowercased.
        self._plain: list[_Blob] = []
        self._marked: list[_Blob] = []
        self._first: list[NDArray[np.uint32]] = []  # code point of each line's first character
        self._size: list[NDArray[np.intp]] = []  # each line's length in that variant
        self._initials: list[NDArray[np.uint64]] = []
        self._bigrams: list[NDArray[np.uint64]] = []
        chars = np.zeros(n, dtype=np.uint64)
        for variant, (plain_text, marked_text) in enumerate(
            ((plain, marked), (plain.lower(), marked.lower()))
        ):
            codes, marked_codes = _codes(plain_text), _codes(marked_text)
            starts, marked_starts = _line_starts(codes), _line_starts(marked_codes)
            self._plain.append(_Blob(plain_text, starts))
            self._marked.append(_Blob(marked_text, marked_starts))
            if not n:
                continue
            padded = np.append(codes, ord(_LINE)).astype(np.uint32, copy=False)
            self._first.append(padded[starts + 1])  # "\n" for an empty line: matches no query
            self._size.append(np.diff(np.append(starts, len(codes))) - 1)
            if variant == 1 and plain.isascii():
                # ASCII: lowercasing only moves the capital letters' bits down to the small ones.
                chars |= (chars >> np.uint64(26)) & np.uint64((1 << 26) - 1)
            else:
                chars |= _char_masks(codes, starts)
            self._initials.append(_initial_masks(marked_codes, marked_starts))
            self._bigrams.append(_bigram_masks(codes, starts))
        # Which characters each name has, in either case: a necessary condition for every class.
        self._chars = chars

    def __len__(self) -> int:
        return self._count

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """Best ``limit`` matches as ``(position in names, score)``, best first.

        An empty or all-whitespace query lists the first ``limit`` names, shortest first, with
        score 0.0.
        """
        if limit <= 0 or self._n == 0:
            return []
        words = _split_query(query)
        if not words:
            return [(self._order[i], 0.0) for i in range(min(limit, self._count))]
        # ``limit`` lines hold at least ``limit`` names: the walk's early stop stays exact.
        found = _Search(self, words, limit).run()
        abbreviation = _is_abbreviation(words)
        out: list[tuple[int, float]] = []
        groups, order = self._groups, self._order
        for line, klass, case_exact in found:
            score = _score(klass, case_exact, self._lengths[line], abbreviation)
            for position in range(groups[line], min(groups[line + 1], groups[line] + limit - len(out))):
                out.append((order[position], score))
            if len(out) >= limit:
                break
        return out


class _Search:
    """One query against one index: the class-by-class walk with an early stop.

    Every step visits its members in display order, so once ``limit`` are found the answer is
    final. Each step picks the cheapest exact way to enumerate its members: numpy filters over
    per-line features, then direct string checks when few remain; a regex over the whole blob
    (memchr-speed for literals) when many do; a copied-out subset for the costly subsequence regex.
    """

    DIRECT_CHECKS = 1000  # prefix candidates checked one by one below this, else one regex scan
    DIRECT_WORD_CHECKS = 200  # word-boundary candidates sent straight to the exact DP
    SUBSTRING_SUBSET = 1 / 16  # share of the index below which substring scans a subset copy
    SUBSEQUENCE_SUBSET = 1 / 2  # … and the subsequence scan

    def __init__(self, index: FuzzyIndex, words: list[str], limit: int) -> None:
        self.index = index
        self.limit = limit
        self.queries = (_Query(words), _Query([w.lower() for w in words]))
        self.abbreviation = _is_abbreviation(words)
        self.found: list[tuple[int, int, bool]] = []  # (line, class, case-exact)
        self.seen: set[int] = set()
        self.has_chars: list[NDArray[np.bool_]] = []
        self.hits: list[NDArray[np.intp]] = []
        for q in self.queries:
            mask = np.uint64(q.chars_mask)
            has = (index._chars & mask) == mask
            self.has_chars.append(has)
            self.hits.append(np.flatnonzero(has))
        self._subsets: list[tuple[_Blob, list[int]] | None] = [None, None]

    def run(self) -> list[tuple[int, int, bool]]:
        # Case-exact members of a class first (variant 0), then the case-insensitive rest (1);
        # an abbreviation's word starts as written come before its case-insensitive prefixes.
        steps: list[tuple[Callable[[int, _Query], bool], int]] = [
            (self._exact, 0),
            (self._exact, 1),
            (self._prefix, 0),
            (self._prefix, 1),
            (self._words, 0),
            (self._words, 1),
            (self._substring, 0),
            (self._substring, 1),
            (self._subsequence, 0),
            (self._subsequence, 1),
        ]
        if self.abbreviation:
            steps[3], steps[4] = steps[4], steps[3]
        for step, variant in steps:
            if self.hits[variant].size and step(variant, self.queries[variant]):
                return self.found
        return self.found

    def _take(self, line: int, klass: int, variant: int) -> bool:
        if line not in self.seen:
            self.seen.add(line)
            self.found.append((line, klass, variant == 0))
        return len(self.found) >= self.limit

    def _starting_with(self, variant: int, q: _Query, exact: bool) -> NDArray[np.intp]:
        index = self.index
        size = index._size[variant]
        fits = size == len(q.literal) if exact else size > len(q.literal)
        first = index._first[variant] == ord(q.literal[0])
        return np.flatnonzero(fits & first & self.has_chars[variant])

    def _exact(self, variant: int, q: _Query) -> bool:
        blob = self.index._plain[variant]
        for line in self._starting_with(variant, q, exact=True).tolist():
            if blob.line(line) == q.literal and self._take(line, EXACT, variant):
                return True
        return False

    def _prefix(self, variant: int, q: _Query) -> bool:
        candidates = self._starting_with(variant, q, exact=False)
        if candidates.size > self.DIRECT_CHECKS:
            return self._scan(self.index._plain[variant], None, q.prefix, PREFIX, variant)
        blob = self.index._plain[variant]
        for line in candidates.tolist():
            if blob.line(line).startswith(q.literal) and self._take(line, PREFIX, variant):
                return True
        return False

    def _substring(self, variant: int, q: _Query) -> bool:
        blob, ids = self._blob(variant, self.SUBSTRING_SUBSET)
        return self._scan(blob, ids, q.substring, SUBSTRING, variant)

    def _subsequence(self, variant: int, q: _Query) -> bool:
        blob, ids = self._blob(variant, self.SUBSEQUENCE_SUBSET)
        return self._scan(blob, ids, q.subseq, SUBSEQUENCE, variant)

    def _scan(
        self, blob: _Blob, ids: list[int] | None, pattern: re.Pattern[str], klass: int, variant: int
    ) -> bool:
        text, starts, seen = blob.text, blob.starts, self.seen
        n_lines = len(starts)
        search = pattern.search
        pos = 0
        while (m := search(text, pos)) is not None:
            line = bisect_right(starts, m.start()) - 1
            pos = starts[line + 1] if line + 1 < n_lines else len(text)  # one hit per line
            index_line = line if ids is None else ids[line]
            if index_line not in seen and self._take(index_line, klass, variant):
                return True
        return False

    def _blob(self, variant: int, share: float) -> tuple[_Blob, list[int] | None]:
        """The whole index's blob, or a copy of just the lines that have the query's characters."""
        hits = self.hits[variant]
        index = self.index
        if hits.size > index._n * share:
            return index._plain[variant], None
        subset = self._subsets[variant]
        if subset is None:
            other = self._subsets[0]
            if variant == 1 and other is not None and np.array_equal(self.hits[0], hits):
                # The same lines as the as-written variant (a query without capitals): lowercase
                # that copy instead of joining again.
                subset = (_Blob(other[0].text.lower()), other[1])
            else:
                ids: list[int] = hits.tolist()
                text = _LINE + _LINE.join([index._lines[i] for i in ids])
                subset = (_Blob(text.lower() if variant else text), ids)
            self._subsets[variant] = subset
        return subset

    def _words(self, variant: int, q: _Query) -> bool:
        # Three filters, cheapest first: per-name bit sets (numpy, whole index at once), then the
        # positional regex over just the surviving lines (C), then the exact DP (Python) on the
        # few left.
        index = self.index
        hits = self.hits[variant]
        initials = index._initials[variant][hits]
        bigrams = index._bigrams[variant][hits]
        ok = np.ones(len(hits), dtype=bool)
        for initial_bit, follows_bit in q.hump_steps:
            step = (initials & np.uint64(initial_bit)) != 0
            if follows_bit:
                step |= (bigrams & np.uint64(follows_bit)) != 0
            ok &= step
        candidates: list[int] = hits[ok].tolist()
        marked = index._marked[variant]
        if len(candidates) > self.DIRECT_WORD_CHECKS:
            subset = _Blob(_LINE + _LINE.join([marked.line(i) for i in candidates]))
            text, starts = subset.text, subset.starts
            search = q.hump.search
            passed: list[int] = []
            pos = 0
            while (m := search(text, pos)) is not None:
                line = bisect_right(starts, m.start()) - 1
                passed.append(candidates[line])
                pos = starts[line + 1] if line + 1 < len(starts) else len(text)
            candidates = passed
        seen = self.seen
        for line in candidates:
            if (
                line not in seen
                and _hump_match(q.word_chars, q.forced, marked.line(line))
                and self._take(line, WORD, variant)
            ):
                return True
        return False
