"""The tools as an agent sees them: the SDK's real client over stdio against ``kenning mcp``."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest

from tests.chunking_helpers import notebook_with_an_image
from tests.mcp.conftest import mcp_session, write_many

TOOLS = {"search_code", "find_symbol", "find_similar", "index_status", "read_span"}


async def test_tools_are_listed_with_valid_precise_schemas(workspace: Path) -> None:
    async with mcp_session(workspace) as s:
        listed = (await s.client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        for tool in listed:
            schema = tool.input_schema
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object"
            assert len(tool.description or "") > 150, tool.name  # written for a model
            assert tool.annotations is not None and tool.annotations.read_only_hint
            for name, prop in schema.get("properties", {}).items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        by_name = {t.name: t.input_schema for t in listed}
        search = by_name["search_code"]
        assert search["required"] == ["query"]
        assert search["properties"]["limit"]["maximum"] == 50
        assert search["properties"]["mode"]["enum"] == ["hybrid", "semantic", "lexical"]
        assert "python" in search["properties"]["languages"]["items"]["enum"]
        assert set(by_name["find_similar"]["required"]) == {"path", "start_line", "end_line"}
        # A valid call validates against the published schema; a bad one does not.
        jsonschema.validate({"query": "retry", "limit": 5, "languages": ["python"]}, search)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"query": "retry", "limit": 500}, search)


async def test_every_tool_answers_on_a_real_workspace(workspace: Path) -> None:
    async with mcp_session(workspace) as s:
        status = await s.wait_embedded()
        (root,) = status["roots"]
        assert root["role"] == "writer" and root["files"] == 5 and root["embedded"] == root["chunks"]

        # The expected definition ranks first for descriptive queries (embeddings ready).
        for query, path, symbol in [
            ("how long to wait before sending a failed upload again", "uploads.py", "UploadRetryPolicy"),
            ("connect to the SQL database and check the connection", "server/db.go", "OpenDatabase"),
            ("area of a circle from its radius", "geometry.py", "circle_area"),
            ("turn a raw header block into a map of names to values", "web/headers.js", "parseHttpHeader"),
        ]:
            data = await s.json("search_code", {"query": query})
            top = data["results"][0]
            assert (top["path"], top["symbol"]) == (path, symbol), (query, data["results"][:3])
            assert top["dense_rank"] is not None  # the why: ranks in both lists
            assert not data["lexical_only"]

        text = await s.ok("search_code", {"query": "retry failed uploads", "limit": 3})
        first = text.splitlines()[1]
        assert re.match(r"^uploads\.py:\d+-\d+ +\w+ \w+ +\((dense #\d+)?(, )?(lexical #\d+)?\)$", first), (
            first
        )

        filtered = await s.json("search_code", {"query": "database", "languages": ["go"]})
        assert {r["path"] for r in filtered["results"]} == {"server/db.go"}
        globbed = await s.json("search_code", {"query": "header", "paths": ["web/**"], "mode": "lexical"})
        assert globbed["results"] and all(r["path"].startswith("web/") for r in globbed["results"])

        symbols = await s.ok("find_symbol", {"query": "urp"})
        assert symbols.splitlines()[1] == "class UploadRetryPolicy  uploads.py:7-18"

        similar = await s.json("find_similar", {"path": "uploads.py", "start_line": 7, "end_line": 18})
        assert similar["results"]
        overlap = [
            r
            for r in similar["results"]
            if r["path"] == "uploads.py" and r["start_line"] <= 18 and r["end_line"] >= 7
        ]
        assert not overlap, overlap  # the span itself never comes back

        span = await s.ok("read_span", {"path": "uploads.py", "start_line": 7, "end_line": 9})
        assert span.splitlines() == [
            "uploads.py:7-9 (28 lines in the file)",
            "7  class UploadRetryPolicy:",
            '8      """How often and how long to wait before sending a failed upload again."""',
            "9  ",
        ]
        text = await s.ok("index_status", {})
        assert text.startswith(f"{workspace}: ready (writer); 5 files")


async def test_the_output_budget_is_kept_and_says_what_it_left_out(tmp_path: Path) -> None:
    ws = tmp_path / "many"
    ws.mkdir()
    for i in range(40):
        (ws / f"mod{i}.py").write_text(
            f'def handler_{i}(request):\n    """Handle request number {i}."""\n'
            + "".join(f"    value_{j} = request.get('field_{j}')\n" for j in range(12))
        )
    async with mcp_session(ws) as s:
        full = await s.ok("search_code", {"query": "handle request", "limit": 50, "mode": "lexical"})
        small = await s.ok(
            "search_code", {"query": "handle request", "limit": 50, "mode": "lexical", "max_chars": 500}
        )
        assert len(small) <= 500 < len(full)
        assert re.search(r"\((\d+) more left out to stay within max_chars=500", small)
        data = await s.json(
            "search_code", {"query": "handle request", "limit": 50, "mode": "lexical", "max_chars": 600}
        )
        assert data["left_out"] > 0 and data["results"]


async def test_still_embedding_answers_lexically_and_says_so(tmp_path: Path) -> None:
    ws = write_many(tmp_path / "big", 300)
    async with mcp_session(ws) as s:
        text = await s.ok("search_code", {"query": "modhb_fnd"})
        if "lexical results only" in text or "embeddings in progress" in text:
            assert "m71.py" in text.splitlines()[1] and "modhb_fnd" in text.splitlines()[1], text
        else:  # the machine embedded 3,000 chunks before the first answer: nothing to say then
            pytest.skip("embedding finished before the first call")


BAD_ARGUMENTS = [
    ("search_code", {}, "query: required"),
    ("search_code", {"query": 42}, "query: Input should be a valid string"),
    ("search_code", {"query": "   "}, "query is empty"),
    ("search_code", {"query": "x" * 1001}, "query: String should have at most 1000 characters"),
    ("search_code", {"query": "x", "limit": 0}, "limit: Input should be greater than or equal to 1"),
    ("search_code", {"query": "x", "limit": 51}, "limit: Input should be less than or equal to 50"),
    ("search_code", {"query": "x", "limit": "ten"}, "limit: Input should be a valid integer"),
    (
        "search_code",
        {"query": "x", "mode": "fuzzy"},
        "mode: Input should be 'hybrid', 'semantic' or 'lexical'",
    ),
    ("search_code", {"query": "x", "languages": ["klingon"]}, "unknown language 'klingon'; use one of:"),
    ("search_code", {"query": "x", "languages": "python"}, "languages: Input should be a valid"),
    ("search_code", {"query": "x", "paths": [""]}, "paths holds an empty glob"),
    (
        "search_code",
        {"query": "x", "max_chars": 10},
        "max_chars: Input should be greater than or equal to 500",
    ),
    ("search_code", {"query": "x", "format": "xml"}, "format: Input should be 'text' or 'json'"),
    ("search_code", {"query": "x", "k": 3}, "unknown argument 'k' for search_code; its arguments are:"),
    ("find_symbol", {"query": ""}, "query: String should have at least 1 character"),
    ("find_symbol", {"query": "x", "limit": -1}, "limit: Input should be greater than or equal to 1"),
    ("find_similar", {"path": "uploads.py"}, "start_line: required"),
    (
        "find_similar",
        {"path": "/etc/passwd", "start_line": 1, "end_line": 2},
        "is outside the workspace roots",
    ),
    (
        "find_similar",
        {"path": "../outside.py", "start_line": 1, "end_line": 2},
        "is outside the workspace roots",
    ),
    (
        "find_similar",
        {"path": "uploads.py", "start_line": 9, "end_line": 3},
        "end_line (3) must not be before",
    ),
    (
        "find_similar",
        {"path": "uploads.py", "start_line": 900, "end_line": 901},
        "past the end of uploads.py",
    ),
    (
        "find_similar",
        {"path": "missing.py", "start_line": 1, "end_line": 2},
        "missing.py is not in the index",
    ),
    ("read_span", {"path": "/etc/passwd"}, "is outside the workspace roots"),
    ("read_span", {"path": "link-out.txt"}, "is outside the workspace roots"),
    ("read_span", {"path": ".kenning/index.db"}, "is not a file kenning indexes"),
    ("read_span", {"path": "uploads.py", "start_line": 1, "end_line": 1000}, "at most 400 lines per call"),
    (
        "read_span",
        {"path": "uploads.py", "start_line": 0},
        "start_line: Input should be greater than or equal to 1",
    ),
    ("index_status", {"format": 1}, "format: Input should be 'text' or 'json'"),
]


async def test_bad_arguments_come_back_as_tool_errors_that_say_what_to_change(workspace: Path) -> None:
    (workspace.parent / "outside.py").write_text("SECRET = 1\n")
    (workspace / "link-out.txt").symlink_to(workspace.parent / "outside.py")
    async with mcp_session(workspace) as s:
        await s.ok("index_status", {})
        for name, args, expected in BAD_ARGUMENTS:
            is_error, text = await s.call(name, args)
            assert is_error, (name, args, text)
            assert expected in text, (name, args, text)
            assert "SECRET" not in text and "Traceback" not in text
        # The session survived every one of them.
        assert "UploadRetryPolicy" in await s.ok("find_symbol", {"query": "UploadRetryPolicy"})
        assert "Traceback" not in s.stderr()


async def test_several_roots_answer_together_with_absolute_paths(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "billing.py").write_text(
        'def compute_invoice_total(lines):\n    """Add up the price of every line of an invoice."""\n'
        "    return sum(line.price for line in lines)\n"
    )
    async with mcp_session(workspace, other) as s:
        status = await s.json("index_status", {})
        assert [r["root"] for r in status["roots"]] == [str(workspace), str(other)]
        await s.wait_embedded()
        hits = (await s.json("search_code", {"query": "invoice total", "mode": "lexical"}))["results"]
        assert hits[0]["path"] == str(other / "billing.py")
        symbols = await s.ok("find_symbol", {"query": "compute_invoice_total"})
        assert f"{other / 'billing.py'}:1-3" in symbols
        both = await s.json("find_symbol", {"query": "o", "limit": 50})
        assert {Path(r["path"]).parent for r in both["results"]} >= {workspace, other}
        span = await s.ok("read_span", {"path": "billing.py", "start_line": 1, "end_line": 1})
        assert span.splitlines()[0] == f"{other / 'billing.py'}:1-1 (3 lines in the file)"


async def test_an_agent_finds_and_reads_a_notebooks_function(tmp_path: Path) -> None:
    """A notebook with an image output (one line past the "generated" limit) is indexed and
    readable: find_symbol gives the line of its JSON, read_span shows it there."""
    ws = tmp_path / "nb"
    ws.mkdir()
    text = notebook_with_an_image(["def fit_line(x, y):\n", "    return np.polyfit(x, y, 1)"])
    (ws / "analysis.ipynb").write_text(text)
    line = next(n for n, row in enumerate(text.split("\n"), 1) if "def fit_line" in row)
    async with mcp_session(ws) as s:
        await s.wait_opened()
        assert f"analysis.ipynb:{line}" in await s.ok("find_symbol", {"query": "fit_line"})
        span = await s.ok("read_span", {"path": "analysis.ipynb", "start_line": line, "end_line": line})
        assert '"def fit_line(x, y):\\n",' in span
