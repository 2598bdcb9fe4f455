"""Golden JSON of kenning's custom protocol, recorded from a real `kenning serve --stdio`.

Every custom request, command result and notification that docs/protocol.md defines is recorded
here from a real server on the shared test workspace and kept in tests/golden/*.json. The editor
clients check their own view of the protocol against the same files: the VS Code extension's
TypeScript types (editors/vscode/test/golden.test.ts) and the Neovim plugin's parsers
(tests/neovim/golden_spec.lua). A field added on one side and not the other fails one of them.

This test compares the *shape* of what the server sends now (keys, and the JSON types of values)
with the shape of the stored files; values such as scores may drift. To re-record after a
deliberate protocol change: ``KENNING_UPDATE_GOLDEN=1 pytest tests/lsp/test_golden.py``, then
update src/protocol.ts, the Lua plugin and docs/protocol.md in the same commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.lspclient import RawServer

from tests.conftest import FILES, write_workspace

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("KENNING_UPDATE_GOLDEN") == "1"
# Recorded URIs name this folder instead of the test's temporary directory.
WORKSPACE_URI = "file:///workspace/ws"

Json = Any


def order_book() -> str:
    """A class whose methods are long enough to be chunks of their own (symbol.containerName)."""
    lines = ["class OrderBook:", '    """Bids and asks."""', ""]
    for method in ("add_order", "cancel_order", "match_orders"):
        lines.append(f"    def {method}(self, order):")
        lines += [f"        value_{i} = order.price * {i} + len(self.book_{method})" for i in range(40)]
        lines += ["        return value_0", ""]
    return "\n".join(lines)


GOLDEN_FILES = {**FILES, "book.py": order_book()}


def normalise(value: Json, replace: dict[str, str]) -> Json:
    """The recorded value with temporary paths and URIs replaced and scores rounded."""
    if isinstance(value, dict):
        return {k: (round(v, 4) if k == "score" else normalise(v, replace)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, replace) for v in value]
    if isinstance(value, str):
        for old, new in replace.items():
            value = value.replace(old, new)
    return value


def shape(value: Json) -> Json:
    """Keys and JSON types, with the elements of a list merged into one shape."""
    if isinstance(value, dict):
        return {"object": {k: shape(v) for k, v in sorted(value.items())}}
    if isinstance(value, list):
        merged: Json = None
        for item in value:
            merged = merge(merged, shape(item))
        return {"array": merged}
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


ABSENT = "absent"  # the shape of a key an object does not have


def merge(a: Json, b: Json) -> Json:
    """One shape that admits both: an object's keys are the union, other types become a union;
    ``a`` None: nothing merged yet."""
    if a is None:
        return b
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() == {"object"}:
        keys = sorted(set(a["object"]) | set(b["object"]))
        # A key some objects lack is optional: "absent" joins its types, whichever came first.
        return {"object": {k: merge(a["object"].get(k, ABSENT), b["object"].get(k, ABSENT)) for k in keys}}
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() == {"array"}:
        return {"array": merge(a["array"], b["array"])}
    options = {json.dumps(x, sort_keys=True) for x in (a if isinstance(a, list) else [a])}
    options |= {json.dumps(x, sort_keys=True) for x in (b if isinstance(b, list) else [b])}
    as_list = sorted(options)
    return json.loads(as_list[0]) if len(as_list) == 1 else [json.loads(x) for x in as_list]


def samples_shape(samples: list[Json]) -> Json:
    merged: Json = None
    for sample in samples:
        merged = merge(merged, shape(sample))
    return merged


class Recorder:
    """Collects samples per golden file and checks (or writes) them at the end."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}

    def add(self, name: str, method: str, description: str, sample: Json) -> None:
        entry = self.files.setdefault(name, {"method": method, "description": description, "samples": []})
        entry["samples"].append(sample)

    def check(self) -> None:
        problems: list[str] = []
        for name, entry in sorted(self.files.items()):
            path = GOLDEN / f"{name}.json"
            if UPDATE:
                GOLDEN.mkdir(exist_ok=True)
                path.write_text(json.dumps(entry, indent=2, sort_keys=True) + "\n", encoding="utf-8")
                continue
            if not path.exists():
                problems.append(f"{path.name}: missing")
                continue
            stored = json.loads(path.read_text(encoding="utf-8"))
            now, then = samples_shape(entry["samples"]), samples_shape(stored["samples"])
            if now != then or stored["method"] != entry["method"]:
                problems.append(
                    f"{path.name}: the server now sends\n{json.dumps(now, indent=1)}\n"
                    f"but the golden file holds\n{json.dumps(then, indent=1)}"
                )
        stale = {p.stem for p in GOLDEN.glob("*.json")} - set(self.files)
        problems += [f"{name}.json: no longer recorded" for name in sorted(stale) if not UPDATE]
        assert not problems, (
            "the protocol changed; re-record with KENNING_UPDATE_GOLDEN=1 and update "
            "editors/vscode/src/protocol.ts, the Neovim plugin and docs/protocol.md:\n" + "\n".join(problems)
        )


def wait_status(server: RawServer, predicate: Any, timeout: float = 120.0) -> list[Json]:
    """Every kenning/indexStatus seen until one satisfies ``predicate``."""
    server.wait_notification(
        lambda n: n.get("method") == "kenning/indexStatus" and predicate(n["params"]), timeout
    )
    return [n["params"] for n in server.notifications if n.get("method") == "kenning/indexStatus"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[RawServer, Path]]:
    root = write_workspace(tmp_path / "ws", GOLDEN_FILES)
    server = RawServer(args=("--stdio",))
    try:
        yield server, root
    finally:
        assert server.close() == 0, "".join(server.stderr_lines[-5:])


def first_result(reply: dict[str, Any]) -> Json:
    assert "error" not in reply, reply
    return reply["result"]


def test_serve_accepts_stdio_and_rejects_it_with_tcp() -> None:
    # vscode-languageclient and other clients append --stdio to the command they are given.
    server = RawServer(args=("--stdio",))
    try:
        reply = server.call("initialize", {"processId": None, "capabilities": {}, "workspaceFolders": []})
        assert reply["result"]["serverInfo"]["name"] == "kenning"
    finally:
        assert server.close() == 0, "".join(server.stderr_lines[-5:])
    both = subprocess.run(
        [sys.executable, "-m", "kenning", "serve", "--stdio", "--tcp", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert both.returncode == 2 and "--tcp" in both.stderr and "Traceback" not in both.stderr


def test_golden_protocol(served: tuple[RawServer, Path], tmp_path: Path) -> None:
    server, root = served
    recorder = Recorder()
    uri = {root.resolve().as_uri(): WORKSPACE_URI, str(tmp_path.resolve()): "/tmp/test"}
    server.initialize(root)
    seen = wait_status(server, lambda s: s["state"] == "ready")
    by_state: dict[str, Json] = {}
    for status in seen:
        by_state.setdefault(status["state"], status)
    for status in by_state.values():
        recorder.add(
            "indexStatus",
            "kenning/indexStatus",
            "notification, server -> client: one sample per state seen",
            normalise(status, uri),
        )

    for query, extra in (
        ("retry failed uploads", {"limit": 20}),
        ("parseHttpHeader", {"mode": "lexical", "filters": {"languages": ["javascript"]}}),
        ("cancel an order", {"limit": 3, "filters": {"paths": ["book.py"]}}),
    ):
        result = first_result(server.call("workspace/semanticSearch", {"query": query, **extra}))
        assert result["results"], query
        recorder.add(
            "semanticSearch",
            "workspace/semanticSearch",
            "request result: SemanticSearchResult",
            normalise(result, uri),
        )

    similar = first_result(
        server.call(
            "kenning/similar",
            {
                "textDocument": {"uri": (root / "geometry.py").resolve().as_uri()},
                "range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}},
                "limit": 5,
            },
        )
    )
    assert similar["results"]
    recorder.add(
        "similar", "kenning/similar", "request result: SemanticSearchResult", normalise(similar, uri)
    )

    status = first_result(server.call("workspace/executeCommand", {"command": "kenning.status"}))
    assert status and status[0]["state"] == "ready"
    recorder.add(
        "status",
        "workspace/executeCommand kenning.status",
        "command result: IndexStatusReport[]",
        normalise(status, uri),
    )
    reindex = first_result(server.call("workspace/executeCommand", {"command": "kenning.reindex"}))
    recorder.add("reindex", "workspace/executeCommand kenning.reindex", "command result: null", reindex)

    bad = server.call("workspace/semanticSearch", {"query": "x", "limit": 0})
    assert bad["error"]["code"] == -32602
    recorder.add(
        "invalidParams",
        "workspace/semanticSearch",
        "error response for a bad parameter (-32602): JSON-RPC ResponseError",
        bad["error"],
    )

    # A model that cannot load: the folder is ready with a message, and search is lexical only.
    root = write_workspace(tmp_path / "broken" / "ws")
    uri = {root.resolve().as_uri(): WORKSPACE_URI, str(tmp_path.resolve()): "/tmp/test"}
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    (broken / "tokenizer.json").write_text("{}")
    (broken / "kenning-model.json").write_text('{"id": "broken"}')
    other = RawServer(args=("--stdio",))
    try:
        other.initialize(root, {"model": str(broken)})
        statuses = wait_status(other, lambda s: s["state"] == "ready")
        with_message = [s for s in statuses if "model" in s.get("message", "")]
        assert with_message, statuses
        recorder.add(
            "indexStatus",
            "kenning/indexStatus",
            "notification, server -> client: one sample per state seen",
            normalise(with_message[-1], uri),
        )
        deadline = time.monotonic() + 30
        lexical = first_result(other.call("workspace/semanticSearch", {"query": "parseHttpHeader"}))
        while not lexical["results"] and time.monotonic() < deadline:
            time.sleep(0.1)
            lexical = first_result(other.call("workspace/semanticSearch", {"query": "parseHttpHeader"}))
        assert lexical["index"].get("lexicalOnly") is True
        recorder.add(
            "semanticSearch",
            "workspace/semanticSearch",
            "request result: SemanticSearchResult",
            normalise(lexical, uri),
        )
    finally:
        assert other.close() == 0, "".join(other.stderr_lines[-5:])

    # Through an embedding endpoint, the status names the host that receives the code.
    from tests.test_endpoint import EmbedServer

    endpoint = EmbedServer("--workers", "1")
    through = RawServer(args=("--stdio",))
    try:
        shutil.rmtree(root / ".kenning", ignore_errors=True)
        through.initialize(root, {"embedding": {"url": endpoint.url, "model": "minilm", "retries": 0}})
        statuses = wait_status(through, lambda s: s["state"] == "ready")
        receiver = {**uri, f"http://127.0.0.1:{endpoint.port}": "http://127.0.0.1:8080"}
        recorder.add(
            "indexStatus",
            "kenning/indexStatus",
            "notification, server -> client: one sample per state seen",
            normalise(statuses[-1], receiver),
        )
    finally:
        assert through.close() == 0, "".join(through.stderr_lines[-5:])
        endpoint.stop()

    recorder.check()


def test_a_shape_does_not_depend_on_the_order_of_results() -> None:
    # Find Similar ranked a method before a top-level function on one machine and after it on
    # another: the same protocol, so the same shape.
    method = {"symbol": {"name": "add", "kind": "method", "containerName": "Book"}}
    function = {"symbol": {"name": "distance", "kind": "function"}}
    assert shape([method, function]) == shape([function, method])
    assert shape([method]) != shape([function, method])  # a key that became optional shows
