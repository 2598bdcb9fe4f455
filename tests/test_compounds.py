"""Compound names split into words (``kenning.compounds``) and the dictionary behind it."""

from __future__ import annotations

import pytest
from bench.wordlist import ranked_words

from kenning.compounds import compound_parts


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("sizeof", ("size", "of")),
        ("getpid", ("get", "pid")),
        ("isinstance", ("is", "instance")),
        ("readdir", ("read", "dir")),
        ("splitext", ("split", "ext")),
        ("setdefault", ("set", "default")),
        ("startswith", ("starts", "with")),
        ("makedirs", ("make", "dirs")),
        ("getnewargs", ("get", "new", "args")),
        ("tolower", ("to", "lower")),
        ("namespace", ("name", "space")),  # not "names pace": the common words win
        ("xmldocument", ("xml", "document")),
    ],
)
def test_compounds_split_into_common_words(word: str, parts: tuple[str, ...]) -> None:
    assert compound_parts(word) == parts


@pytest.mark.parametrize(
    "word",
    [
        "append",  # a word: never "app end"
        "decode",  # never "dec ode"
        "iterator",
        "init",  # a word to the dictionary, and too short
        "spliterator",  # would need a rare part ("erat")
        "nlink",  # "n" is no part (abbreviations.ABBREVIATIONS writes it out for the model instead)
        "inits",  # only short function words ("in", "its"): no split counts
        "qzxwvk",  # no words at all
        "utf8name",  # not letters only
        "Sizeof",  # callers lower-case first
        "isok",  # shorter than five letters
    ],
)
def test_words_and_non_compounds_stay_whole(word: str) -> None:
    assert compound_parts(word) is None


def test_the_dictionary_ranks_the_tokenizers_words_first_and_keeps_rare_words_out_of_parts() -> None:
    tiers = [["zebra", "able"], ["cable", "able"], ["erat", "ode"]]
    vocab = {"[PAD]": 0, "paris": 3, "cable": 5, "able": 9, "ode": 12}
    order, parts = ranked_words(tiers, vocab)
    # The words the tokenizer keeps whole, in its order (only dictionary words: not "paris"),
    # then each tier's other words alphabetically. The largest tier's other words ("erat") come
    # last and are never parts; a word of that tier the tokenizer keeps whole ("ode") may be.
    assert order == ["cable", "able", "ode", "zebra", "erat"]
    assert parts == 4
