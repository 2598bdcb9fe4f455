"""Identifier splitting and query terms for the lexical half."""

from __future__ import annotations

from kenning.lexical import identifier_parts, name_parts, query_terms, split_identifiers


def test_camel_case_parts() -> None:
    assert identifier_parts("parseHttpHeader") == ["parse", "http", "header"]
    assert identifier_parts("getHTTPResponse") == ["get", "http", "response"]
    assert identifier_parts("HTTPServer") == ["http", "server"]
    assert identifier_parts("plain") == ["plain"]


def test_split_identifiers_only_adds_mixed_case_words() -> None:
    text = "def parseHttpHeader(raw_value, HTTPServer): return plain"
    assert split_identifiers(text) == "parse http header http server"


def test_name_parts_splits_snake_dots_and_camel() -> None:
    assert name_parts("get_netrc_auth") == ("get", "netrc", "auth")
    assert name_parts("UploadRetryPolicy.shouldRetry") == ("upload", "retry", "policy", "should", "retry")


def test_query_terms_keep_whole_identifier_and_parts() -> None:
    assert query_terms("parseHttpHeader retry") == ["parsehttpheader", "parse", "http", "header", "retry"]
    assert query_terms("  ") == []
    assert query_terms("naïve café") == ["naïve", "café"]
