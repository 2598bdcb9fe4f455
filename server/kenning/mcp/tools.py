"""What each MCP tool does: validated arguments in, engine calls, a compact answer out.

No MCP SDK here: every tool is a plain function over ``Roots`` returning an ``Answer`` (the text
a model reads, and the same data as JSON for clients that want it), or raising ``ToolInputError``
whose message tells the agent what to change. ``server`` owns the schemas and the wiring.

Answers are built for a model's context window: one line per hit (``path:start-end``, the
definition, why it matched), a short preview under it, and a total size the caller sets
(``max_chars``); the hits that do not fit are counted, not silently dropped.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from kenning.engine import Status
from kenning.folder import FolderIndex
from kenning.languages import known_languages
from kenning.mcp.roots import Root, Roots
from kenning.query import SearchMode, query_text_problem
from kenning.search import (
    Hit,
    SearchCancelled,
    SearchError,
    SearchQuery,
    SearchResponse,
    search,
    similar,
)
from kenning.types import KenningError, ShouldStop
from kenning.workspace import SkipReason, read_source

MAX_RESULTS = 50
DEFAULT_SEARCH_LIMIT = 10
DEFAULT_SYMBOL_LIMIT = 20
MIN_CHARS = 500
MAX_CHARS = 100_000
DEFAULT_MAX_CHARS = 6_000
MAX_GLOBS = 20
MAX_SPAN_LINES = 400
DEFAULT_SPAN_LINES = 200
FORMATS = ("text", "json")


class ToolInputError(KenningError, ValueError):
    """The arguments cannot be answered as given; the message says what to change."""


class Cancelled(Exception):
    """The client cancelled the call (or the server is stopping)."""


@dataclass(slots=True)
class Answer:
    text: str
    data: dict[str, Any] = field(default_factory=dict)


def language_names() -> list[str]:
    return sorted(info.name for info in known_languages())


# -- shared helpers ----------------------------------------------------------------------------


def _display_path(roots: Roots, root: Root, rel: str) -> str:
    """Root-relative with one root (what an agent started in that root can open); absolute
    with several, so two roots' ``src/main.py`` never look alike."""
    return rel if len(roots.roots) == 1 else str(root.path / rel)


def _check_budget(max_chars: int) -> None:
    if not MIN_CHARS <= max_chars <= MAX_CHARS:
        raise ToolInputError(f"max_chars must be between {MIN_CHARS} and {MAX_CHARS}, not {max_chars}")


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_RESULTS:
        raise ToolInputError(f"limit must be between 1 and {MAX_RESULTS}, not {limit}")


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ToolInputError(f"format must be 'text' or 'json', not {fmt!r}")


def _ready(roots: Roots, should_stop: ShouldStop) -> list[tuple[Root, FolderIndex]]:
    out = []
    for root in roots.roots:
        folder = roots.ready(root, should_stop)
        if should_stop():
            raise Cancelled
        out.append((root, folder))
    return out


def _index_notes(statuses: Sequence[tuple[Root, FolderIndex]]) -> tuple[list[str], dict[str, int]]:
    """What the agent should know about the index behind an answer: still scanning, still
    embedding (so dense ranks cover part of the code), or unusable."""
    notes: list[str] = []
    total = {"files": 0, "chunks": 0, "embedded": 0, "pending": 0}
    for root, folder in statuses:
        st = folder.status()
        for k in total:
            total[k] += int(getattr(st, k))
        if not folder.usable:
            notes.append(f"{root.path}: not searchable yet ({st.message or 'opening the index'})")
        elif st.state == "scanning" and not folder.engine.read_only:
            notes.append(f"{root.name}: still indexing, {st.files:,} files so far; answers may be incomplete")
        if folder.usable and st.pending and st.chunks:
            notes.append(
                f"{root.name}: embeddings in progress ({st.embedded:,} of {st.chunks:,} chunks);"
                " code not embedded yet is found by its words only"
            )
    return notes, total


def _fit(lines_per_item: Sequence[tuple[str, str]], head: str, tail: Sequence[str], max_chars: int) -> str:
    """Join a header, items (a locator line and an optional body) and trailing notes within
    ``max_chars``: an item whose body does not fit keeps its locator line; past the budget the
    rest are counted in a last line."""
    out = [head]
    used = len(head) + 1 + sum(len(t) + 1 for t in tail) + 120  # room for the "left out" line
    left_out = 0
    for i, (line, body) in enumerate(lines_per_item):
        full = f"{line}\n{body}" if body else line
        if used + len(full) + 1 <= max_chars:
            out.append(full)
            used += len(full) + 1
        elif used + len(line) + 1 <= max_chars:
            out.append(line)
            used += len(line) + 1
        else:
            left_out = len(lines_per_item) - i
            break
    if left_out:
        out.append(f"({left_out} more left out to stay within max_chars={max_chars}; raise it to see them)")
    out.extend(tail)
    return "\n".join(out)


def _fit_json(data: dict[str, Any], key: str, max_chars: int) -> str:
    """The compact JSON of ``data``, dropping items of ``data[key]`` from the end to fit."""
    items = list(data[key])
    while True:
        data[key] = items
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        if len(text) <= max_chars or not items:
            return text
        data["left_out"] = int(data.get("left_out", 0)) + 1
        items = items[:-1]


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


def _hits_answer(
    roots: Roots,
    head: str,
    responses: Sequence[tuple[Root, SearchResponse]],
    statuses: Sequence[tuple[Root, FolderIndex]],
    limit: int,
    max_chars: int,
    fmt: str,
    extra_notes: Sequence[str] = (),
) -> Answer:
    merged: list[tuple[Root, Hit]] = [(root, h) for root, resp in responses for h in resp.hits]
    merged.sort(key=lambda rh: -rh[1].score)
    merged = merged[:limit]
    lexical_only = any(resp.lexical_only for _, resp in responses)
    notes = list(extra_notes)
    if lexical_only:
        notes.append("lexical results only (word matches): the embeddings are not ready yet")
    for _root, resp in responses:
        # The engine's own "not ready" note is said above, with the counts below; other notes
        # (a model that cannot load, filters that select nothing) pass through.
        notes.extend(n for n in resp.notes if n not in notes and "not ready yet" not in n)
    index_notes, totals = _index_notes(statuses)
    notes.extend(index_notes)
    results = [
        {
            "path": _display_path(roots, root, h.path),
            "start_line": h.start_line,
            "end_line": h.end_line,
            "symbol": h.symbol,
            "kind": h.kind,
            "language": h.language,
            "score": h.score,
            "dense_rank": h.dense_rank,
            "lexical_rank": h.lexical_rank,
            "preview": h.preview,
        }
        for root, h in merged
    ]
    data: dict[str, Any] = {
        "results": results,
        "lexical_only": lexical_only,
        "notes": notes,
        "index": totals,
    }
    if fmt == "json":
        text = _fit_json(data, "results", max_chars)
        return Answer(text, json.loads(text))
    items = []
    for r in results:
        what = f"  {r['kind']} {r['symbol']}" if r["symbol"] else ""
        line = f"{r['path']}:{r['start_line']}-{r['end_line']}{what}  ({_why_dict(r)})"
        items.append((line, _indent(str(r["preview"])) if r["preview"] else ""))
    if not results:
        head += "\nno results"
    tail = [f"note: {n}" for n in notes]
    return Answer(_fit(items, head, tail, max_chars), data)


def _why_dict(r: dict[str, Any]) -> str:
    parts = []
    if r["dense_rank"] is not None:
        parts.append(f"dense #{r['dense_rank']}")
    if r["lexical_rank"] is not None:
        parts.append(f"lexical #{r['lexical_rank']}")
    return ", ".join(parts) or "name"


# -- the tools ---------------------------------------------------------------------------------


def search_code(
    roots: Roots,
    query: str,
    *,
    limit: int = DEFAULT_SEARCH_LIMIT,
    mode: SearchMode = "hybrid",
    paths: Sequence[str] = (),
    languages: Sequence[str] = (),
    max_chars: int = DEFAULT_MAX_CHARS,
    fmt: str = "text",
    should_stop: ShouldStop = lambda: False,
) -> Answer:
    text = query.strip()
    if not text:
        raise ToolInputError(
            "query is empty: describe what the code does, or give identifiers (e.g. 'retry failed uploads')"
        )
    problem = query_text_problem(query)
    if problem is not None:
        raise ToolInputError(problem)
    _check_limit(limit)
    _check_budget(max_chars)
    _check_format(fmt)
    if len(paths) > MAX_GLOBS:
        raise ToolInputError(f"at most {MAX_GLOBS} path globs, not {len(paths)}")
    for glob in paths:
        if not glob.strip():
            raise ToolInputError("paths holds an empty glob; remove it")
        try:
            pathspec.GitIgnoreSpec.from_lines([glob])
        except Exception as exc:
            raise ToolInputError(f"path glob {glob!r} is not valid: {exc}") from None
    known = set(language_names())
    for lang in languages:
        if lang not in known:
            raise ToolInputError(
                f"unknown language {lang!r}; use one of: {', '.join(sorted(known))} (or leave languages out)"
            )
    q = SearchQuery(
        text=text,
        limit=limit,
        mode=mode,
        paths=tuple(paths),
        languages=tuple(languages),
    )
    statuses = _ready(roots, should_stop)
    responses: list[tuple[Root, SearchResponse]] = []
    for root, folder in statuses:
        if not folder.usable:
            continue
        try:
            responses.append((root, search(folder.engine, q, should_stop=should_stop)))
        except SearchError as exc:
            raise ToolInputError(str(exc)) from None
        except SearchCancelled:
            raise Cancelled from None
        except sqlite3.ProgrammingError:
            if should_stop():  # the engine was closed under us: the server is stopping
                raise Cancelled from None
            raise
    filters = []
    if paths:
        filters.append("paths " + " ".join(paths))
    if languages:
        filters.append("languages " + " ".join(languages))
    head = f"search_code {mode}: {text[:80]!r}" + (f" ({'; '.join(filters)})" if filters else "")
    return _hits_answer(roots, head, responses, statuses, limit, max_chars, fmt)


def find_symbol(
    roots: Roots,
    query: str,
    *,
    limit: int = DEFAULT_SYMBOL_LIMIT,
    max_chars: int = DEFAULT_MAX_CHARS,
    fmt: str = "text",
    should_stop: ShouldStop = lambda: False,
) -> Answer:
    text = query.strip()
    if not text:
        raise ToolInputError("query is empty: give part of a name, e.g. 'UploadRetry' or 'urp'")
    problem = query_text_problem(query)
    if problem is not None:
        raise ToolInputError(problem)
    _check_limit(limit)
    _check_budget(max_chars)
    _check_format(fmt)
    statuses = _ready(roots, should_stop)
    scored: list[tuple[float, dict[str, Any]]] = []
    for root, folder in statuses:
        if not folder.usable:
            continue
        if should_stop():
            raise Cancelled
        for hit in folder.symbols.find(text, limit):
            s = hit.symbol
            scored.append(
                (
                    hit.score,
                    {
                        "name": s.name,
                        "kind": s.kind,
                        "container": s.container,
                        "path": _display_path(roots, root, s.path),
                        "start_line": s.start_line,
                        "end_line": s.end_line,
                        "score": round(hit.score, 4),
                    },
                )
            )
    scored.sort(key=lambda x: -x[0])
    results = [d for _, d in scored[:limit]]
    notes, totals = _index_notes(statuses)
    data: dict[str, Any] = {"results": results, "notes": notes, "index": totals}
    if fmt == "json":
        text_out = _fit_json(data, "results", max_chars)
        return Answer(text_out, json.loads(text_out))
    items = []
    for r in results:
        owner = f"{r['container']}." if r["container"] else ""
        items.append((f"{r['kind']} {owner}{r['name']}  {r['path']}:{r['start_line']}-{r['end_line']}", ""))
    head = f"find_symbol: {text[:80]!r}" + ("" if results else "\nno symbols")
    return Answer(_fit(items, head, [f"note: {n}" for n in notes], max_chars), data)


def _indexed_file(roots: Roots, path: str, what: str) -> tuple[Root, str]:
    if not path.strip() or "\0" in path:
        raise ToolInputError(f"{what} is empty: give a file path relative to the workspace root")
    found = roots.locate(path)
    if found is None:
        listing = ", ".join(str(r.path) for r in roots.roots)
        raise ToolInputError(
            f"{what} {path!r} is outside the workspace roots ({listing}); give a path inside one of them"
        )
    return found


def _check_lines(start_line: int, end_line: int, last: int, shown: str) -> None:
    if start_line < 1:
        raise ToolInputError(f"start_line must be 1 or more (lines count from 1), not {start_line}")
    if end_line < start_line:
        raise ToolInputError(f"end_line ({end_line}) must not be before start_line ({start_line})")
    if start_line > last:
        raise ToolInputError(f"start_line {start_line} is past the end of {shown}, which has {last} lines")


def find_similar(
    roots: Roots,
    path: str,
    start_line: int,
    end_line: int,
    *,
    limit: int = DEFAULT_SEARCH_LIMIT,
    max_chars: int = DEFAULT_MAX_CHARS,
    fmt: str = "text",
    should_stop: ShouldStop = lambda: False,
) -> Answer:
    _check_limit(limit)
    _check_budget(max_chars)
    _check_format(fmt)
    root, rel = _indexed_file(roots, path, "path")
    if start_line < 1 or end_line < start_line:
        _check_lines(start_line, end_line, start_line, path)
    folder = roots.ready(root, should_stop)
    if should_stop():
        raise Cancelled
    shown = _display_path(roots, root, rel)
    if not folder.usable:
        raise ToolInputError(f"the index of {root.path} is not open yet; call index_status, then try again")
    db = folder.engine.db
    assert db is not None
    row = db.file_by_path(rel)
    if row is None or row.skip_reason is not None:
        why = f" (skipped: {row.skip_reason})" if row is not None and row.skip_reason else ""
        raise ToolInputError(
            f"{shown} is not in the index{why}: ignored, binary, too big or not a file;"
            " give a source file that search_code can return"
        )
    chunks = db.chunks_of_file(row.id)
    last = max((c.end_line for c in chunks), default=0)
    _check_lines(start_line, end_line, max(last, 1), shown)
    response = similar(folder.engine, rel, start_line, min(end_line, max(last, 1)), limit=limit)
    notes = []
    if response.lexical_only:
        response.notes = []
        notes.append(
            "find_similar compares embeddings, which are not ready yet for this index;"
            " call index_status to see progress, or use search_code meanwhile"
        )
    head = f"find_similar: code like {shown}:{start_line}-{end_line}"
    return _hits_answer(roots, head, [(root, response)], [(root, folder)], limit, max_chars, fmt, notes)


def _status_dict(root: Root, folder: FolderIndex) -> dict[str, Any]:
    st: Status = folder.status()
    engine = folder.engine
    out: dict[str, Any] = {
        "root": str(root.path),
        "store": str(engine.store_dir),
        "role": "reader" if engine.read_only else "writer",
        "state": st.state,
        "files": st.files,
        "chunks": st.chunks,
        "embedded": st.embedded,
        "pending": st.pending,
        "symbols": st.symbols,
        "skipped": {},
        "model": None,
        "message": st.message,
    }
    if engine.read_only and engine.read_only_reason:
        out["message"] = f"reading the index that another process writes ({engine.read_only_reason})"
    if folder.usable and engine.db is not None:
        try:
            out["skipped"] = engine.db.skip_counts()
            out["model"] = engine.db.get_meta("model_id")
        except sqlite3.Error as exc:  # closed meanwhile (a writer takeover): counts suffice
            out["message"] = out["message"] or str(exc)
    return out


def index_status(roots: Roots, *, fmt: str = "text") -> Answer:
    _check_format(fmt)
    for root in roots.roots:
        roots.ready(root, lambda: True)  # a takeover check only: status never waits on a scan
    per_root = [_status_dict(r, r.folder) for r in roots.roots]
    data = {"roots": per_root}
    if fmt == "json":
        return Answer(json.dumps(data, ensure_ascii=False, separators=(",", ":")), data)
    lines = []
    for s in per_root:
        lines.append(
            f"{s['root']}: {s['state']} ({s['role']}); {s['files']:,} files, {s['chunks']:,} chunks,"
            f" {s['embedded']:,} embedded, {s['pending']:,} pending, {s['symbols']:,} symbols"
        )
        if s["skipped"]:
            lines.append("  skipped: " + ", ".join(f"{k} {v:,}" for k, v in s["skipped"].items()))
        if s["model"]:
            lines.append(f"  model: {s['model']}")
        if s["message"]:
            lines.append(f"  note: {s['message']}")
    return Answer("\n".join(lines), data)


def read_span(
    roots: Roots,
    path: str,
    start_line: int = 1,
    end_line: int | None = None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS * 2,
    should_stop: ShouldStop = lambda: False,
) -> Answer:
    _check_budget(max_chars)
    if end_line is None:
        end_line = start_line + DEFAULT_SPAN_LINES - 1
    if start_line < 1 or end_line < start_line:
        _check_lines(start_line, end_line, start_line, path)
    if end_line - start_line + 1 > MAX_SPAN_LINES:
        raise ToolInputError(
            f"at most {MAX_SPAN_LINES} lines per call, not {end_line - start_line + 1}; read it in parts"
        )
    root, rel = _indexed_file(roots, path, "path")
    folder = roots.ready(root, should_stop)
    shown = _display_path(roots, root, rel)
    # Only what kenning indexes can be read: never the store, ignored files (.env), binaries.
    db = folder.engine.db if folder.usable else None
    row = db.file_by_path(rel) if db is not None else None
    if row is None or row.skip_reason is not None:
        raise ToolInputError(
            f"{shown} is not a file kenning indexes (ignored, binary, too big, or missing);"
            " read_span reads indexed source files only"
        )
    source = read_source(Path(root.path / rel), max_file_size=folder.engine.config.max_file_size)
    if isinstance(source, SkipReason):
        raise ToolInputError(f"{shown} cannot be read now ({source}); call search_code again")
    lines = source.text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    _check_lines(start_line, end_line, max(len(lines), 1), shown)
    end = min(end_line, len(lines))
    width = len(str(end))
    out = [f"{shown}:{start_line}-{end} ({len(lines)} lines in the file)"]
    used = len(out[0]) + 1
    shown_end = start_line - 1
    for n in range(start_line, end + 1):
        line = f"{n:>{width}}  {lines[n - 1]}"
        if used + len(line) + 1 > max_chars - 80:
            break
        out.append(line)
        used += len(line) + 1
        shown_end = n
    if shown_end < end:
        out.append(f"(stopped at line {shown_end} to stay within max_chars={max_chars}; continue from there)")
    data = {"path": shown, "start_line": start_line, "end_line": shown_end, "total_lines": len(lines)}
    return Answer("\n".join(out), data)
