"""Fuzzy symbol matching: the ranking rules, and the index agreeing with the one-pair scorer."""

from __future__ import annotations

import importlib.util
import random
import statistics
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kenning import fuzzy
from kenning.fuzzy import FuzzyIndex, fuzzy_score


def ranked(query: str, names: list[str], limit: int = 100) -> list[str]:
    return [names[i] for i, _ in FuzzyIndex(names).search(query, limit)]


def klass(query: str, name: str) -> int | None:
    words = fuzzy._split_query(query)
    result = fuzzy._rank(words, name)
    return None if result is None else result[0]


# -- the classes ------------------------------------------------------------------------------


def test_classes_in_order() -> None:
    names = ["reentry", "xretryx", "UploadRetryPolicy", "retry_count", "retry", "rety"]
    assert ranked("retry", names) == ["retry", "retry_count", "UploadRetryPolicy", "xretryx", "reentry"]
    assert klass("retry", "retry") == fuzzy.EXACT
    assert klass("retry", "retry_count") == fuzzy.PREFIX
    assert klass("retry", "UploadRetryPolicy") == fuzzy.WORD
    assert klass("retry", "xretryx") == fuzzy.SUBSTRING
    assert klass("retry", "reentry") == fuzzy.SUBSEQUENCE
    assert klass("retry", "rety") is None
    in_order = ["retry", "retry_count", "UploadRetryPolicy", "xretryx", "reentry"]
    scores = [fuzzy_score("retry", n) for n in in_order]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert len(set(scores)) == len(scores)


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("urp", "UploadRetryPolicy"),
        ("retry pol", "UploadRetryPolicy"),
        ("upload policy", "UploadRetryPolicy"),
        ("retpol", "UploadRetryPolicy"),
        ("gna", "get_netrc_auth"),
        ("get auth", "get_netrc_auth"),
        ("gna", "getNetrcAuth"),
        ("hs", "HTTPServer"),
        ("hse", "HTTPServer"),
        ("xhr", "XMLHttpRequest"),
        ("u8d", "utf8Decode"),
        ("init", "__init__"),
        ("ab", "a_a_b"),  # a later segment, not the first one, can take the next piece
        ("abc", "ab_bcd"),  # "a" + "bc": the greedy "ab" + "c" would fail
    ],
)
def test_word_boundary_matches(query: str, name: str) -> None:
    assert klass(query, name) == fuzzy.WORD


@pytest.mark.parametrize(
    ("query", "name", "expected"),
    [
        ("https", "HTTPServer", fuzzy.PREFIX),  # the acronym split does not stop a plain prefix
        ("ts", "HTTPServer", fuzzy.SUBSEQUENCE),  # "T" is inside "HTTP", not a word start
        ("retry pol", "retrypolicy", fuzzy.SUBSEQUENCE),  # "pol" must begin a word
        ("etry", "UploadRetryPolicy", fuzzy.SUBSTRING),
        ("urp", "upload_rpc", fuzzy.WORD),  # "u" + "rp"
        ("urp", "ultraprep", fuzzy.SUBSEQUENCE),
        ("get_n", "get_netrc_auth", fuzzy.PREFIX),
        ("netrc_a", "get_netrc_auth", fuzzy.WORD),  # "netrc_" is how the segment is written
        ("rp", "UploadRetryPolicy", fuzzy.WORD),  # need not start at the first word
    ],
)
def test_class_edges(query: str, name: str, expected: int) -> None:
    assert klass(query, name) == expected


def test_words_must_come_in_order() -> None:
    assert fuzzy_score("pol retry", "UploadRetryPolicy") is None
    assert ranked("pol retry", ["UploadRetryPolicy", "PolicyRetry"]) == ["PolicyRetry"]


def test_whitespace_in_query_is_normalised() -> None:
    name = "UploadRetryPolicy"
    assert fuzzy_score("  retry \t pol ", name) == fuzzy_score("retry pol", name)


def test_case_only_breaks_ties() -> None:
    # Same class and length: the case-exact one first.
    assert ranked("get", ["Get", "get"]) == ["get", "Get"]
    assert ranked("Get", ["get", "Get"]) == ["Get", "get"]
    assert ranked("gn", ["GetName", "get_name"]) == ["get_name", "GetName"]  # case beats length
    assert ranked("getn", ["GetName", "getname"]) == ["getname", "GetName"]
    # A better class wins whatever the case.
    assert ranked("Get", ["GetterFactory", "get"]) == ["get", "GetterFactory"]
    assert ranked("GN", ["get_name", "ZGZN"]) == ["get_name", "ZGZN"]  # WORD beats SUBSEQUENCE


def test_shorter_then_alphabetical() -> None:
    assert ranked("ab", ["abcd", "abd", "abc"]) == ["abc", "abd", "abcd"]
    assert ranked("x", ["xb", "xa", "x_long", "xc"]) == ["xa", "xb", "xc", "x_long"]


def test_no_match_is_excluded() -> None:
    assert ranked("zz", ["alpha", "beta", "zeta"]) == []
    assert fuzzy_score("zz", "zeta") is None


def test_unicode_names() -> None:
    names = ["größeBerechnen", "ÄpfelBirne", "日本語テキスト", "données_utilisateur", "rocket🚀launch", "ΑΣ"]
    assert klass("gb", "größeBerechnen") == fuzzy.WORD
    assert klass("äb", "ÄpfelBirne") == fuzzy.WORD
    assert klass("日本", "日本語テキスト") == fuzzy.PREFIX
    assert klass("du", "données_utilisateur") == fuzzy.WORD
    assert klass("rl", "rocket🚀launch") == fuzzy.WORD  # an astral character separates words
    # "ΑΣ".lower() ends in a final sigma, so only the as-written comparison finds "Σ".
    assert klass("Σ", "ΑΣ") == fuzzy.SUBSTRING
    assert ranked("ÄB", names) == ["ÄpfelBirne"]
    assert ranked("rl", names) == ["rocket🚀launch"]
    assert ranked("Σ", names) == ["ΑΣ"]


def test_empty_query_lists_names_shortest_first() -> None:
    names = ["ccc", "a", "bb", "ab"]
    index = FuzzyIndex(names)
    for query in ("", "   ", "\t\n"):
        assert index.search(query, 3) == [(1, 0.0), (3, 0.0), (2, 0.0)]
    assert fuzzy_score("", "anything") == 0.0


def test_limit_and_duplicates() -> None:
    names = ["run", "run", "runner", "rerun", "xyz"]
    index = FuzzyIndex(names)
    assert len(index) == 5
    assert index.search("run", 0) == []
    assert [i for i, _ in index.search("run", 2)] == [0, 1]
    assert [i for i, _ in index.search("run", 100)] == [0, 1, 2, 3]
    assert FuzzyIndex([]).search("run", 10) == []
    assert len(FuzzyIndex([])) == 0


def test_a_name_defined_many_times_expands_in_tie_order() -> None:
    # Equal names share one line of the index; each still comes back, in the caller's tie
    # order, and the limit can cut a group in the middle.
    names = ["get", "getter", "get", "Get", "get", "xget"]
    index = FuzzyIndex(names, ties=[3, 0, 1, 0, 2, 0])
    assert len(index) == 6
    assert [i for i, _ in index.search("get", 10)] == [2, 4, 0, 3, 1, 5]
    assert [i for i, _ in index.search("get", 2)] == [2, 4]
    assert [i for i, _ in index.search("", 4)] == [3, 2, 4, 0]  # display order: "Get" < "get"
    scores = dict(index.search("get", 10))
    assert scores[2] == scores[4] == scores[0] > scores[3] > scores[1] > scores[5]


def test_line_breaks_and_marks_inside_names() -> None:
    names = ["two\nlines", "a\x01b", "twolines"]
    index = FuzzyIndex(names)
    assert [names[i] for i, _ in index.search("two lines", 10)] == ["two\nlines", "twolines"]
    assert [names[i] for i, _ in index.search("ab", 10)] == ["a\x01b"]


def test_pathological_name_is_fast() -> None:
    # A backtracking regex would take exponential time here; the DP does not.
    name = "a_" * 60 + "b"
    names = [name] * 50 + ["ab"]
    index = FuzzyIndex(names)
    started = time.perf_counter()
    assert fuzzy_score("a" * 30 + "c", name) is None
    index.search("a" * 30 + "c", 10)
    index.search("aaaaaaaaab", 10)
    assert time.perf_counter() - started < 1.0


# -- the index agrees with the one-pair definition ---------------------------------------------

_PARTS = ["get", "Set", "http", "HTTP", "Server", "retry", "Policy", "url", "x", "a", "b", "2"]
_PARTS += ["ΑΣ", "ä", "🚀"]
_identifier = st.lists(st.sampled_from(_PARTS), min_size=1, max_size=4).flatmap(
    lambda parts: st.sampled_from(["", "_", "-", "."]).map(lambda sep: sep.join(parts))
)
# Names of every shape, minus the two characters the index reserves (tested separately).
_free_text = st.text(st.characters(exclude_characters="\n\x01"), max_size=10)
_names = st.lists(st.one_of(_identifier, _free_text), min_size=1, max_size=40)


@st.composite
def _names_and_query(draw: st.DrawFn) -> tuple[list[str], str]:
    names = draw(_names)
    source = draw(st.sampled_from(names))
    how = draw(st.sampled_from(["slice", "letters", "spaced", "random", "case"]))
    if how == "slice" and source:
        i = draw(st.integers(0, len(source) - 1))
        query = source[i : i + draw(st.integers(1, 6))]
    elif how in ("letters", "spaced") and source:
        picks = sorted(draw(st.sets(st.integers(0, len(source) - 1), min_size=1, max_size=5)))
        query = ("" if how == "letters" else " ").join(source[i] for i in picks)
    elif how == "case":
        query = draw(st.sampled_from(["GET", "get", "Get", "hs", "HS", "urp", "retry pol", "σ", "Σ"]))
    else:
        query = draw(st.text(st.characters(exclude_characters="\n\x01"), min_size=1, max_size=4))
    return names, query


def _subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


def _brute_force(query: str, names: list[str]) -> list[tuple[int, float]]:
    scored = [(s, i) for i, name in enumerate(names) if (s := fuzzy_score(query, name)) is not None]
    # Best score first; ties (same class, case and length) alphabetically, then by position. The
    # empty query scores everything 0.0 and lists the shortest names first.
    scored.sort(key=lambda si: (-si[0], len(names[si[1]]), names[si[1]], si[1]))
    return [(i, s) for s, i in scored]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_names_and_query(), st.integers(1, 50))
@example((["UploadRetryPolicy", "retrypolicy", "PolicyRetry"], "retry pol"), 10)
@example((["ΑΣ", "ας", "σ"], "Σ"), 10)
@example((["İstanbul", "istanbul", "K"], "i"), 10)
def test_index_matches_definition(case: tuple[list[str], str], limit: int) -> None:
    names, query = case
    expected = _brute_force(query, names)[:limit]
    got = FuzzyIndex(names).search(query, limit)
    assert got == expected
    if not query.split():
        return
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    letters = "".join(query.split()).casefold()
    for i, _ in got:
        assert _subsequence(letters, names[i].casefold()), (query, names[i])


@pytest.mark.parametrize(
    "tuning",
    [
        {"DIRECT_CHECKS": 0, "DIRECT_WORD_CHECKS": 0},  # always the regex scans
        {"SUBSTRING_SUBSET": 1.0, "SUBSEQUENCE_SUBSET": 1.0},  # always copied-out subsets
        {"SUBSTRING_SUBSET": 0.0, "SUBSEQUENCE_SUBSET": 0.0},  # never
    ],
)
def test_every_search_path_agrees(monkeypatch: pytest.MonkeyPatch, tuning: dict[str, float]) -> None:
    # The real tuning picks one path per query from its selectivity; force each in turn.
    for attr, value in tuning.items():
        monkeypatch.setattr(fuzzy._Search, attr, value)
    rng = random.Random(5)
    parts = ["get", "Set", "http", "HTTP", "Server", "retry", "Policy", "url", "x", "a", "2", "ä"]
    names = ["_".join(rng.sample(parts, rng.randint(1, 3))) for _ in range(300)]
    names += ["".join(rng.sample(parts, rng.randint(1, 3))) for _ in range(300)]
    index = FuzzyIndex(names)
    for query in ["g", "get", "GET", "gs", "hs", "http serv", "retry pol", "ur", "x2", "ä", "tp", "zzz"]:
        assert index.search(query, 40) == _brute_force(query, names)[:40], query


# -- speed ------------------------------------------------------------------------------------


def _synthetic_names(count: int) -> list[str]:
    rng = random.Random(11)
    words = [
        "get",
        "set",
        "load",
        "save",
        "parse",
        "build",
        "http",
        "url",
        "request",
        "response",
        "client",
        "server",
        "retry",
        "policy",
        "upload",
        "token",
        "cache",
        "index",
        "query",
        "node",
        "tree",
        "walk",
        "file",
        "path",
        "name",
        "value",
        "error",
        "handler",
        "config",
        "stream",
    ]
    out = []
    for _ in range(count):
        picked = rng.sample(words, rng.randint(1, 4))
        if rng.random() < 0.5:
            out.append("_".join(picked))
        else:
            out.append("".join(w.capitalize() for w in picked))
    return out


def test_speed_at_100k_names() -> None:
    # A guard against accidental per-name Python loops, with wide margins for a busy machine;
    # bench/fuzzy_latency.py measures the real numbers.
    names = _synthetic_names(100_000)
    fuzzy_score("warm", "up")
    started = time.perf_counter()
    index = FuzzyIndex(names)
    build = time.perf_counter() - started
    assert build < 2.0
    timings = []
    for query in ["g", "ge", "get", "urp", "retry pol", "gnv", "cfgh", "xyz", "ParseTree", "eee", "t_p"]:
        started = time.perf_counter()
        index.search(query, 200)
        timings.append(time.perf_counter() - started)
    assert statistics.median(timings) < 0.05


def test_bench_script_imports_without_running() -> None:
    path = Path(__file__).resolve().parents[1] / "bench" / "fuzzy_latency.py"
    spec = importlib.util.spec_from_file_location("fuzzy_latency_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.main)
    queries = module.make_queries(["UploadRetryPolicy", "get_netrc_auth"], 20)
    assert len(queries) == 20 and all(q.strip() for _, q in queries)
