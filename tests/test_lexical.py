"""Identifier splitting and query terms for the lexical half."""

from __future__ import annotations

from kenning.lexical import (
    identifier_parts,
    name_parts,
    name_words,
    query_terms,
    split_identifiers,
    with_compound_parts,
)


def test_camel_case_parts() -> None:
    assert identifier_parts("parseHttpHeader") == ["parse", "http", "header"]
    assert identifier_parts("getHTTPResponse") == ["get", "http", "response"]
    assert identifier_parts("HTTPServer") == ["http", "server"]
    assert identifier_parts("plain") == ["plain"]


def test_split_identifiers_only_adds_mixed_case_words() -> None:
    text = "def parseHttpHeader(raw_value, HTTPServer): return plain"
    assert split_identifiers(text) == "parse http header http server"


def test_split_identifiers_leaves_compounds_to_names() -> None:
    # Split in every word of a chunk, compounds moved more queries down than up outside Python.
    assert split_identifiers("pid = os.getpid(); n = unsafe.Sizeof(x)") == ""


def test_query_words_with_compound_parts() -> None:
    assert with_compound_parts(["namespace", "init"]) == {"namespace", "name", "space", "init"}


def test_name_words_split_compounds_name_parts_do_not() -> None:
    # What the model reads keeps the name as written; what search matches has its words.
    assert name_parts("Metadata.st_nlink") == ("metadata", "st", "nlink")
    assert name_parts("_formatparam") == ("formatparam",)
    assert name_words("_formatparam") == ("format", "param")
    assert name_words("unsafe.Sizeof") == ("unsafe", "size", "of")
    assert name_words("os.path.splitext") == ("os", "path", "split", "ext")
    assert name_words("Deque.append") == ("deque", "append")


def test_name_parts_splits_snake_dots_and_camel() -> None:
    assert name_parts("get_netrc_auth") == ("get", "netrc", "auth")
    assert name_parts("UploadRetryPolicy.shouldRetry") == ("upload", "retry", "policy", "should", "retry")


def test_query_terms_keep_whole_identifier_and_parts() -> None:
    assert query_terms("parseHttpHeader retry") == ["parsehttpheader", "parse", "http", "header", "retry"]
    assert query_terms("  ") == []
    assert query_terms("naïve café") == ["naïve", "café"]
