"""Names written as one lower-case word, split into the words they are made of.

Code is full of names no case or underscore splits: `sizeof`, `getpid`, `isinstance`,
`readdir`, `splitext`, `__getnewargs__`, Go's `Sizeof`. A sentence says "size", "process id",
"instance", so the lexical half and the name boost miss them. ``compound_parts`` splits such a
word into the most likely sequence of common English words, each word costing the logarithm of
its rank (Zipf's law, as in Norvig's word segmentation), plus a little per extra word.

It is cautious by design: a name that is itself a word (`append`, `decode`, `iterator`, `init`)
is never split, each part must be a common word, a programming abbreviation (`attr`, `dir`) or
one of a few short function words (`of`, `is`, `to`), and a split must hold a part of four
letters or more or a programming word (`get`+`pid`, not `in`+`its`). The dictionary is ``data/words.txt.gz``
(``bench.wordlist`` builds it from SCOWL and the model's vocabulary).
"""

from __future__ import annotations

import functools
import gzip
import math
from pathlib import Path
from typing import Final, NamedTuple

from kenning.abbreviations import ABBREVIATIONS

WORDS_FILE: Final = Path(__file__).with_name("data") / "words.txt.gz"

# The two-letter words a name is built with: `sizeof`, `isfile`, `tolower`, `lookup`, `getpid`.
SHORT_WORDS: Final = frozenset(
    {"of", "to", "is", "at", "by", "in", "on", "as", "or", "if", "id", "io", "os", "fs", "up", "no", "do"}
)
# Words programmers build names from that the dictionary lacks or ranks low, ranked as a
# common word (``abbreviations.ABBREVIATIONS`` are added to these).
CODE_WORDS: Final = frozenset(
    {
        "api", "ascii", "async", "bool", "chr", "config", "csv", "cwd", "db", "dict", "enum",
        "exe", "ext", "hex", "html", "http", "impl", "int", "json", "lib", "ord", "pid", "sql",
        "ssl", "stat", "str", "sync", "tcp", "tty", "txt", "udp", "ui", "url", "utf", "xml",
    }
)  # fmt: skip
CODE_WORD_RANK: Final = 5_000
# A three-letter part must be this common (by rank): "get", "set", "new", "key"; not "ode".
THREE_LETTER_RANK: Final = 5_000
# Each part after the first costs this much more (in twentieths, as ``_cost``): fewer, longer words.
PART_COST: Final = 60
MIN_LENGTH: Final = 5  # shorter words are left whole: `isok`, `tofu`
MAX_PART: Final = 20  # the longest part looked for


class _Dictionary(NamedTuple):
    # The words a name may be split into, each with its cost in twentieths (log of its rank: small
    # ints, which Python shares, so 60,000 entries cost no float objects).
    costs: dict[str, int]
    other_words: frozenset[str]  # the rest of the words long enough to be a name: never split
    code_words: frozenset[str]  # CODE_WORDS and the abbreviations


def _cost(rank: int) -> int:
    return round(20 * math.log(rank + 1))


@functools.cache
def _dictionary() -> _Dictionary:
    with gzip.open(WORDS_FILE, "rt", encoding="ascii") as f:
        header = f.readline()
        parts = int(header.split()[-1])  # "# parts N": the first N words may be parts
        words = f.read().split()
    costs: dict[str, int] = {}
    for rank, word in enumerate(words[:parts], start=1):
        if len(word) >= 4 or (len(word) == 3 and rank <= THREE_LETTER_RANK) or word in SHORT_WORDS:
            costs[word] = _cost(rank)
    code_words = frozenset(w for w in (*CODE_WORDS, *ABBREVIATIONS) if w.isalpha())
    for word in code_words | SHORT_WORDS:
        costs.setdefault(word, _cost(CODE_WORD_RANK))
    other = frozenset(w for w in words if len(w) >= MIN_LENGTH and w not in costs)
    return _Dictionary(costs, other, code_words)


def warm() -> None:
    """Load the dictionary now (~0.05 s, ~12 MiB), not on the first query that needs it."""
    _dictionary()


@functools.lru_cache(maxsize=200_000)
def compound_parts(word: str) -> tuple[str, ...] | None:
    """``sizeof`` → ``("size", "of")``, ``getpid`` → ``("get", "pid")``; None when ``word``
    (lower case expected) is a word itself, too short, not ASCII letters, or does not split
    into common words."""
    if len(word) < MIN_LENGTH or not word.isascii() or not word.isalpha() or not word.islower():
        return None
    dictionary = _dictionary()
    costs = dictionary.costs
    if word in costs or word in dictionary.other_words:
        return None
    n = len(word)
    # best[i]: the cheapest split of word[:i], as (cost, where its last part starts).
    best: list[tuple[float, int]] = [(0.0, 0)] + [(math.inf, 0)] * n
    for end in range(1, n + 1):
        for start in range(max(0, end - MAX_PART), end):
            if best[start][0] == math.inf:
                continue
            cost = costs.get(word[start:end])
            if cost is None:
                continue
            total = best[start][0] + cost + (PART_COST if start else 0)
            if total < best[end][0]:
                best[end] = (total, start)
    if best[n][0] == math.inf:
        return None
    parts: list[str] = []
    end = n
    while end > 0:
        start = best[end][1]
        parts.append(word[start:end])
        end = start
    parts.reverse()
    # A real compound holds a longer word or a programming word: `get pid`, `size of`; not
    # `in its` (inits) or `on ion`.
    if len(parts) < 2 or not any(len(part) >= 4 or part in dictionary.code_words for part in parts):
        return None
    return tuple(parts)
