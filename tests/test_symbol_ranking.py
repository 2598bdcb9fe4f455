"""Symbol ranking beyond the match classes: abbreviations typed in capitals, and the order of
symbols that share a name (public before private containers, then shallower paths)."""

from __future__ import annotations

from pathlib import Path

from kenning import fuzzy
from kenning.config import Config
from kenning.engine import Engine
from kenning.fuzzy import FuzzyIndex, fuzzy_score
from kenning.indexer import update
from kenning.symbols import SymbolSearch, contained_in, split_qualified


def ranked(query: str, names: list[str], ties: list[int] | None = None) -> list[str]:
    return [names[i] for i, _ in FuzzyIndex(names, ties=ties).search(query, 100)]


def test_capitals_abbreviation_matches_word_starts_first() -> None:
    names = ["TPen", "ThreadPoolExecutor", "tpe_x", "TPEFoo", "ToPe", "TPE"]
    assert ranked("TPE", names) == ["TPE", "TPEFoo", "ThreadPoolExecutor", "TPen", "tpe_x", "ToPe"]
    # The scores agree with the order, so a client re-sorting by score keeps it.
    scores = [fuzzy_score("TPE", n) for n in ["TPEFoo", "ThreadPoolExecutor", "TPen", "tpe_x", "ToPe"]]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert ranked("HS", ["Hsx", "HTTPServer"]) == ["HTTPServer", "Hsx"]


def test_lower_case_and_mixed_queries_keep_prefix_first() -> None:
    # Only an all-capitals query is read as an abbreviation.
    assert ranked("tpe", ["ThreadPoolExecutor", "TPen"]) == ["TPen", "ThreadPoolExecutor"]
    assert ranked("Tpe", ["ThreadPoolExecutor", "Tpen"]) == ["Tpen", "ThreadPoolExecutor"]
    assert not fuzzy._is_abbreviation(["T"])
    assert fuzzy._is_abbreviation(["HTTP2"])
    assert not fuzzy._is_abbreviation(["TP", "E"])


def test_ties_order_equal_names_only() -> None:
    names = ["run", "run", "run", "runner"]
    assert [i for i, _ in FuzzyIndex(names, ties=[5, 1, 3, 0]).search("run", 10)] == [1, 2, 0, 3]
    assert [i for i, _ in FuzzyIndex(names).search("run", 10)] == [0, 1, 2, 3]


def test_ties_must_match_names() -> None:
    try:
        FuzzyIndex(["a", "b"], ties=[1])
    except ValueError as exc:
        assert "ties" in str(exc)
    else:
        raise AssertionError("a short ties list was accepted")


def test_workspace_symbols_same_name_public_then_shallow(tmp_path: Path) -> None:
    files = {
        "deep/er/pkg/api.py": "def handle(request):\n    return request\n",
        "api.py": "class Server:\n    def handle(self, request):\n        return request\n",
        "_impl.py": "def handle(request):\n    return None\n",
        "pkg/api.py": "class _Private:\n    def handle(self, request):\n        return 1\n",
        "top.py": "def handle(request):\n    return 2\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    with Engine(tmp_path, Config()).open() as engine:
        update(engine, embed=False)
        hits = [h.symbol for h in SymbolSearch(engine).find("handle", 10)]
    order = [(h.path, h.container) for h in hits if h.name == "handle"]
    assert order == [
        ("top.py", None),
        ("api.py", "Server"),
        ("deep/er/pkg/api.py", None),
        ("_impl.py", None),
        ("pkg/api.py", "_Private"),
    ]


def test_workspace_symbols_same_name_and_depth_types_then_functions_then_members(tmp_path: Path) -> None:
    """Equal names at equal depth: a class, then functions and methods, then values, then a
    class's fields (``self.name = …`` is listed as a field since chunker version 33)."""
    files = {
        "a.py": "class User:\n    def __init__(self, name):\n        self.name = name\n",
        "b.py": "class Page:\n    def name(self):\n        return 'page'\n",
        "c.py": "class Site:\n    class name:\n        pass\n",
        "d.py": "class Tag:\n    name: str = 'tag'\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    with Engine(tmp_path, Config()).open() as engine:
        update(engine, embed=False)
        hits = [h.symbol for h in SymbolSearch(engine).find("name", 10)]
    order = [(h.path, h.kind) for h in hits if h.name == "name"]
    assert order == [("c.py", "class"), ("b.py", "method"), ("a.py", "field"), ("d.py", "field")]


def test_a_qualified_query_names_the_containers() -> None:
    assert split_qualified("format.Opts") == (("format",), "Opts")
    assert split_qualified("Vec::push") == (("Vec",), "push")
    assert split_qualified("Client:send") == (("Client",), "send")
    assert split_qualified("lsp.buf.") == (("lsp", "buf"), "")
    assert split_qualified("handle") is None
    assert split_qualified(".handle") is None
    assert contained_in("vim.lsp.buf.format", ("lsp", "format"))
    assert contained_in("vim.lsp.buf.format", ("Buf",))
    assert not contained_in("vim.lsp.buf.format", ("format", "lsp"))  # in order
    assert not contained_in("vim.lsp.buf", ("format",))
    assert not contained_in(None, ("format",))


def test_workspace_symbols_by_a_qualified_name(tmp_path: Path) -> None:
    # Neovim's shapes: methods of a table, and the option classes LuaCATS comments declare.
    (tmp_path / "client.lua").write_text(
        "local Client = {}\n\n"
        "function Client:request(method, params)\n  return method, params\nend\n\n"
        "function Client:cancel_request(id)\n  return id\nend\n\n"
        "local Server = {}\n\n"
        "function Server:request(method)\n  return method\nend\n\n"
        "--- @class vim.lsp.buf.format.Opts\n--- @field timeout_ms? integer\n\n"
        "--- @class vim.lsp.buf.hover.Opts\n--- @field border? string\n"
    )
    # A selector is one name with colons in it: typed whole, it is still found by its name.
    (tmp_path / "view.m").write_text(
        "@implementation View\n- (void)setSize:(int)size forView:(id)view {\n  return;\n}\n@end\n"
    )
    with Engine(tmp_path, Config()).open() as engine:
        update(engine, embed=False)
        search = SymbolSearch(engine)

        def found(query: str) -> list[tuple[str | None, str]]:
            return [(h.symbol.container, h.symbol.name) for h in search.find(query, 10)]

        assert found("Client.request") == [("Client", "request"), ("Client", "cancel_request")]
        assert found("Client:request")[0] == ("Client", "request")
        assert found("format.Opts") == [("vim.lsp.buf.format", "Opts")]
        assert found("buf.Opts") == [("vim.lsp.buf.format", "Opts"), ("vim.lsp.buf.hover", "Opts")]
        assert found("Server.") == [("Server", "request")]
        assert found("setSize:forView:") == [("View", "setSize:forView:")]
