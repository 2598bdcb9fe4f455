"""``workspace/symbol`` end to end (``lsp/symbols.py``): the editor's Go to Symbol in Workspace —
fuzzy and nested names, and an answer even to malformed params."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.lspclient import RawServer
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.chunking_helpers import notebook_with_an_image

from .conftest import REQUEST_TIMEOUT, start_session, wait_ready


async def workspace_symbols(client: LanguageClient, query: str) -> list[T.WorkspaceSymbol]:
    found = await asyncio.wait_for(
        client.workspace_symbol_async(T.WorkspaceSymbolParams(query=query)), REQUEST_TIMEOUT
    )
    assert found is not None, query
    return list(found)


async def open_workspace_of(client: LanguageClient, root: Path, files: dict[str, str]) -> None:
    """Write ``files`` into ``root`` and open it as the workspace, indexed."""
    for name, text in files.items():
        (root / name).write_text(text)
    await start_session(client, [root])
    await wait_ready(client, root)


async def assert_first_symbol(
    client: LanguageClient,
    query: str,
    kind: T.SymbolKind,
    container: str | None,
    path: str,
    line: int,
) -> None:
    """The first answer to ``query`` is the symbol so named, of that kind and container, at
    that line (0-based) of that file."""
    found = await workspace_symbols(client, query)
    assert found, query
    symbol = found[0]
    assert (symbol.name, symbol.kind, symbol.container_name) == (query, kind, container)
    assert symbol.location.uri.endswith(path)
    assert symbol.location.range.start.line == line


async def test_workspace_symbol_fuzzy_and_nested(client: LanguageClient, workspace: Path) -> None:
    await start_session(client, [workspace])
    await wait_ready(client, workspace)

    assert (await workspace_symbols(client, "urp"))[0].name == "UploadRetryPolicy"
    assert (await workspace_symbols(client, "retry pol"))[0].name == "UploadRetryPolicy"
    method = next(s for s in await workspace_symbols(client, "should_retry") if s.name == "should_retry")
    assert method.container_name == "UploadRetryPolicy"
    assert method.kind == T.SymbolKind.Method
    assert method.location.uri.endswith("uploads.py")
    lines = (workspace / "uploads.py").read_text().split("\n")
    assert "def should_retry" in lines[method.location.range.start.line]
    sample = await workspace_symbols(client, "")
    assert 0 < len(sample) <= 200


async def test_workspace_symbol_finds_enum_members(client: LanguageClient, tmp_path: Path) -> None:
    """A Rust variant, a TypeScript enum member and a C enumerator, as other servers list them."""
    await open_workspace_of(
        client,
        tmp_path,
        {
            "error.rs": "pub enum ErrorKind {\n    NotFound,\n    PermissionDenied,\n    Other(String),\n}\n",
            "mode.ts": "export enum TransferMode {\n  Resumable = 1,\n  Streaming,\n}\n",
            "level.h": "enum log_level {\n    LOG_QUIET,\n    LOG_VERBOSE = 2,\n};\n",
        },
    )

    for query, container, path, line in (
        ("PermissionDenied", "ErrorKind", "error.rs", 2),
        ("Streaming", "TransferMode", "mode.ts", 2),
        ("LOG_VERBOSE", "log_level", "level.h", 2),
    ):
        await assert_first_symbol(client, query, T.SymbolKind.EnumMember, container, path, line)


async def test_workspace_symbol_finds_definitions_without_a_def_keyword(
    client: LanguageClient, tmp_path: Path
) -> None:
    """What each language's own server lists and a def-keyword reading misses: a React component
    made by a call, a class field holding a function, a Go error in a `var ( … )` group, a Python
    dataclass field and an instance attribute set in `__init__`, a C table at file scope."""
    await open_workspace_of(
        client,
        tmp_path,
        {
            "button.tsx": (
                "export const FancyButton = forwardRef((props, ref) => {\n"
                "  return <button ref={ref} />;\n});\n"
            ),
            "field.ts": (
                "export class FieldApi {\n  setFieldValue = (updater: number) => {\n"
                "    return updater;\n  };\n}\n"
            ),
            "errors.go": (
                'package os\n\nvar (\n\tErrProcessDone = errors.New("done")\n'
                '\tErrNoDeadline = errors.New("no")\n)\n'
            ),
            "options.py": "@dataclass\nclass Options:\n    retry_budget: int = 3\n",
            "client.py": (
                "class Client:\n    def __init__(self, host):\n        self.connect_timeout = 5.0\n"
            ),
            "tables.c": "static const unsigned char crc_table_lo[4] = {\n    0, 1, 2, 3 };\n",
        },
    )

    for query, kind, container, path, line in (
        ("FancyButton", T.SymbolKind.Constant, None, "button.tsx", 0),
        ("setFieldValue", T.SymbolKind.Method, "FieldApi", "field.ts", 1),
        ("ErrNoDeadline", T.SymbolKind.Variable, None, "errors.go", 4),
        ("retry_budget", T.SymbolKind.Field, "Options", "options.py", 2),
        ("connect_timeout", T.SymbolKind.Field, "Client", "client.py", 2),
        ("crc_table_lo", T.SymbolKind.Variable, None, "tables.c", 0),
    ):
        await assert_first_symbol(client, query, kind, container, path, line)


async def test_workspace_symbol_finds_definitions_in_components_pages_flow_and_more_languages(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The scripts of Vue, Svelte and Astro components and of an HTML page, Flow-typed
    JavaScript, which the JavaScript grammar cannot read, C# (a directive inside a statement,
    an operator), PHP, Ruby, Kotlin, Swift (a directive between a switch's cases, a `deinit`),
    Lua, a shell script and Objective-C (a React Native exported method, a header's
    `@interface`), at the lines the editor shows."""
    await open_workspace_of(
        client,
        tmp_path,
        {
            "Paginator.vue": (
                "<template>\n  <nav>{{ report }}</nav>\n</template>\n\n<script>\nexport default {\n"
                "  methods: {\n    changePage(p) {\n      this.first = p;\n    }\n  }\n};\n</script>\n"
            ),
            "Toaster.svelte": (
                '<script lang="ts">\n  function dismissAll(reason: string) {\n'
                "    toasts.forEach((t) => t.dismiss(reason));\n  }\n</script>\n\n<ol>{position}</ol>\n"
            ),
            "Search.astro": (
                "---\nconst pagefindTranslations = { placeholder: 'Search' };\n---\n\n<site-search />\n"
                "<script>\n  class SiteSearch extends HTMLElement {\n    openModal() {}\n  }\n</script>\n"
            ),
            "upload.html": (
                "<html>\n<body>\n  <form></form>\n  <script>\n"
                "    function uploadWithRetry(file) {\n      return fetch('/upload', { body: file });\n"
                "    }\n  </script>\n</body>\n</html>\n"
            ),
            "Finalizer.cs": (
                "namespace Python.Runtime\n{\n    public sealed class Finalizer\n    {\n"
                "        public void ThrottledCollect()\n        {\n#if FINALIZER_CHECK\n"
                "            lock (_queueLock)\n#endif\n            {\n                Collect();\n"
                "            }\n        }\n\n"
                "        public static bool operator ==(Finalizer a, Finalizer b) => a.Equals(b);\n    }\n}\n"
            ),
            "StreamHandler.php": (
                "<?php\n\nnamespace Monolog\\Handler;\n\nclass StreamHandler\n{\n"
                "    protected function write(array $record): void\n    {\n"
                "        fwrite($this->stream, $record['formatted']);\n    }\n}\n"
            ),
            "lint.rb": (
                "require 'forwardable'\n\nmodule Rack\n  # Validates your application.\n"
                "  class Lint\n    def check_headers(headers)\n      headers.each { |k, v| k }\n"
                "    end\n  end\nend\n"
            ),
            "CameraSession.kt": (
                "package expo.modules.camera\n\nclass CameraSession {\n  companion object {\n"
                "    fun create(context: Context) = CameraSession()\n  }\n}\n"
            ),
            "AppContext.swift": (
                "import UIKit\n\npublic final class AppContext {\n  public let config: Config\n\n"
                "  private func handleNotification(_ notification: Notification) {\n"
                "    switch notification.name {\n    #if os(iOS)\n"
                "    case UIApplication.willEnterForegroundNotification:\n      return\n"
                "    #elseif os(macOS)\n    case NSApplication.willUnhideNotification:\n      return\n"
                "    #endif\n    default:\n      return\n    }\n  }\n\n  func shutdown() {}\n\n"
                "  deinit {\n    shutdown()\n  }\n}\n"
            ),
            "client.lua": (
                "local Client = {}\n\n--- Sends a request to the server.\n"
                "function Client:request(method, params)\n  return self.rpc.request(method, params)\nend\n\n"
                "return Client\n"
            ),
            "build.sh": (
                '#!/bin/sh\nset -e\n\n# Compresses one file.\ncompress_file() {\n  gzip -9 "$1"\n}\n'
            ),
            "RCTScrollViewManager.m": (
                '#import "RCTScrollViewManager.h"\n\n@implementation RCTScrollViewManager\n\n'
                "RCT_EXPORT_MODULE()\n\n"
                "RCT_EXPORT_METHOD(scrollTo : (nonnull NSNumber *)reactTag offsetX : (CGFloat)x)\n{\n"
                "  [self scroll:reactTag];\n}\n\n@end\n"
            ),
            "RCTUIManager.h": (
                "#import <UIKit/UIKit.h>\n\nNS_ASSUME_NONNULL_BEGIN\n\n"
                "@interface RCTUIManager : NSObject\n\n"
                "- (void)setSize:(CGSize)size forView:(UIView *)view;\n\n@end\n\nNS_ASSUME_NONNULL_END\n"
            ),
            "Alert.js": (
                "/**\n * @flow strict-local\n */\n\n"
                "export type Buttons = Array<{\n  text?: string,\n  ...\n}>;\n\n"
                "class Alert {\n  static alert(title: ?string, buttons?: Buttons): void {\n"
                "    if (title != null) {\n      show(title);\n    }\n  }\n}\n"
            ),
        },
    )

    for query, kind, container, path, line in (
        ("changePage", T.SymbolKind.Method, None, "Paginator.vue", 7),
        ("dismissAll", T.SymbolKind.Function, None, "Toaster.svelte", 1),
        ("pagefindTranslations", T.SymbolKind.Constant, None, "Search.astro", 1),
        ("openModal", T.SymbolKind.Method, "SiteSearch", "Search.astro", 7),
        ("uploadWithRetry", T.SymbolKind.Function, None, "upload.html", 4),
        ("ThrottledCollect", T.SymbolKind.Method, "Finalizer", "Finalizer.cs", 4),
        ("operator ==", T.SymbolKind.Method, "Finalizer", "Finalizer.cs", 14),
        ("write", T.SymbolKind.Method, "StreamHandler", "StreamHandler.php", 6),
        ("check_headers", T.SymbolKind.Method, "Rack.Lint", "lint.rb", 5),
        ("create", T.SymbolKind.Method, "CameraSession", "CameraSession.kt", 4),
        ("shutdown", T.SymbolKind.Method, "AppContext", "AppContext.swift", 19),
        ("deinit", T.SymbolKind.Method, "AppContext", "AppContext.swift", 21),
        ("request", T.SymbolKind.Method, "Client", "client.lua", 3),
        ("compress_file", T.SymbolKind.Function, None, "build.sh", 4),
        ("scrollTo:offsetX:", T.SymbolKind.Method, "RCTScrollViewManager", "RCTScrollViewManager.m", 6),
        ("RCTUIManager", T.SymbolKind.Class, None, "RCTUIManager.h", 4),
        ("setSize:forView:", T.SymbolKind.Method, "RCTUIManager", "RCTUIManager.h", 6),
        ("alert", T.SymbolKind.Method, "Alert", "Alert.js", 10),
        ("Buttons", T.SymbolKind.TypeParameter, None, "Alert.js", 4),
    ):
        await assert_first_symbol(client, query, kind, container, path, line)


async def test_workspace_symbol_finds_the_functions_of_a_notebook_with_outputs(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A notebook's cells at the lines of its JSON; its image output (one line past the
    "generated" limit) neither skips it nor is indexed."""
    text = notebook_with_an_image(["def fit_line(x, y):\n", "    return np.polyfit(x, y, 1)"])
    await open_workspace_of(client, tmp_path, {"analysis.ipynb": text})
    line = next(n for n, row in enumerate(text.split("\n")) if "def fit_line" in row)
    await assert_first_symbol(client, "fit_line", T.SymbolKind.Function, None, "analysis.ipynb", line)


async def test_a_file_that_crashes_the_parser_costs_only_that_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    """8,000 lines of `/*` in a `.py` file take tree-sitter-python past any memory (it crashed
    or took the machine); the chunk worker dies instead of the server, and the file is windowed."""
    await open_workspace_of(
        client,
        tmp_path,
        {"evil.py": "/*\n" * 8000, "uploads.py": "def retry_upload(path):\n    return path\n"},
    )
    await assert_first_symbol(client, "retry_upload", T.SymbolKind.Function, None, "uploads.py", 0)


def test_workspace_symbol_with_malformed_params_still_answers(workspace: Path) -> None:
    """pygls sends no reply when a typed request fails to parse; kenning's server must."""
    server = RawServer()
    try:
        server.initialize(workspace, {"indexOnStartup": False})
        for bad in ({}, [1, 2]):
            reply = server.call("workspace/symbol", bad)
            assert reply["error"]["code"] == -32602
            assert "workspace/symbol" in reply["error"]["message"]
        # cattrs coerces a null query; either way there is exactly one reply.
        assert server.call("workspace/symbol", {"query": None})["id"]
        assert "result" in server.call("workspace/symbol", {"query": "x"})
    finally:
        assert server.close() == 0


async def test_workspace_symbol_qualified_queries_and_luacats_types(
    client: LanguageClient, tmp_path: Path
) -> None:
    # `Client:request` and `lsp.ClientConfig`, typed in the editor's symbol box, answered by the
    # real server: the name within the containers named, and the types LuaCATS comments declare.
    await open_workspace_of(
        client,
        tmp_path,
        {
            "client.lua": "local Client = {}\n\n"
            "--- @class vim.lsp.ClientConfig\n--- @field cmd string[]\n\n"
            "function Client:request(method)\n  return method\nend\n\n"
            "function Client:cancel_request(id)\n  return id\nend\n",
            "server.lua": "local Server = {}\n\nfunction Server:request(method)\n  return method\nend\n",
        },
    )
    await assert_first_symbol(client, "request", T.SymbolKind.Method, "Client", "client.lua", 5)
    found = await workspace_symbols(client, "Client:request")
    assert [(s.name, s.container_name) for s in found][:2] == [
        ("request", "Client"),
        ("cancel_request", "Client"),
    ]
    config = (await workspace_symbols(client, "lsp.ClientConfig"))[0]
    assert (config.name, config.kind, config.container_name) == (
        "ClientConfig",
        T.SymbolKind.Class,
        "vim.lsp",
    )
    assert config.location.uri.endswith("client.lua") and config.location.range.start.line == 2
