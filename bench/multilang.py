"""Retrieval quality in Go, Rust, TypeScript, JavaScript, Java, Kotlin, Swift, Objective-C, Lua, C and
C++, next to a naive 40-line-window hybrid.

``python -m bench.multilang [--workdir DIR] [--budget LINES] [--queries N] [--tune] [--select-seed N]
[--output MD]`` (also ``python -m bench --only multilang``). Sources and how to install them:
``bench.mlcorpus``. ``--select-seed``: another sample of the same sources (7, the default, is the
one tuned on), reported in its own section.

Per language, two indexes of the same doc-comment-free copy are built in ``<workdir>/<lang>/``
and kept there: kenning's own chunking (``store-kenning``) and plain 40-line windows
(``store-naive``, what a quick script would do; the same path-prefixed model input, the same
hybrid search, so only the chunking differs). A re-run re-embeds only model inputs that changed:
after a ranking change nothing, after a chunking change the changed chunks. Queries are
seeded samples: descriptive (``docstring_queries``, seed 13) and identifier (seed 17).

``--documented`` indexes the copy with its doc comments kept but each query's sentence taken out
of them (``mlcorpus.without_summaries``): documented code that a query describes in other words.
It reports into its own section and wants its own ``--workdir``.

``--tune`` grid-searches the fusion constants on one half of every language's queries (the mean
of all languages' hybrid MRR@10) and reports the other half per language, so a constant that
helps one language at another's cost shows.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.corpus import DocQuery

REPO = Path(__file__).resolve().parents[1]
LANGS = (
    "python",
    "go",
    "rust",
    "typescript",
    "ts-libs",
    "javascript",
    "java",
    "kotlin",
    "swift",
    "objective-c",
    "lua",
    "c",
    "cpp",
)
BUDGET = 9_000  # non-blank code lines per language, after stripping: ~1-1.5k chunks
SELECT_SEED = 7
DESC_SEED = 13
IDENT_SEED = 17
SPLIT_SEED = 21
QUERIES = 150
NAIVE_LINES = 40
KINDS = ("descriptive", "identifier")
START = "<!-- bench:multilang:start -->"
END = "<!-- bench:multilang:end -->"
DOCUMENTED_START = "<!-- bench:multilang-documented:start -->"
DOCUMENTED_END = "<!-- bench:multilang-documented:end -->"


def markers(documented: bool, select_seed: int = SELECT_SEED) -> tuple[str, str]:
    """The start and end markers of the report's section: ``--documented`` has its own, and so
    has another selection seed (another sample of the same sources, nothing tuned on it)."""
    if select_seed == SELECT_SEED:
        return (DOCUMENTED_START, DOCUMENTED_END) if documented else (START, END)
    name = f"multilang{'-documented' if documented else ''}-seed{select_seed}"
    return f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"


def log(msg: str) -> None:
    print(f"[multilang {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _naive_chunks(path: str, text: str, language: str, *, max_chars: int = 0) -> Any:
    """Fixed 40-line windows (blank edges trimmed), no symbols: the baseline."""
    from kenning.chunking import Chunk, ChunkedFile

    lines = text.split("\n")
    chunks = []
    for first in range(0, len(lines), NAIVE_LINES):
        block = lines[first : first + NAIVE_LINES]
        lo = next((i for i, line in enumerate(block) if line.strip()), None)
        if lo is None:
            continue
        hi = max(i for i, line in enumerate(block) if line.strip())
        body = "\n".join(block[lo : hi + 1])
        chunks.append(Chunk(first + lo + 1, first + hi + 1, body, "window", None, ""))
    return ChunkedFile(chunks=chunks, symbols=[])


class _Chunked:
    """A file chunked already, in the shape of the chunk worker's pending answer."""

    def __init__(self, chunked: Any) -> None:
        self._chunked = chunked

    def result(self) -> Any:
        return self._chunked


def _naive_later(path: str, text: str, language: str) -> _Chunked:
    return _Chunked(_naive_chunks(path, text, language))


@contextlib.contextmanager
def naive_chunking() -> Iterator[None]:
    """The indexer chunks with naive windows: in this process and in place of the chunk worker,
    which parsed languages go to (chunking/isolated.py) and which this process cannot patch."""
    import kenning.indexer.chunks as chunks

    saved = chunks.chunk_source, chunks.chunk_later
    chunks.chunk_source, chunks.chunk_later = _naive_chunks, _naive_later  # type: ignore[assignment]
    try:
        yield
    finally:
        chunks.chunk_source, chunks.chunk_later = saved


def build(ws: Path, store: Path, naive: bool) -> dict[str, Any]:
    from bench import quality

    with naive_chunking() if naive else contextlib.nullcontext():
        return quality.build_index(ws, store, "auto", None)


class Lang:
    """One language's workspace, indexes and queries."""

    def __init__(
        self,
        lang: str,
        work: Path,
        budget: int,
        queries: int,
        *,
        documented: bool = False,
        select_seed: int = SELECT_SEED,
    ) -> None:
        from bench import mlcorpus
        from bench.corpus import docstring_queries

        self.lang = lang
        self.dir = work / lang
        root = mlcorpus.locate(lang, work)
        if root is None:
            raise FileNotFoundError(f"{lang}: sources not found (see bench/mlcorpus.py for how to install)")
        self.root = root
        self.ws = self.dir / "ws"
        prep = mlcorpus.prepare(
            lang,
            root,
            self.ws,
            budget=budget,
            seed=select_seed,
            documented=1.0 if documented else 0.0,
            summaries=False,
        )
        self.prep = prep
        indexed = set(prep.files)
        self.desc = docstring_queries(prep.descriptive, queries, seed=DESC_SEED, indexed=indexed)
        self.ident = mlcorpus.identifier_queries(prep.identifiers, queries, seed=IDENT_SEED, indexed=indexed)
        self.built: dict[str, Any] = {}

    def build(self) -> None:
        for name, naive in (("kenning", False), ("naive", True)):
            log(f"{self.lang}: building the {name} index")
            self.built[name] = build(self.ws, self.dir / f"store-{name}", naive)
            built = self.built[name]
            log(f"{self.lang}: {name}: {built['chunks']} chunks, {built['embedded_now']} embedded now")

    @contextlib.contextmanager
    def engine(self, name: str) -> Iterator[Any]:
        from bench import quality

        with quality.open_engine(self.ws, self.dir / f"store-{name}", "auto") as engine:
            yield engine

    def evaluate(self) -> dict[str, Any]:
        from bench import quality

        out: dict[str, Any] = {
            "files": len(self.prep.files),
            "code_lines": self.prep.code_lines,
            "chunks": {k: v["chunks"] for k, v in self.built.items()},
            "queries": {"descriptive": len(self.desc), "identifier": len(self.ident)},
        }
        from kenning.lexical import written_out

        with self.engine("kenning") as engine:
            # Method chunks whose model input (header + text) names their owner (type, class,
            # receiver, impl target), as written or in words (an object literal's methods:
            # `rulesSchema.merge` leads with "rules schema merge"): the context a chunk must carry.
            methods = named = 0
            for symbol, header, text in engine.db.reader().execute(
                "SELECT symbol, header, text FROM chunks WHERE symbol LIKE '%.%'"
                " AND kind IN ('method', 'constructor', 'function')"
            ):
                methods += 1
                owner = symbol.rsplit(".", 1)[0].rsplit(".", 1)[-1]
                named += owner in header + text or written_out(owner) in header
            out["owner_named"] = {"method_chunks": methods, "named": named}
            out["kinds"] = dict(
                engine.db.reader().execute("SELECT kind, count(*) FROM chunks GROUP BY kind").fetchall()
            )
        for name, modes in (
            ("kenning", ("lexical", "semantic", "hybrid")),
            ("naive", ("semantic", "hybrid")),
        ):
            with self.engine(name) as engine:
                for kind, qs in (("descriptive", self.desc), ("identifier", self.ident)):
                    scores = quality.evaluate(engine, qs, modes)
                    out.setdefault(name, {})[kind] = {m: s.as_dict() for m, s in scores.items()}
                    per_query = out.setdefault("per_query", {}).setdefault(
                        kind, [{"query": q.query, "path": q.path, "name": q.name} for q in qs]
                    )
                    for row, rank in zip(per_query, scores["hybrid"].ranks, strict=True):
                        row[name] = rank
                    if name == "kenning":  # the query adapter's A/B: the same store, queries unmapped
                        with quality.query_adapter_off(engine):
                            scores = quality.evaluate(engine, qs, ("hybrid",))
                        out.setdefault("no_adapter", {})[kind] = scores["hybrid"].as_dict()
        return out


# -- tuning ---------------------------------------------------------------------------------------


def halves(queries: Sequence[DocQuery], seed: int = SPLIT_SEED) -> tuple[list[DocQuery], list[DocQuery]]:
    order = list(range(len(queries)))
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return [queries[i] for i in order[:half]], [queries[i] for i in order[half:]]


class Candidates:
    """One language's dense lists (fixed) and lexical lists (per common-term share), kept so a
    grid point only re-fuses."""

    def __init__(self, engine: Any, queries: Sequence[DocQuery]) -> None:
        from kenning.search.dense import dense_candidates

        self.engine = engine
        self.conn = engine.db.reader()
        encoder = engine.encoder()
        self.n = 30
        self.dense = {
            q: dense_candidates(engine, self.conn, encoder.embed_query(q.query), None, self.n)
            for q in queries
        }
        self.lexical: dict[tuple[float, DocQuery], list[int]] = {}

    def ranked(self, qs: Sequence[DocQuery]) -> list[Any]:
        from kenning.search import SearchQuery, fuse, tuning
        from kenning.search.bm25 import lexical_candidates

        out = []
        for q in qs:
            key = (tuning.COMMON_TERM_SHARE, q)
            if key not in self.lexical:
                self.lexical[key] = lexical_candidates(self.engine, self.conn, q.query, None, self.n)
            query = SearchQuery(text=q.query, limit=10, mode="hybrid")
            out.append(fuse(self.engine, self.conn, query, q.query, self.dense[q], self.lexical[key]))
        return out


def _point_values(point: dict[str, float]) -> dict[str, float]:
    values = {k: v for k, v in point.items() if k != "boost"}
    if "boost" in point:
        values["NAME_BOOST"] = point["boost"] / (point.get("RRF_K", 5) + 1)
    return values


def tune(langs: Sequence[Lang], grid: dict[str, Sequence[float]]) -> dict[str, Any]:
    """Grid search on the tune halves of every language (mean hybrid MRR@10 over languages and
    query kinds); every language's held-out half reported for the default and the best point."""
    from bench import quality
    from kenning.search import tuning as s

    stack = contextlib.ExitStack()
    with stack:
        sets: list[tuple[str, str, Candidates, list[DocQuery], list[DocQuery]]] = []
        for lang in langs:
            engine = stack.enter_context(lang.engine("kenning"))
            cands = Candidates(engine, [*lang.desc, *lang.ident])
            for kind, qs in (("descriptive", lang.desc), ("identifier", lang.ident)):
                a, b = halves(qs)
                sets.append((lang.lang, kind, cands, a, b))

        def run(point: dict[str, float], held: bool) -> dict[str, float]:
            with quality.fusion(**_point_values(point)):
                return {
                    f"{lang}/{kind}": quality.score(c.ranked(b if held else a), b if held else a).mrr10
                    for lang, kind, c, a, b in sets
                }

        default = {k: float(getattr(s, k)) for k in grid if k != "boost"}
        if "boost" in grid:
            default["boost"] = s.NAME_BOOST * (s.RRF_K + 1)
        names = list(grid)
        results = []
        for combo in itertools.product(*(grid[k] for k in names)):
            point = dict(zip(names, combo, strict=True))
            got = run(point, False)
            results.append((sum(got.values()) / len(got), point))
        results.sort(key=lambda r: -r[0])
        best = results[0][1]
        return {
            "grid": {k: list(v) for k, v in grid.items()},
            "default": {"point": default, "tune": run(default, False), "held": run(default, True)},
            "best": {"point": best, "tune": run(best, False), "held": run(best, True)},
            "top5": [{"point": p, "tune_mean": m} for m, p in results[:5]],
        }


DEFAULT_GRID: dict[str, Sequence[float]] = {
    "RRF_K": (3, 5, 10),
    "LEXICAL_WEIGHT": (0.3, 0.45, 0.7),
    "boost": (0.5, 1.0, 1.5),
    "COMMON_TERM_SHARE": (0.2, 0.4),
}


# -- report ---------------------------------------------------------------------------------------

#: Issue 14's language groups and targets (descriptive, identifier MRR@10). TypeScript is the mean
#: of its two sources (RxJS; Zod, TanStack and ProseMirror), so neither outweighs Go or Rust.
GROUPS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("Python + JavaScript", (("python",), ("javascript",))),
    ("Go + Rust + TypeScript", (("go",), ("rust",), ("typescript", "ts-libs"))),
)
TARGETS = {"descriptive": 0.65, "identifier": 0.92}


def measured(r: dict[str, Any]) -> dict[str, Any]:
    """The languages of a run that were measured (not skipped for missing sources)."""
    return {lang: v for lang, v in r["langs"].items() if "error" not in v}


def group_scores(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Each group's mean hybrid MRR@10 per kind over the languages measured (a language given by
    several sources counts as their mean), and the sources not measured."""
    langs = measured(r)
    out: list[dict[str, Any]] = []
    for name, members in GROUPS:
        present = [tuple(src for src in sources if src in langs) for sources in members]
        counted = [sources for sources in present if sources]
        if not counted:
            continue
        means = {
            kind: sum(
                sum(langs[src]["kenning"][kind]["hybrid"]["mrr@10"] for src in sources) / len(sources)
                for sources in counted
            )
            / len(counted)
            for kind in KINDS
        }
        missing = [
            src for sources, got in zip(members, present, strict=True) for src in sources if src not in got
        ]
        out.append({"group": name, "mrr@10": means, "missing": missing})
    return out


def below_naive(r: dict[str, Any]) -> list[str]:
    """The languages whose descriptive hybrid MRR@10 is below the naive windows'."""
    return [
        lang
        for lang, v in measured(r).items()
        if v["kenning"]["descriptive"]["hybrid"]["mrr@10"] < v["naive"]["descriptive"]["hybrid"]["mrr@10"]
    ]


#: What the reports call each language's source.
LABELS = {
    "python": "Python",
    "go": "Go",
    "rust": "Rust",
    "typescript": "TypeScript",
    "ts-libs": "TypeScript: Zod, TanStack, ProseMirror",
    "javascript": "JavaScript",
    "java": "Java",
    "kotlin": "Kotlin",
    "swift": "Swift",
    "objective-c": "Objective-C",
    "lua": "Lua",
    "c": "C",
    "cpp": "C++",
}


def markdown(r: dict[str, Any]) -> str:
    documented = r.get("documented", False)
    start, end = markers(documented, r.get("select_seed", SELECT_SEED))
    docs = (
        "Doc comments kept in the indexed copy, less the sentence each descriptive query is made of"
        if documented
        else "Doc comments blanked in the indexed copy"
    )
    lines = [
        start,
        f"### Multi-language retrieval quality: `{r['command']}` — {r['when']}",
        "",
        f"Sources (bench/mlcorpus.py says how to install them): {r['sources']}. {docs}"
        f"; a seeded subset of whole directories per language (selection seed"
        f" {r.get('select_seed', SELECT_SEED)}, budget {r['budget']:,} non-blank lines); descriptive"
        f" queries = a doc"
        f" comment's first sentence minus the item's name (seed {DESC_SEED}), identifier queries ="
        f" the name, `Owner name` where the name alone is ambiguous (seed {IDENT_SEED}). MRR@10;"
        f" naive = 40-line windows, same model input and hybrid search; no query adapter = kenning's"
        f" own store searched with the model's own query vectors (server/kenning/embedding/adapter.py).",
        "",
        "| language | files / chunks (naive) | queries d / i | descriptive hybrid | no query adapter"
        " | naive hybrid | kenning semantic | identifier hybrid | no query adapter | naive hybrid |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang, v in r["langs"].items():
        if "error" in v:
            lines.append(f"| {LABELS.get(lang, lang)} | {v['error']} | | | | | | | | |")
            continue
        k, n = v["kenning"], v["naive"]
        off = {kind: f"{v['no_adapter'][kind]['mrr@10']:.3f}" if "no_adapter" in v else "–" for kind in KINDS}
        lines.append(
            f"| {LABELS.get(lang, lang)} | {v['files']} / {v['chunks']['kenning']:,}"
            f" ({v['chunks']['naive']:,}) | {v['queries']['descriptive']} / {v['queries']['identifier']}"
            f" | {k['descriptive']['hybrid']['mrr@10']:.3f} | {off['descriptive']}"
            f" | {n['descriptive']['hybrid']['mrr@10']:.3f} | {k['descriptive']['semantic']['mrr@10']:.3f}"
            f" | {k['identifier']['hybrid']['mrr@10']:.3f} | {off['identifier']}"
            f" | {n['identifier']['hybrid']['mrr@10']:.3f} |"
        )
    owners = [
        f"{LABELS.get(lang, lang)} {v['owner_named']['named']}/{v['owner_named']['method_chunks']}"
        for lang, v in r["langs"].items()
        if "owner_named" in v
    ]
    if owners:
        lines += ["", "Method chunks whose model input names their owner: " + ", ".join(owners) + "."]
    groups = group_scores(r)
    if groups:
        lines += [
            "",
            "Issue 14's groups (hybrid MRR@10, the mean of the group's languages; TypeScript the mean of"
            " its two sources):",
            "",
            f"| group | descriptive (target {TARGETS['descriptive']}) | identifier (target"
            f" {TARGETS['identifier']}) | not measured |",
            "|---|---|---|---|",
        ]
        for g in groups:
            cells = [
                f"{g['mrr@10'][kind]:.3f} {'met' if g['mrr@10'][kind] >= TARGETS[kind] else 'missed'}"
                for kind in KINDS
            ]
            lines.append(
                f"| {g['group']} | {cells[0]} | {cells[1]} |"
                f" {', '.join(LABELS.get(m, m) for m in g['missing']) or '–'} |"
            )
        below = below_naive(r)
        lines += [
            "",
            "Below its naive windows (descriptive): "
            + (", ".join(LABELS.get(lang, lang) for lang in below) if below else "no language")
            + ".",
        ]
    t = r.get("tuning")
    if t:
        lines += [
            "",
            f"Fusion tuned on one half of every language's queries (split seed {SPLIT_SEED}),"
            f" held-out half below; default {t['default']['point']}, best {t['best']['point']}.",
            "",
            "| set | default tune | default held-out | best tune | best held-out |",
            "|---|---|---|---|---|",
        ]
        for key in t["default"]["held"]:
            lines.append(
                f"| {key} | {t['default']['tune'][key]:.3f} | {t['default']['held'][key]:.3f}"
                f" | {t['best']['tune'][key]:.3f} | {t['best']['held'][key]:.3f} |"
            )
    lines.append(end)
    return "\n".join(lines)


def run(
    work: Path,
    *,
    budget: int = BUDGET,
    queries: int = QUERIES,
    langs: Sequence[str] = LANGS,
    do_tune: bool = False,
    documented: bool = False,
    select_seed: int = SELECT_SEED,
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "budget": budget,
        "documented": documented,
        "select_seed": select_seed,
        "langs": {},
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    ready: list[Lang] = []
    sources = []
    from bench.mlcorpus import SOURCES

    for lang in langs:
        try:
            item = Lang(lang, work, budget, queries, documented=documented, select_seed=select_seed)
        except (OSError, subprocess.CalledProcessError) as exc:  # sources missing, npm offline
            r["langs"][lang] = {"error": str(exc)}
            log(str(exc))
            continue
        sources.append(f"{SOURCES[lang].label} (`{item.root}`)")
        item.build()
        r["langs"][lang] = item.evaluate()
        ready.append(item)
    r["sources"] = "; ".join(sources)
    if do_tune and ready:
        log("tuning fusion on all languages")
        r["tuning"] = tune(ready, DEFAULT_GRID)
    return r


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.multilang", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workdir", type=Path, default=Path.home() / ".cache" / "kenning-bench" / "multilang"
    )
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--tune", action="store_true")
    parser.add_argument(
        "--documented", action="store_true", help="doc comments kept, less the sentence each query is made of"
    )
    parser.add_argument("--output", type=Path, default=None, help="write the section into this Markdown file")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--select-seed",
        type=int,
        default=SELECT_SEED,
        help=f"the seed of each language's subset of directories (default {SELECT_SEED}, the sample tuned"
        " on; another is a sample nothing was tuned on: give it its own --workdir)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    r = run(
        work,
        budget=args.budget,
        queries=args.queries,
        langs=args.langs.split(","),
        do_tune=args.tune,
        documented=args.documented,
        select_seed=args.select_seed,
    )
    flags = [flag for flag, on in (("--tune", args.tune), ("--documented", args.documented)) if on]
    if args.select_seed != SELECT_SEED:
        flags.append(f"--select-seed {args.select_seed}")
    r["command"] = " ".join(["python -m bench.multilang", *flags])
    section = markdown(r)
    print(section)
    if args.json:
        args.json.write_text(json.dumps(r, indent=1, default=str), encoding="utf-8")
    if args.output:
        from bench import report

        start, end = markers(args.documented, args.select_seed)
        report.write(args.output, section, start=start, end=end)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
