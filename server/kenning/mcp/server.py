"""The MCP wiring: tool schemas and descriptions, argument errors an agent can act on, stdio.

Built on the official MCP Python SDK 2.x (``MCPServer``). Every tool is a thin async function:
the schema comes from its annotated signature (types, ranges, enums, descriptions), the work
runs on a worker thread through ``tools`` (the event loop stays free, so calls run concurrently),
and a cancelled call sets a flag the engine polls between stages. Bad arguments never end the
session: they come back as a tool error (``is_error``) whose text names the argument and what
to change, including arguments the schema does not know.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from kenning import __version__
from kenning.config import Config
from kenning.mcp import tools
from kenning.mcp.roots import Roots
from kenning.mcp.tools import Answer, Cancelled, ToolInputError
from kenning.query import MAX_QUERY_CHARS, SearchMode

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
kenning searches this workspace's code by meaning and by identifiers (a hybrid of embeddings and \
BM25 over definition-sized chunks), over the same index the editor keeps current. Start with \
search_code when you know what the code does but not its name; use find_symbol when you know \
(part of) a name; find_similar to find code like a span you have; index_status when results look \
incomplete. Results are path:start-end lines; read the file around them with your own file tool \
(or read_span)."""

SEARCH_DESCRIPTION = """\
Find code by describing what it does ("retry failed uploads with backoff") or by identifiers \
("parseHttpHeader"); ranked best first. Each hit is `path:start-end kind symbol (why)` plus a \
short preview, where why gives its rank in the dense (meaning) and lexical (words) lists; a hit \
with only a lexical rank matched words, not meaning. Prefer this over grep when you do not know \
the exact name. Narrow with paths (globs) or languages; mode 'lexical' for exact words, \
'semantic' for meaning only. Answers stay within max_chars (hits that do not fit are counted). \
If the index is still being built the answer says so (and may be lexical only)."""

SYMBOL_DESCRIPTION = """\
Find definitions (functions, classes, methods, types...) by name, fuzzily: 'UploadRetry', \
'urp' (initials), 'retry policy' (words of the name). Returns `kind container.name path:start-end` \
per match, best first. Use search_code instead when you know what the code does but not its name."""

SIMILAR_DESCRIPTION = """\
Find code similar to a span of a file in the workspace (the span itself excluded): duplicated \
logic, other implementations of the same idea, tests of similar code. Give the file path \
(relative to the workspace root) and 1-based inclusive lines. Needs embeddings: while they are \
being computed it says so; use search_code meanwhile."""

STATUS_DESCRIPTION = """\
How complete the index is, per workspace root: state (scanning, embedding, ready, error), files, \
chunks, how many are embedded and pending, files skipped by reason (ignored, binary, too big...), \
and whether this server writes the index or follows another process (the editor) that does. \
Call it when results look incomplete or a file you expect is missing."""

READ_DESCRIPTION = """\
Read lines of a source file in the workspace, with line numbers: to see a whole definition after \
search_code gave its path:start-end. Only files kenning indexes (never ignored files, binaries, \
or anything outside the workspace roots); at most 400 lines per call. Clients that can read \
files themselves may use their own file tool instead."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Limit = Annotated[int, Field(ge=1, le=tools.MAX_RESULTS, description="How many results, 1-50.")]
MaxChars = Annotated[
    int,
    Field(
        ge=tools.MIN_CHARS,
        le=tools.MAX_CHARS,
        description="Total size of the answer in characters (about 4 per token); hits beyond it are "
        "counted, not shown. Raise it for more, lower it to save context.",
    ),
]
Format = Annotated[
    Literal["text", "json"],
    Field(description="'text': compact lines to read (default); 'json': the same answer as JSON."),
]
FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="File path relative to the workspace root (as search results print it), or absolute "
        "inside a root.",
    ),
]
# In the schema as an enum, so a client can validate before calling (tools.py validates too).
LANGUAGES = tools.language_names()
Line = Annotated[int, Field(ge=1, description="1-based line number.")]


class KenningMCP(MCPServer[Any]):
    """``MCPServer`` whose argument errors say, in one line per argument, what to change."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            known = set(tool.parameters.get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                raise ToolError(
                    f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for"
                    f" {name}; its arguments are: {', '.join(sorted(known))}"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_explain(name, exc.__cause__)) from None
            raise


def _explain(name: str, exc: ValidationError) -> str:
    """One line per bad argument: which, what was wrong, what was given."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        given = err.get("input")
        shown = repr(given)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        if err.get("type") == "missing":
            problems.append(f"{where}: required, missing")
        else:
            problems.append(f"{where}: {err.get('msg', 'invalid')} (got {shown})")
    return f"invalid arguments for {name}; fix and call again:\n" + "\n".join(problems)


async def _answer(
    work: Callable[[Callable[[], bool]], Answer], stopping: threading.Event, fmt: str
) -> CallToolResult:
    """Run one tool's work on a worker thread; cancellation stops it at the engine's next check."""
    cancel = threading.Event()

    def should_stop() -> bool:
        return cancel.is_set() or stopping.is_set()

    try:
        answer = await anyio.to_thread.run_sync(lambda: work(should_stop), abandon_on_cancel=True)
    except ToolInputError as exc:
        raise ToolError(str(exc)) from None
    except Cancelled:
        raise ToolError("cancelled before it finished") from None
    finally:
        cancel.set()  # on cancellation the thread was abandoned: tell it to stop
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)],
        structured_content=answer.data if fmt == "json" else None,
    )


def build_server(roots: Roots, stopping: threading.Event) -> KenningMCP:
    app = KenningMCP(
        name="kenning",
        title="kenning code search",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )

    async def search_code(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="What the code does, in words, and/or identifiers.",
            ),
        ],
        limit: Limit = tools.DEFAULT_SEARCH_LIMIT,
        mode: Annotated[
            SearchMode,
            Field(
                description="'hybrid' (default): meaning and words; 'semantic': meaning; 'lexical': words."
            ),
        ] = "hybrid",
        paths: Annotated[
            tuple[str, ...],
            Field(
                max_length=tools.MAX_GLOBS,
                description="Only files matching any of these globs (gitignore syntax, relative to the "
                "root), e.g. ['src/**', '*.py', '!tests/'].",
            ),
        ] = (),
        languages: Annotated[
            tuple[str, ...],
            Field(
                description="Only these languages.",
                json_schema_extra={"items": {"type": "string", "enum": LANGUAGES}},
            ),
        ] = (),
        max_chars: MaxChars = tools.DEFAULT_MAX_CHARS,
        format: Format = "text",
    ) -> CallToolResult:
        return await _answer(
            lambda stop: tools.search_code(
                roots,
                query,
                limit=limit,
                mode=mode,
                paths=paths,
                languages=languages,
                max_chars=max_chars,
                fmt=format,
                should_stop=stop,
            ),
            stopping,
            format,
        )

    async def find_symbol(
        query: Annotated[
            str,
            Field(min_length=1, max_length=MAX_QUERY_CHARS, description="A name or part of one, fuzzily."),
        ],
        limit: Annotated[
            int, Field(ge=1, le=tools.MAX_RESULTS, description="How many results, 1-50.")
        ] = tools.DEFAULT_SYMBOL_LIMIT,
        max_chars: MaxChars = tools.DEFAULT_MAX_CHARS,
        format: Format = "text",
    ) -> CallToolResult:
        return await _answer(
            lambda stop: tools.find_symbol(
                roots, query, limit=limit, max_chars=max_chars, fmt=format, should_stop=stop
            ),
            stopping,
            format,
        )

    async def find_similar(
        path: FilePath,
        start_line: Annotated[int, Field(ge=1, description="First line of the span, 1-based.")],
        end_line: Annotated[int, Field(ge=1, description="Last line of the span, 1-based, inclusive.")],
        limit: Limit = tools.DEFAULT_SEARCH_LIMIT,
        max_chars: MaxChars = tools.DEFAULT_MAX_CHARS,
        format: Format = "text",
    ) -> CallToolResult:
        return await _answer(
            lambda stop: tools.find_similar(
                roots,
                path,
                start_line,
                end_line,
                limit=limit,
                max_chars=max_chars,
                fmt=format,
                should_stop=stop,
            ),
            stopping,
            format,
        )

    async def index_status(format: Format = "text") -> CallToolResult:
        return await _answer(lambda stop: tools.index_status(roots, fmt=format), stopping, format)

    async def read_span(
        path: FilePath,
        start_line: Line = 1,
        end_line: Annotated[
            int | None,
            Field(ge=1, description="Last line, inclusive (default: start_line + 199; at most 400 lines)."),
        ] = None,
        max_chars: MaxChars = tools.DEFAULT_MAX_CHARS * 2,
    ) -> CallToolResult:
        return await _answer(
            lambda stop: tools.read_span(
                roots, path, start_line, end_line, max_chars=max_chars, should_stop=stop
            ),
            stopping,
            "text",
        )

    app.add_tool(
        search_code,
        name="search_code",
        title="Search code",
        description=SEARCH_DESCRIPTION,
        annotations=READ_ONLY,
    )
    app.add_tool(
        find_symbol,
        name="find_symbol",
        title="Find symbol",
        description=SYMBOL_DESCRIPTION,
        annotations=READ_ONLY,
    )
    app.add_tool(
        find_similar,
        name="find_similar",
        title="Find similar code",
        description=SIMILAR_DESCRIPTION,
        annotations=READ_ONLY,
    )
    app.add_tool(
        index_status,
        name="index_status",
        title="Index status",
        description=STATUS_DESCRIPTION,
        annotations=READ_ONLY,
    )
    app.add_tool(
        read_span, name="read_span", title="Read lines", description=READ_DESCRIPTION, annotations=READ_ONLY
    )
    return app


def _stop_on_signal(roots: Roots, stopping: threading.Event) -> Callable[[int, object], None]:
    """SIGTERM/SIGINT: close every engine (graph saved, lock released), then leave at once.

    Raising KeyboardInterrupt instead hangs: asyncio's shutdown waits for the worker thread
    that is blocked reading stdin, which only an EOF ends.
    """

    def handler(signum: int, frame: object) -> None:
        if stopping.is_set():
            return
        stopping.set()

        def finish() -> None:
            try:
                roots.stop()
            finally:
                logging.shutdown()
                os._exit(0)

        threading.Thread(target=finish, name="kenning-mcp-exit", daemon=True).start()

    return handler


def run(paths: Sequence[Path], config_for: Callable[[Path], Config]) -> int:
    """Serve ``paths`` over stdio until the client closes stdin (or SIGTERM/SIGINT); always
    close every engine on the way out, so the writer lock is free for whoever comes next."""
    roots = Roots(paths, config_for)
    stopping = threading.Event()
    app = build_server(roots, stopping)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _stop_on_signal(roots, stopping))
    roots.start()
    try:
        anyio.run(app.run_stdio_async)
    finally:
        stopping.set()
        roots.stop()
    return 0
