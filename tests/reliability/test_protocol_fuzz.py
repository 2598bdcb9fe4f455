"""Cases 16–21: generated params, hostile strings and broken framing against one live server.

Each test starts one server (a couple of seconds) and sends it every generated case in turn.
The property: every request gets exactly one reply — a result of the documented shape or a
-32602 naming the problem, never an internal error, never silence — the process stays alive,
no ``window/showMessage`` pops up, and a well-formed request afterwards succeeds.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.lsp.framing import MAX_HEADER_LINE, MAX_MESSAGE_BYTES
from tests.conftest import FILES, write_workspace
from tests.reliability.client import Client
from tests.reliability.conftest import StartServer

EXAMPLES = 300
SLOW_EXAMPLES = 2000
FRAMING_EXAMPLES = 200
SLOW_FRAMING_EXAMPLES = 1000
REPLY_TIMEOUT = 30.0

# Strings that broke something somewhere: lone surrogates (legal escaped in JSON, illegal in
# UTF-8), emoji and other astral characters, right-to-left text, CJK, combining marks, NUL,
# FTS5 query syntax, glob syntax, and strings at and over the 1,000-character query limit.
HOSTILE = [
    "",
    "   ",
    "\t\n",
    "\ud800",
    "\udfff",
    "a\ud800b",
    "\udc80\ud800",
    "\ud83d\ude00",
    "😀🚀",
    "שלום עולם",
    "مرحبا بالعالم",
    "日本語のテキスト",
    "e\u0301\u0302\u0303",
    "\u202etxt.exe",
    "\x00",
    "a\x00b",
    "\uffff",
    "\ufeff",
    "\u2028",
    "NEAR(a b)",
    "a OR b",
    'x"y',
    "col:val",
    "^start",
    "(((",
    "AND",
    "NOT",
    "-x",
    "*",
    "**/[",
    "[!",
    "\\",
    "%_",
    "..",
    "../..",
    "a" * 1000,
    "a" * 1001,
    "word " * 200,
]
HUGE = ["q" * 1_000_000, "ß" * 300_000]


def _text(max_size: int = 24) -> st.SearchStrategy[str]:
    surrogate = st.integers(0xD800, 0xDFFF).map(chr)
    return st.one_of(
        st.text(max_size=max_size),
        st.text(st.one_of(st.characters(), surrogate), max_size=max_size),
        st.sampled_from(HOSTILE),
    )


LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _text(),
)
JSON = st.recursive(
    LEAF,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text(8), kids, max_size=3),
    max_leaves=8,
)
INTS = st.one_of(
    st.integers(-3, 260), st.sampled_from([2**31, 2**63, -(2**63), 10**30, 1.5, "7", True]), JSON
)
QUERY = st.one_of(
    _text(40), st.sampled_from(HUGE), st.sampled_from(["helper", "circle_area", "retry upload"]), JSON
)


def _search_params() -> st.SearchStrategy[Any]:
    names = st.lists(st.one_of(st.sampled_from(["python", "go", "javascript"]), _text()), max_size=3)
    filters = st.one_of(
        JSON,
        st.fixed_dictionaries(
            {},
            optional={
                "paths": st.one_of(names, JSON),
                "languages": st.one_of(names, JSON),
                "extensions": st.one_of(names, JSON),
            },
        ),
    )
    return st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"query": QUERY},
            optional={
                "limit": INTS,
                "mode": st.one_of(st.sampled_from(["hybrid", "semantic", "lexical"]), JSON),
                "filters": filters,
                "workDoneToken": JSON,
                "somethingElse": JSON,
            },
        ),
    )


def _similar_params(root: Path) -> st.SearchStrategy[Any]:
    ws = root.resolve().as_uri()
    uris = st.one_of(
        st.sampled_from(
            [
                f"{ws}/geometry.py",
                f"{ws}/uploads.py",
                f"{ws}/web/headers.js",
                f"{ws}/missing.py",
                ws,
                f"{ws}/.kenning/kenning.sqlite3",
                "file:///etc/passwd",
                f"{ws}/../../etc/passwd",
                f"{ws}/..%2F..%2F..%2Fetc%2Fpasswd",
                f"{ws}/%2e%2e/%2e%2e/etc/passwd",
                "untitled:Untitled-1",
                "http://example.com/a.py",
                "file://otherhost/a.py",
                f"{ws}/geometry.py#L3",
                "file:///proc/self/environ",
            ]
        ),
        _text(),
        JSON,
    )
    position = st.one_of(JSON, st.fixed_dictionaries({"line": INTS, "character": INTS}))
    return st.one_of(
        JSON,
        st.fixed_dictionaries(
            {
                "textDocument": st.one_of(JSON, st.fixed_dictionaries({"uri": uris})),
                "range": st.one_of(JSON, st.fixed_dictionaries({"start": position, "end": position})),
            },
            optional={"limit": INTS, "extra": JSON},
        ),
    )


def _symbol_params() -> st.SearchStrategy[Any]:
    return st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"query": QUERY}, optional={"workDoneToken": JSON, "partialResultToken": JSON, "extra": JSON}
        ),
    )


def _check_hits(result: Any, root: Path) -> None:
    assert isinstance(result, dict) and isinstance(result["results"], list), result
    inside = root.resolve().as_uri() + "/"
    for hit in result["results"]:
        assert hit["uri"].startswith(inside), hit["uri"]  # never anything outside
        assert len(hit["preview"]) <= 300


def _assert_healthy(client: Client, root: Path) -> None:
    time.sleep(0.3)  # a late duplicate reply would arrive now
    assert client.alive()
    # The test's own requests have integer ids; junk frames carry others.
    twice = {
        k: n
        for k, n in client.reply_counts.items()
        if n != 1 and isinstance(json.loads(k), int) and not isinstance(json.loads(k), bool)
    }
    assert not twice, f"requests answered more than once: {twice}"
    assert not client.protocol_errors, client.protocol_errors[:3]
    assert client.show_messages() == [], client.show_messages()[:3]
    hits = client.search("circle_area", mode="lexical")["results"]
    assert hits and hits[0]["uri"].endswith("/geometry.py")


def test_requests_with_generated_params(
    tmp_path: Path, tiny_model: Path, start_server: StartServer, slow: bool
) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    counts = {"requests": 0, "errors": 0}
    cases = st.one_of(
        st.tuples(st.just("workspace/semanticSearch"), _search_params()),
        st.tuples(st.just("kenning/similar"), _similar_params(root)),
        st.tuples(st.just("workspace/symbol"), _symbol_params()),
    )

    @settings(
        max_examples=SLOW_EXAMPLES if slow else EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases, omit_params=st.booleans())
    def one_request(case: tuple[str, Any], omit_params: bool) -> None:
        method, params = case
        started = time.monotonic()
        msg_id = client.request(method, params, send_params=not (omit_params and params is None))
        reply = client.wait_response(msg_id, REPLY_TIMEOUT)
        counts["requests"] += 1
        if "error" in reply:
            counts["errors"] += 1
            # Bad params are the client's fault and say so; -32603 would be a kenning bug.
            assert reply["error"]["code"] == -32602, (method, params, reply)
            assert reply["error"]["message"]
        elif method == "workspace/symbol":
            assert isinstance(reply["result"], list), reply
        else:
            _check_hits(reply["result"], root)
        assert time.monotonic() - started < 10, f"{method} took {time.monotonic() - started:.1f}s"

    one_request()
    _assert_healthy(client, root)
    print(f"\nparams fuzz: {counts}", file=sys.stderr)


# -- framing ---------------------------------------------------------------------------------------

_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")


class ReaderModel:
    """pygls' read loop (``pygls.io_.run_async``) with kenning's bounded reader, as a state
    machine over the bytes sent, so a test knows exactly which bytes bring the stream back in
    step after any junk."""

    def __init__(self) -> None:
        self.partial = b""
        self.content_length = 0
        self.body_left: int | None = None

    def feed(self, data: bytes) -> None:
        i = 0
        while i < len(data):
            if self.body_left is not None:
                take = min(self.body_left, len(data) - i)
                i += take
                self.body_left -= take
                if self.body_left == 0:
                    self.body_left, self.content_length = None, 0
                continue
            room = MAX_HEADER_LINE - len(self.partial)
            end = data.find(b"\n", i, i + room)
            if end == -1:
                piece = data[i : i + room]
                i += len(piece)
                self.partial += piece
                if len(self.partial) < MAX_HEADER_LINE:
                    break
                line, self.partial = self.partial, b""
            else:
                line, self.partial = self.partial + data[i : end + 1], b""
                i = end + 1
            if not self.content_length and (m := _CONTENT_LENGTH.fullmatch(line)):
                self.content_length = int(m.group(1))
            if self.content_length and not line.strip():
                self.body_left = self.content_length

    def resync(self) -> bytes:
        """Bytes after which the reader waits for a fresh header (the stream is in step)."""
        if self.body_left is not None:
            return b" " * self.body_left
        out = b"\n" if self.partial else b""
        if self.content_length:
            out += b"\r\n" + b" " * self.content_length
        return out


_REQUEST = {"jsonrpc": "2.0", "id": "junk", "method": "workspace/symbol", "params": {"query": "x"}}


def _bodies() -> st.SearchStrategy[bytes]:
    dumps = st.builds(lambda v: json.dumps(v).encode(), JSON)
    return st.one_of(
        st.binary(max_size=300),
        st.text(max_size=200).map(lambda t: t.encode("utf-8")),
        dumps,
        st.just(json.dumps([_REQUEST, _REQUEST]).encode()),  # a batch: JSON-RPC, not LSP
        st.just(b"[" * 50_000),  # nesting deeper than the JSON parser's recursion limit
        st.just(json.dumps({**_REQUEST, "jsonrpc": "1.0"}).encode()),
        st.just(json.dumps({k: v for k, v in _REQUEST.items() if k != "method"}).encode()),
        st.builds(
            lambda i: json.dumps({**_REQUEST, "id": i}).encode(),
            st.one_of(
                st.none(),
                st.floats(allow_nan=False),
                st.booleans(),
                st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=3), st.integers()),
            ),
        ),
        st.just(b'{"jsonrpc": "2.0", "method": "exit"'),  # cut short
    )


@st.composite
def _frames(draw: st.DrawFn) -> bytes:
    body = draw(_bodies())
    kind = draw(
        st.sampled_from(
            [
                "exact",
                "delta",
                "no-header",
                "lower-case",
                "lf-only",
                "no-space",
                "not-a-number",
                "negative",
                "twice",
                "junk-line-first",
                "no-blank-line",
                "content-type-only",
                "zero",
            ]
        )
    )
    n = len(body)
    if kind == "exact":
        head = b"Content-Length: %d\r\n\r\n" % n
    elif kind == "delta":
        head = b"Content-Length: %d\r\n\r\n" % max(0, n + draw(st.integers(-20, 20)))
    elif kind == "no-header":
        head = b""
    elif kind == "lower-case":
        head = b"content-length: %d\r\n\r\n" % n
    elif kind == "lf-only":
        head = b"Content-Length: %d\n\n" % n
    elif kind == "no-space":
        head = b"Content-Length:%d\r\n\r\n" % n
    elif kind == "not-a-number":
        head = (
            b"Content-Length: " + draw(st.sampled_from([b"abc", b"1e3", b"0x10", b" 5", b""])) + b"\r\n\r\n"
        )
    elif kind == "negative":
        head = b"Content-Length: -%d\r\n\r\n" % n
    elif kind == "twice":
        head = b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n + 5, n)
    elif kind == "junk-line-first":
        head = draw(st.binary(max_size=100)).replace(b"\n", b"") + b"\r\nContent-Length: %d\r\n\r\n" % n
    elif kind == "no-blank-line":
        head = b"Content-Length: %d\r\n" % n
    elif kind == "content-type-only":
        head = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    else:
        head = b"Content-Length: 0\r\n\r\n"
    return head + body


def test_malformed_framing(tmp_path: Path, tiny_model: Path, start_server: StartServer, slow: bool) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    client = start_server(root, {"model": str(tiny_model), "indexOnStartup": True})
    client.wait_state("ready")
    model = ReaderModel()
    counts = {"frames": 0, "probes": 0}

    @settings(
        max_examples=SLOW_FRAMING_EXAMPLES if slow else FRAMING_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(frame=_frames())
    def one_frame(frame: bytes) -> None:
        client.send_bytes(frame)
        model.feed(frame)
        fix = model.resync()
        client.send_bytes(fix)
        model.feed(fix)
        assert model.body_left is None and not model.partial and not model.content_length
        counts["frames"] += 1
        reply = client.call("workspace/symbol", {"query": "circle"}, REPLY_TIMEOUT)
        counts["probes"] += 1
        assert any(s["name"] == "circle_area" for s in reply["result"]), reply

    one_frame()
    _assert_healthy(client, root)
    print(f"\nframing fuzz: {counts}", file=sys.stderr)


# -- the message-size limit -------------------------------------------------------------------------


def _peak_rss_kib(client: Client) -> int:
    return int(client.status_line("VmHWM").split()[0])


def test_oversized_message_is_refused_and_the_stream_stays_in_step(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    peak = _peak_rss_kib(client)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 4242, "method": "workspace/semanticSearch", "params": {"query": "circle"}}
    ).encode()
    size = MAX_MESSAGE_BYTES + 1
    client.send_bytes(b"Content-Length: %d\r\n\r\n" % size + body + b" " * (size - len(body)))
    reply = client.wait_response(4242)
    assert "error" in reply, f"a {size}-byte message was read and answered: {reply}"
    assert reply["error"]["code"] == -32600
    assert str(MAX_MESSAGE_BYTES) in reply["error"]["message"]
    # A header line that never ends is read in pieces, not held whole.
    client.send_bytes(b"X" * (32 * 1024 * 1024) + b"\r\n")
    grew_mib = (_peak_rss_kib(client) - peak) / 1024
    assert grew_mib < 16, f"peak RSS grew {grew_mib:.0f} MiB"
    assert any("refused a message of" in line for line in client.log_lines())
    # A 1 MB query is under the message limit and over the query limit: refused, quickly.
    started = time.monotonic()
    big = client.call("workspace/semanticSearch", {"query": "q" * 1_000_000})
    assert big["error"]["code"] == -32602 and "1000000 characters" in big["error"]["message"]
    assert time.monotonic() - started < 5
    _assert_healthy(client, root)
    assert client.close() == 0


def test_declared_length_never_sent_then_eof_exits_cleanly(
    tmp_path: Path, tiny_model: Path, start_server: StartServer
) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    client = start_server(root, {"model": str(tiny_model), "indexOnStartup": False})
    client.send_bytes(b"Content-Length: 999999999999999\r\n\r\n{}")
    time.sleep(0.5)
    assert client.alive()  # waiting for the rest, holding at most one block
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert client.proc.wait(timeout=20) == 0


@pytest.mark.parametrize("size", [MAX_MESSAGE_BYTES // 16])
def test_large_message_under_the_limit_is_read(
    tmp_path: Path, tiny_model: Path, start_server: StartServer, size: int
) -> None:
    root = write_workspace(tmp_path / "ws", FILES)
    client = start_server(root, {"model": str(tiny_model)})
    client.wait_state("ready")
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "workspace/semanticSearch",
            "params": {"query": "circle_area", "mode": "lexical"},
        }
    ).encode()
    client.send_bytes(b"Content-Length: %d\r\n\r\n" % size + body + b" " * (size - len(body)))
    assert client.wait_response(9)["result"]["results"][0]["uri"].endswith("/geometry.py")
