"""The command line: ``kenning index | search | symbols | stats | languages | serve``.

Thin: parse arguments, open the engine, call it, print. The same store the editor keeps current
is used; while a language server holds the writer lock, the CLI reads it as it is.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from kenning import __version__
from kenning.config import DEFAULT_MAX_FILE_SIZE, Config
from kenning.engine import Engine
from kenning.indexer import IndexProgress, embed_pending, scan
from kenning.store.db import StoreCorrupt
from kenning.store.lock import LockHeld

log = logging.getLogger("kenning")


class ProgressBar:
    """A one-line progress display on stderr, shown only for work that takes more than a moment."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, p: IndexProgress) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.started < 0.5 or now - self.last < 0.1:
            return
        self.last = now
        if p.phase == "scanning":
            done, total, what = p.files_done, p.files_total, "files"
        else:
            done, total, what = p.chunks_done, p.chunks_total, "chunks embedded"
        width = 30
        frac = done / total if total else 1.0
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = f"  ETA {p.eta_text()}" if p.eta_s else ""
        sys.stderr.write(f"\r{p.phase:9} [{bar}] {done:,}/{total:,} {what}{eta}\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _config(args: argparse.Namespace) -> Config:
    exclude = tuple(getattr(args, "exclude", None) or ())
    return Config(
        store=Path(args.store).expanduser() if args.store else None,
        model=args.model,
        model_variant=args.model_variant,
        exclude=exclude,
        max_file_size=args.max_file_size,
        embed_threads=args.threads,
    )


def _root(args: argparse.Namespace) -> Path:
    root = Path(getattr(args, "workspace", None) or args.root or ".").expanduser()
    if not root.is_dir():
        raise SystemExit(f"kenning: {root} is not a directory")
    return root.resolve()


def _open(args: argparse.Namespace, *, write: bool) -> Engine:
    engine = Engine(_root(args), _config(args), read_only=None if not write else False)
    try:
        return engine.open()
    except LockHeld as exc:
        raise SystemExit(f"kenning: {exc}; try again when it is done") from exc
    except StoreCorrupt as exc:
        raise SystemExit(f"kenning: {exc}") from exc


def _update(engine: Engine, quiet: bool) -> None:
    """Bring the index up to date (scan, then embed) unless another process is writing it."""
    if engine.read_only:
        log.info("%s; searching the index as it is", engine.read_only_reason)
        return
    bar = ProgressBar(not quiet)
    try:
        report = scan(engine, progress=bar)
        log.info(
            "scanned %d files in %.2fs: %d changed, %d unchanged, %d deleted, %d skipped",
            report.files_seen,
            report.seconds,
            report.files_changed,
            report.files_unchanged,
            report.files_deleted,
            report.files_skipped,
        )
        embedded = embed_pending(engine, progress=bar)
        engine.prune_embedding_cache()
        if embedded.embedded:
            log.info("embedded %d chunks in %.1fs", embedded.embedded, embedded.seconds)
    finally:
        bar.close()
    engine.state = "ready"


def cmd_index(args: argparse.Namespace) -> int:
    with _open(args, write=True) as engine:
        started = time.monotonic()
        _update(engine, args.quiet)
        st = engine.status()
        print(
            f"indexed {st.files:,} files, {st.chunks:,} chunks ({st.embedded:,} embedded),"
            f" {st.skipped:,} skipped, in {time.monotonic() - started:.2f}s"
        )
        if engine.model_error:
            print(f"warning: {engine.model_error}", file=sys.stderr)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from kenning.search import SearchError, SearchQuery, search

    query = SearchQuery(
        text=args.query,
        limit=args.k,
        mode=args.mode,
        paths=tuple(args.path or ()),
        languages=tuple(args.lang or ()),
        extensions=tuple(args.ext or ()),
    )
    with _open(args, write=False) as engine:
        _update(engine, args.quiet or args.json)
        try:
            response = search(engine, query)
        except SearchError as exc:
            print(f"kenning: {exc}", file=sys.stderr)
            return 2
        st = engine.status()
        if args.json:
            print(
                json.dumps(
                    {
                        "results": [
                            {
                                "path": h.path,
                                "start_line": h.start_line,
                                "end_line": h.end_line,
                                "score": h.score,
                                "preview": h.preview,
                                "symbol": h.symbol,
                                "language": h.language,
                                "match": {"dense_rank": h.dense_rank, "lexical_rank": h.lexical_rank},
                            }
                            for h in response.hits
                        ],
                        "index": {"files": st.files, "chunks": st.chunks, "embedded": st.embedded},
                        "lexical_only": response.lexical_only,
                        "notes": response.notes,
                    },
                    ensure_ascii=False,
                )
            )
            return 0
        for note in response.notes:
            print(f"note: {note}", file=sys.stderr)
        if not response.hits:
            print("no results")
        for i, h in enumerate(response.hits, 1):
            symbol = f"  {h.symbol}" if h.symbol else ""
            print(f"{i}. {h.score:.3f} {h.path}:{h.start_line}-{h.end_line}{symbol}")
            for line in h.preview.split("\n"):
                print(f"     {line}")
    return 0


def cmd_symbols(args: argparse.Namespace) -> int:
    from kenning.symbols import SymbolSearch

    with _open(args, write=False) as engine:
        if not engine.read_only:
            assert engine.db is not None
            bar = ProgressBar(not (args.quiet or args.json))
            try:
                scan(engine, progress=bar)
            finally:
                bar.close()
        hits = SymbolSearch(engine).find(args.query, args.k)
        if args.json:
            print(
                json.dumps(
                    {
                        "results": [
                            {
                                "name": h.symbol.name,
                                "kind": h.symbol.kind,
                                "container": h.symbol.container,
                                "path": h.symbol.path,
                                "start_line": h.symbol.start_line,
                                "end_line": h.symbol.end_line,
                                "score": round(h.score, 4),
                            }
                            for h in hits
                        ]
                    },
                    ensure_ascii=False,
                )
            )
            return 0
        if not hits:
            print("no symbols")
        for h in hits:
            s = h.symbol
            where = f"{s.container}." if s.container else ""
            print(f"{s.kind:11} {where}{s.name}  {s.path}:{s.start_line}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args, write=False) as engine:
        assert engine.db is not None
        st = engine.status()
        data = {
            "root": str(engine.root),
            "store": str(engine.store_dir),
            "files": st.files,
            "chunks": st.chunks,
            "embedded": st.embedded,
            "pending": st.pending,
            "symbols": st.symbols,
            "skipped": engine.db.skip_counts(),
            "languages": engine.db.language_counts(),
            "model": engine.db.get_meta("model_id"),
            "store_bytes": sum(p.stat().st_size for p in engine.store_dir.iterdir() if p.is_file()),
        }
        if args.json:
            print(json.dumps(data, ensure_ascii=False))
            return 0
        print(f"root      {data['root']}\nstore     {data['store']} ({data['store_bytes']:,} bytes)")
        print(f"model     {data['model'] or '(nothing embedded yet)'}")
        print(
            f"files     {st.files:,}\nchunks    {st.chunks:,} ({st.embedded:,} embedded,"
            f" {st.pending:,} pending)\nsymbols   {st.symbols:,}"
        )
        skipped = data["skipped"]
        assert isinstance(skipped, dict)
        print(f"skipped   {sum(skipped.values()):,}")
        for reason, n in skipped.items():
            print(f"  {reason:14} {n:,}")
        languages = data["languages"]
        assert isinstance(languages, dict)
        print("languages " + ", ".join(f"{k} {v:,}" for k, v in languages.items()))
    return 0


def cmd_languages(args: argparse.Namespace) -> int:
    from kenning.languages import known_languages

    for info in known_languages():
        exts = " ".join(info.extensions + info.filenames)
        print(f"{info.name:12} {info.parser:12} {exts}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kenning.lsp.server import run

    return run(tcp=args.tcp)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", help="workspace root (default: the current directory)")
    common.add_argument(
        "--store", default=None, help="index directory (default: <root>/.kenning, or $KENNING_STORE)"
    )
    common.add_argument(
        "--model", default=None, help="model directory (model.onnx, tokenizer.json, kenning-model.json)"
    )
    common.add_argument(
        "--model-variant",
        default="auto",
        choices=("auto", "optimized", "original"),
        help="use the optimised graph built from the model, or the original",
    )
    common.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave matching files out (gitignore syntax; repeatable)",
    )
    common.add_argument(
        "--max-file-size", type=int, default=DEFAULT_MAX_FILE_SIZE, help="skip larger files (bytes)"
    )
    common.add_argument("--threads", type=int, default=0, help="embedding threads (0: all cores)")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bar or log lines")
    common.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    parser = argparse.ArgumentParser(
        prog="kenning",
        description="Find code by describing it.",
    )
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", parents=[common], help="index a workspace (incrementally)")
    p.add_argument("workspace", nargs="?", metavar="PATH", help="the workspace root (default: --root or .)")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", parents=[common], help="search by description or identifiers")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="number of results (1-200)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--path", action="append", metavar="GLOB", help="only paths matching (repeatable)")
    p.add_argument("--lang", action="append", metavar="LANG", help="only this language (repeatable)")
    p.add_argument("--ext", action="append", metavar="EXT", help="only this extension (repeatable)")
    p.add_argument("--mode", default="hybrid", choices=("hybrid", "semantic", "lexical"))
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("symbols", parents=[common], help="fuzzy search over definitions")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=50)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_symbols)

    p = sub.add_parser("stats", parents=[common], help="what the index holds, and what it skipped")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("languages", help="the languages kenning knows")
    p.set_defaults(func=cmd_languages)

    p = sub.add_parser("serve", help="run the language server (stdio)")
    transport = p.add_mutually_exclusive_group()
    # Accepted, not needed: stdio is the default, and many LSP clients append --stdio to the command.
    transport.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p.set_defaults(func=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.WARNING
    if getattr(args, "verbose", False):
        level = logging.DEBUG
    elif not getattr(args, "quiet", False) and args.command == "index":
        level = logging.INFO
    if args.command != "serve":  # the server sets up its own logging (stderr + the client)
        logging.basicConfig(level=level, format="kenning: %(message)s", stream=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
