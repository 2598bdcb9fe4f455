"""The command line: ``kenning index | search | symbols | stats | cache | pack | languages | serve``.

Thin: parse arguments, open the engine, call it, print. The same store the editor keeps current
is used; while a language server holds the writer lock, the CLI reads it as it is.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kenning import __version__
from kenning.config import DEFAULT_MAX_FILE_SIZE, Config
from kenning.engine import Engine, Status
from kenning.indexer import EmbedReport, IndexProgress, ScanReport, embed_pending, scan, update
from kenning.store.db import StoreCorrupt, StoreUnavailable
from kenning.store.lock import LockHeld
from kenning.store.trust import StoreRefused
from kenning.workspace import display_path, text_to_path

if TYPE_CHECKING:
    from kenning.embedding.endpoint_config import EndpointSettings

if TYPE_CHECKING:
    from kenning.embedding.shared import SharedCache

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


def _shown(stored: str) -> str:
    """A stored path as printed: its bytes, with any that are not UTF-8 as ``\\xNN``."""
    return display_path(text_to_path(stored))


# --embed-* flag -> the key of the `embedding` object every interface shares
_EMBED_FLAGS = {
    "embed_url": "url",
    "embed_model": "model",
    "embed_key_env": "keyEnv",
    "embed_dimensions": "dimensions",
    "embed_query_prefix": "queryPrefix",
    "embed_document_prefix": "documentPrefix",
    "embed_max_chars": "maxChars",
    "embed_batch_size": "batchSize",
    "embed_in_flight": "inFlight",
    "embed_timeout": "timeout",
    "embed_query_timeout": "queryTimeout",
    "embed_retries": "retries",
}


def _embedding(args: argparse.Namespace) -> EndpointSettings | None:
    from kenning.embedding.endpoint_config import SettingsError, parse_endpoint_settings

    raw = {
        key: getattr(args, flag)
        for flag, key in _EMBED_FLAGS.items()
        if getattr(args, flag, None) is not None
    }
    try:
        settings, _ = parse_endpoint_settings(raw or None, strict=True)
    except SettingsError as exc:
        message = str(exc)
        for flag, key in _EMBED_FLAGS.items():  # name the flag the user typed, not the wire key
            message = message.replace(f"embedding.{key} ", f"--{flag.replace('_', '-')} ")
        raise SystemExit(f"kenning: {message}") from None
    return settings


def _config(args: argparse.Namespace) -> Config:
    exclude = tuple(getattr(args, "exclude", None) or ())
    return Config(
        embedding=_embedding(args),
        store=Path(args.store).expanduser() if args.store else None,
        model=args.model,
        model_variant=args.model_variant,
        exclude=exclude,
        max_file_size=args.max_file_size,
        embed_threads=args.threads,
        shared_cache=not args.no_shared_cache,
        shared_cache_max=_size_arg(args.cache_max, "--cache-max") if args.cache_max else None,
        import_pack=getattr(args, "import_pack", None),
    )


def _size_arg(text: str, flag: str) -> int:
    from kenning.embedding.shared import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise SystemExit(f"kenning: {flag}: {exc}") from exc


def _root(args: argparse.Namespace) -> Path:
    root = Path(getattr(args, "workspace", None) or args.root or ".").expanduser()
    if not root.is_dir():
        raise SystemExit(f"kenning: {root} is not a directory")
    return root.resolve()


def _open(args: argparse.Namespace, *, write: bool, defer_vectors: bool = False) -> Engine:
    engine = Engine(
        _root(args), _config(args), read_only=None if not write else False, defer_vectors=defer_vectors
    )
    try:
        return engine.open()
    except LockHeld as exc:
        raise SystemExit(f"kenning: {exc}; try again when it is done") from exc
    except (StoreCorrupt, StoreRefused, StoreUnavailable) as exc:
        raise SystemExit(f"kenning: {exc}") from exc
    except OSError as exc:
        raise SystemExit(f"kenning: cannot open the index of {engine.root}: {exc}") from exc


def _update(
    engine: Engine, quiet: bool, *, lazy_model: bool = False
) -> tuple[ScanReport, EmbedReport] | None:
    """Bring the index up to date (scan, then embed) unless another process is writing it.

    The scan's report carries ``note``: why it found nothing, when discovery can tell (a parent
    repository's ignore rule that excludes the workspace, for instance). ``lazy_model``: when
    the scan changed nothing and ``Engine.embedding_current`` holds, the embedding pass (and
    with it the model and the graph) is skipped; a search needs both, so only ``index`` asks."""
    if engine.read_only:
        log.info("%s; searching the index as it is", engine.read_only_reason)
        return None
    bar = ProgressBar(not quiet)
    try:
        if lazy_model:
            report = scan(engine, progress=bar)
            unchanged = not (
                report.files_changed or report.files_deleted or report.chunks_added or report.chunks_removed
            )
            if unchanged and engine.embedding_current():
                embedded = EmbedReport()
                log.info("nothing changed: the model and the vector index were not loaded")
            else:
                embedded = embed_pending(engine, progress=bar)
                if report.chunks_removed:  # as update() does
                    engine.prune_embedding_cache()
        else:
            report, embedded = update(engine, progress=bar)
        log.info(
            "scanned %d files in %.2fs: %d changed, %d unchanged, %d deleted, %d skipped",
            report.files_seen,
            report.seconds,
            report.files_changed,
            report.files_unchanged,
            report.files_deleted,
            report.files_skipped,
        )
        if embedded.unavailable:
            log.warning(
                "%s; the vectors stored so far are kept, lexical search works; run again to resume",
                embedded.unavailable,
            )
        if embedded.embedded:
            log.info("embedded %d chunks in %.1fs", embedded.embedded, embedded.seconds)
        if embedded.from_shared:
            log.info("took %d vectors from the shared embedding cache", embedded.from_shared)
    finally:
        bar.close()
    return report, embedded


def cmd_index(args: argparse.Namespace) -> int:
    with _open(args, write=True, defer_vectors=True) as engine:
        started = time.monotonic()
        reports = _update(engine, args.quiet or args.json, lazy_model=True)
        note = reports[0].note if reports is not None else None
        st = engine.status()
        if args.json:
            assert reports is not None  # opened for writing
            print(json.dumps(_index_summary(engine, st, *reports, time.monotonic() - started)))
            return 0
        print(
            f"indexed {st.files:,} files, {st.chunks:,} chunks ({st.embedded:,} embedded),"
            f" {st.skipped:,} skipped, in {time.monotonic() - started:.2f}s"
        )
        if note and not st.files:
            print(f"warning: no files indexed: {note}", file=sys.stderr)
        if reports is not None and reports[0].files_unparsed:
            unparsed = reports[0].files_unparsed
            print(
                f"warning: {unparsed:,} file{'s' if unparsed > 1 else ''} not parsed (the parser ran past"
                " its limits; see above), indexed in line windows",
                file=sys.stderr,
            )
        if engine.model_error:
            print(f"warning: {engine.model_error}", file=sys.stderr)
    return 0


def _index_summary(
    engine: Engine, st: Status, scanned: ScanReport, embedded: EmbedReport, seconds: float
) -> dict[str, object]:
    """``kenning index --json``: one object saying what the run did and where vectors came from."""
    reused_from = {
        "store": scanned.chunks_reused,
        "shared_cache": embedded.from_shared - embedded.from_pack,
        "pack": embedded.from_pack,
    }
    return {
        "root": str(engine.root),
        "store": str(engine.store_dir),
        "seconds": round(seconds, 3),
        "files": st.files,
        "chunks": st.chunks,
        "embedded": st.embedded,
        "pending": st.pending,
        "skipped": st.skipped,
        "scan": {
            "files_changed": scanned.files_changed,
            "files_unchanged": scanned.files_unchanged,
            "files_deleted": scanned.files_deleted,
            "chunks_added": scanned.chunks_added,
            "chunks_removed": scanned.chunks_removed,
        },
        "computed": embedded.embedded,
        "reused": sum(reused_from.values()),
        "reused_from": reused_from,
        "pack_imported": embedded.pack_imported,
        "cancelled": embedded.cancelled,
        "model": engine.db.get_meta("model_id") if engine.db is not None else None,
        "origin": st.origin,
        "shared_cache": st.shared_cache,
        "message": st.message,
    }


def cmd_search(args: argparse.Namespace) -> int:
    from kenning.search import SearchError, SearchQuery, search, validate_query

    query = SearchQuery(
        text=args.query,
        limit=args.k,
        mode=args.mode,
        paths=tuple(args.path or ()),
        languages=tuple(args.lang or ()),
        extensions=tuple(args.ext or ()),
    )
    try:
        validate_query(query)  # before indexing: a bad --path is a usage error, not a wait
    except SearchError as exc:
        print(f"kenning: {exc}", file=sys.stderr)
        return 2
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
                                "path": _shown(h.path),
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
            print(f"{i}. {h.score:.3f} {_shown(h.path)}:{h.start_line}-{h.end_line}{symbol}")
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
                                "path": _shown(h.symbol.path),
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
            print(f"{s.kind:11} {where}{s.name}  {_shown(s.path)}:{s.start_line}")
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
            # Who receives the workspace's code for embedding (None: nobody, the local model).
            "embedding_endpoint": engine.embedding_receiver(),
            "store_bytes": sum(
                st.st_size
                for st in (p.lstat() for p in engine.store_dir.iterdir())
                if stat.S_ISREG(st.st_mode)
            ),
            "origin": st.origin,
            "shared_cache": st.shared_cache,
        }
        if args.json:
            print(json.dumps(data, ensure_ascii=False))
            return 0
        print(f"root      {data['root']}\nstore     {data['store']} ({data['store_bytes']:,} bytes)")
        print(f"model     {data['model'] or '(nothing embedded yet)'}")
        if data["embedding_endpoint"]:
            print(f"embedding {data['embedding_endpoint']} (receives your code)")
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
        origin = st.origin or {}
        print(
            f"vectors   {origin.get('computed', 0):,} computed, reused: {origin.get('store', 0):,} from"
            f" this store, {origin.get('shared_cache', 0):,} from the shared cache,"
            f" {origin.get('pack', 0):,} from packs"
        )
        print(f"shared    {_shared_line(st.shared_cache or {})}")
    return 0


def _shared_line(info: dict[str, object]) -> str:
    from kenning.embedding.shared import format_size

    if not info.get("enabled"):
        return "off"
    size, cap = info.get("bytes", 0), info.get("max_bytes", 0)
    assert isinstance(size, int) and isinstance(cap, int)
    return f"cache {format_size(size)} of {format_size(cap)}"


def _open_shared_cache(args: argparse.Namespace) -> SharedCache:
    from kenning.embedding.shared import SharedCache, SharedCacheError

    try:
        return SharedCache(max_bytes=_size_arg(args.cache_max, "--cache-max") if args.cache_max else None)
    except SharedCacheError as exc:
        raise SystemExit(f"kenning: the shared embedding cache: {exc}") from exc


def cmd_cache(args: argparse.Namespace) -> int:
    from kenning.embedding.shared import format_size

    cache = _open_shared_cache(args)
    try:
        if args.clear:
            removed = cache.clear()
            print(f"cleared the shared embedding cache: {removed:,} vectors removed", file=sys.stderr)
        if args.trim is not None:
            target = _size_arg(args.trim, "--trim")
            removed = cache.enforce_cap(target)
            print(f"trimmed to {format_size(target)}: {removed:,} vectors removed", file=sys.stderr)
        usage = cache.usage()
    finally:
        cache.close()
    if args.json:
        data = {
            "path": usage.path,
            "bytes": usage.bytes,
            "max_bytes": usage.max_bytes,
            "vectors": usage.vectors,
            "models": [
                {"identity": m.identity, "dim": m.dim, "vectors": m.vectors, "from_packs": m.from_packs}
                for m in usage.models
            ],
        }
        print(json.dumps(data, ensure_ascii=False))
        return 0
    print(f"path      {usage.path}")
    print(
        f"size      {format_size(usage.bytes)} of {format_size(usage.max_bytes)} ({usage.vectors:,} vectors)"
    )
    for m in usage.models:
        print(f"  {m.vectors:>10,}  {m.identity}  ({m.from_packs:,} from packs)")
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    from kenning.embedding.pack import PackError, export_store, import_pack, verify_pack
    from kenning.store.schema import DB_FILENAME

    try:
        if args.action == "export":
            with _open(args, write=False) as engine:
                _update(engine, args.quiet)
                info = export_store(engine.store_dir / DB_FILENAME, Path(args.file))
            print(f"wrote {info.count:,} vectors of {info.model_id} to {info.path} ({info.bytes:,} bytes)")
            return 0
        if args.action == "verify":
            info = verify_pack(Path(args.file))
            print(f"{info.path}: {info.count:,} vectors of {info.model_id} ({info.dim} dims), checksum ok")
            return 0
        engine = Engine(_root(args), _config(args))
        encoder = engine.encoder()
        if encoder is None:
            raise SystemExit(f"kenning: {engine.model_error}")
        from kenning.embedding.shared import SharedCacheError, model_identity

        cache = _open_shared_cache(args)
        try:
            model = cache.model(model_identity(encoder.model_id, encoder.dim), encoder.dim)
            result = import_pack(Path(args.file), model)
        except SharedCacheError as exc:
            raise SystemExit(f"kenning: the shared embedding cache: {exc}") from exc
        finally:
            cache.close()
        print(
            f"imported {result.added:,} vectors from {result.info.path} into {cache.path}"
            f" ({result.already:,} were already there)"
        )
        return 0
    except PackError as exc:
        print(f"kenning: {exc}", file=sys.stderr)
        return 2


def cmd_languages(args: argparse.Namespace) -> int:
    from kenning.languages import known_languages

    for info in known_languages():
        exts = " ".join(info.extensions + info.filenames)
        print(f"{info.name:12} {info.parser:12} {exts}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kenning.lsp.attrs_cache import import_lsprotocol

    import_lsprotocol()  # before pygls imports it: a third of a restart otherwise
    from kenning.lsp.main import run

    return run(tcp=args.tcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from kenning.mcp.server import run

    roots = [Path(r).expanduser() for r in (args.root or ["."])]
    for root in roots:
        if not root.is_dir():
            raise SystemExit(f"kenning: {root} is not a directory")
    config = _config(args)
    return run([r.resolve() for r in roots], lambda _root: config)


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
    common.add_argument(
        "--threads", type=int, default=0, help="cores the embedding model may use (0: all physical cores)"
    )
    embed = common.add_argument_group(
        "embedding server",
        "embed through an OpenAI-compatible /v1/embeddings server instead of the local model",
    )
    embed.add_argument("--embed-url", metavar="URL", help="the API's base URL, e.g. http://127.0.0.1:8080/v1")
    embed.add_argument("--embed-model", metavar="NAME", help="the model name the server serves")
    embed.add_argument(
        "--embed-key-env", metavar="VAR", help="the NAME of the environment variable holding the API key"
    )
    embed.add_argument("--embed-dimensions", type=int, metavar="N", help="ask for (and check) N dimensions")
    embed.add_argument("--embed-query-prefix", metavar="TEXT", help='put before queries (E5: "query: ")')
    embed.add_argument("--embed-document-prefix", metavar="TEXT", help='put before code (E5: "passage: ")')
    embed.add_argument("--embed-max-chars", type=int, metavar="N", help="cut each input at N characters")
    embed.add_argument("--embed-batch-size", type=int, metavar="N", help="inputs per request (32)")
    embed.add_argument("--embed-in-flight", type=int, metavar="N", help="requests outstanding at once (4)")
    embed.add_argument("--embed-timeout", type=float, metavar="S", help="seconds per indexing request (60)")
    embed.add_argument("--embed-query-timeout", type=float, metavar="S", help="seconds per query (3)")
    embed.add_argument("--embed-retries", type=int, metavar="N", help="retries before an outage (4)")
    common.add_argument(
        "--no-shared-cache",
        action="store_true",
        help="neither read nor write the user-level embedding cache (also: KENNING_SHARED_CACHE=0)",
    )
    common.add_argument(
        "--cache-max",
        metavar="SIZE",
        default=None,
        help="cap of the shared embedding cache, e.g. 2G (default: $KENNING_CACHE_MAX or 2G)",
    )
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
    p.add_argument("--json", action="store_true", help="print one JSON object summarising the run")
    p.add_argument(
        "--import-pack", metavar="FILE", default=None, help="seed the shared cache from this pack first"
    )
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

    p = sub.add_parser("cache", parents=[common], help="show or trim the shared embedding cache")
    p.add_argument("--trim", metavar="SIZE", default=None, help="evict least recently used vectors to SIZE")
    p.add_argument("--clear", action="store_true", help="remove every vector (stores keep their own)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("pack", parents=[common], help="export or import an index pack")
    p.add_argument("action", choices=("export", "import", "verify"))
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser("languages", help="the languages kenning knows")
    p.set_defaults(func=cmd_languages)

    p = sub.add_parser("serve", help="run the language server (stdio)")
    transport = p.add_mutually_exclusive_group()
    # Accepted, not needed: stdio is the default, and many LSP clients append --stdio to the command.
    transport.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", help="serve the index to coding agents (MCP over stdio)")
    # The common options but a repeatable --root (conflict_handler="resolve" would rewrite the
    # shared --root action of every other command, so the others are copied one by one).
    for action in common._actions:
        if "--root" not in action.option_strings:
            p._add_action(action)
    p.add_argument("--root", action="append", metavar="DIR", help="a workspace root (repeatable; default: .)")
    p.set_defaults(func=cmd_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.WARNING
    if getattr(args, "verbose", False):
        level = logging.DEBUG
    elif not getattr(args, "quiet", False) and args.command == "index" and not args.json:
        level = logging.INFO
    if args.command != "serve":  # the server sets up its own logging (stderr + the client)
        logging.basicConfig(level=level, format="kenning: %(message)s", stream=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`kenning search … | head -3`): nothing more to say, and no
        # traceback. Output still buffered would fail again at exit, so it goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a program killed by it reports
