"""``python -m bench [--quick | --smoke] [--output PATH] [--json PATH] [--workdir DIR] [--others]``

Runs every measure in one process, side by side, and writes the results section of
docs/performance.md (``--output`` elsewhere). ``--smoke`` is CI's: a few dozen files, one
repeat, no other servers; it proves the suite runs and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Plan:
    name: str
    subset: tuple[str, ...] | None
    model_tokens: tuple[int, ...]
    model_batches: tuple[int, ...]
    model_texts: int
    model_repeats: int
    raw_sample: int
    raw_repeats: int
    ab_chunks: int
    ab_repeats: int
    restarts: int
    cli_repeats: int
    saves: int
    small_chunks: int | None  # None: the base corpus itself
    large_chunks: int
    large_symbols: int
    latency_queries: int
    rounds: int
    symbol_queries: int
    quality_queries: int
    gate: bool
    tune: bool
    others: bool
    others_queries: int
    idle_s: float
    sharing_files: int | None = None  # the shared-cache step's clones: None = the whole corpus
    scale_chunks: int = 1_000_000  # the monorepo step's index (bench/scale.py)
    many_files: int = 100_000  # the many-files step's tree (bench/manyfiles.py)


def plans() -> dict[str, Plan]:
    from bench.corpus import QUICK_SUBSET, SMOKE_SUBSET

    return {
        "full": Plan(
            "full",
            None,
            (128, 256),
            (1, 8, 32),
            64,
            3,
            768,
            3,
            2_000,
            3,
            3,
            5,
            5,
            10_000,
            100_000,
            100_000,
            40,
            3,
            200,
            # 300 queries drew a semantic gap of 0.021 between the graphs that 1,500 put at 0.007
            # (session 40): the gate's 0.01 needs the larger sample.
            1_500,
            True,
            True,
            True,
            30,
            10.0,
        ),
        "quick": Plan(
            "quick",
            QUICK_SUBSET,
            (128, 256),
            (1, 16),
            32,
            2,
            256,
            2,
            800,
            2,
            2,
            3,
            3,
            None,
            30_000,
            30_000,
            20,
            2,
            100,
            100,
            True,
            True,
            False,
            20,
            5.0,
            scale_chunks=100_000,
            many_files=10_000,
        ),
        "smoke": Plan(
            "smoke",
            SMOKE_SUBSET,
            (128,),
            (1,),
            8,
            1,
            32,
            1,
            60,
            1,
            1,
            1,
            1,
            None,
            1_000,
            1_000,
            5,
            1,
            10,
            20,
            False,
            False,
            False,
            5,
            1.0,
            sharing_files=4,
            scale_chunks=2_000,
            many_files=300,
        ),
    }


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Runner:
    def __init__(self, plan: Plan, work: Path, args: argparse.Namespace) -> None:
        self.plan = plan
        self.work = work
        self.args = args
        self.r: dict[str, Any] = {}
        self.ws = work / "stdlib"
        self.errors: list[str] = []

    def step(self, name: str, fn: Any) -> None:
        log(f"{name} …")
        started = time.perf_counter()
        try:
            fn()
        except Exception as exc:  # one broken measure must not cost the others
            self.errors.append(f"{name}: {exc!r}")
            log(f"{name} FAILED: {exc!r}\n{traceback.format_exc()}")
            if self.args.fail_fast:
                raise
        log(f"{name} done in {time.perf_counter() - started:.0f} s")

    # -- the measures ------------------------------------------------------------------------

    def corpus(self) -> None:
        from bench.corpus import copy_stdlib, strip_docstrings

        # A reused --workdir must not turn the fresh-index measure into a restart; without that
        # step a kept index is reused (re-embedding the library takes tens of minutes).
        if self.args.only is None or "fresh" in self.args.only.split(","):
            shutil.rmtree(self.ws / ".kenning", ignore_errors=True)
        files = copy_stdlib(self.ws, self.plan.subset)
        self.files = files
        self.doc_candidates = []
        for rel in files:
            if rel.suffix == ".py":
                text = (self.ws / rel).read_text(encoding="utf-8", errors="surrogateescape")
                self.doc_candidates += strip_docstrings(rel.as_posix(), text)[1]
        scope = (
            "the whole library" if self.plan.subset is None else (f"a subset ({', '.join(self.plan.subset)})")
        )
        self.r["corpus"] = (
            f"the standard library of Python {sys.version.split()[0]} "
            f"(`{self._stdlib()}`), {scope}, without test/, tests/, idle_test/, site-packages/ "
            f"and __pycache__/: {len(files):,} files copied into a temporary workspace."
        )

    @staticmethod
    def _stdlib() -> str:
        from bench.corpus import stdlib_root

        return str(stdlib_root())

    def model(self) -> None:
        from bench.model import graph_rows, index_inputs, inputs_rate, load_encoders, token_stats

        p = self.plan
        encoders = load_encoders()
        rows = graph_rows(
            encoders,
            tokens=p.model_tokens,
            batches=p.model_batches,
            texts=p.model_texts,
            repeats=p.model_repeats,
        )
        self.r["model"] = {
            "graphs": rows,
            "repeats": p.model_repeats,
            "texts": p.model_texts,
            "variants": {v: e.model_id for v, e in encoders.items()},
        }
        del encoders
        from kenning.embedding import Encoder

        self.encoder = Encoder.load()  # the default, exactly what the server loads
        self.inputs = index_inputs(self.ws, self.work / "inputs-store")
        self.r["index"] = {
            "raw_before": inputs_rate(self.encoder, self.inputs, sample=p.raw_sample, repeats=p.raw_repeats),
            "raw_repeats": p.raw_repeats,
            "tokens": token_stats(self.encoder, self.inputs),
            "variant": self.encoder.variant,
        }

    def fresh(self) -> None:
        from bench.server import did_save, fresh_index, pick_file

        server, fresh = fresh_index(self.ws, "return value", timeout=3600, idle_s=self.plan.idle_s)
        self.r.setdefault("index", {})["fresh"] = fresh
        try:
            target = pick_file(self.ws, 1000)
            self.r["save"] = did_save(server, self.ws, target, self.plan.saves)
        finally:
            server.stop()
        from bench.model import inputs_rate

        idx = self.r["index"]
        if hasattr(self, "encoder"):
            idx["raw_after"] = inputs_rate(
                self.encoder, self.inputs, sample=self.plan.raw_sample, repeats=self.plan.raw_repeats
            )
            raw = (idx["raw_before"]["median"] + idx["raw_after"]["median"]) / 2
            idx["ratio_embed"] = fresh["embed_rate"] / raw
            idx["ratio_pipeline"] = fresh["pipeline_rate"] / raw
            # The same ratio in CPU time (raw CPU per chunk / the server's), less at the mercy
            # of whatever else the machine runs during the long indexing.
            raw_cpu = (idx["raw_before"]["cpu_per_chunk"] + idx["raw_after"]["cpu_per_chunk"]) / 2
            server_cpu = fresh["cpu_embed_phase_s"] / max(fresh["embedded"], 1)
            idx["ratio_embed_cpu"] = raw_cpu / server_cpu if server_cpu else None

    def first(self) -> None:
        """Start → the editor's open files semantically searchable, on a fresh copy of the
        whole library (the smoke plan: its subset), five files opened."""
        from bench.corpus import copy_stdlib
        from bench.first import opened_searchable, pick_opened

        smoke = self.plan.name == "smoke"
        ws = self.work / "stdlib-first"
        shutil.rmtree(ws, ignore_errors=True)
        files = copy_stdlib(ws, self.plan.subset if smoke else None)
        opened = pick_opened(ws, files, 1 if smoke else 5)
        self.r["first"] = opened_searchable(ws, opened, timeout=600)
        self.r["first"]["corpus_files"] = len(files)
        shutil.rmtree(ws, ignore_errors=True)

    def pipeline(self) -> None:
        """Indexing vs the bare model on the same chunks, alternated (the 0.9x target)."""
        from bench.model import pipeline_ab

        if not hasattr(self, "encoder"):
            from kenning.embedding import Encoder

            self.encoder = Encoder.load()
        self.r.setdefault("index", {})["ab"] = pipeline_ab(
            self.encoder,
            self.ws,
            self.work,
            target_chunks=self.plan.ab_chunks,
            repeats=self.plan.ab_repeats,
        )

    def restart(self) -> None:
        import compileall

        from bench.server import cli_reindex, server_restarts

        # Measured as installed: pip writes kenning's bytecode when it installs the wheel, while
        # an editable checkout under PYTHONDONTWRITEBYTECODE=1 compiles its ~35 modules on every
        # start (~0.15 s of CPU). Bytecode is read whatever that variable says.
        try:
            compileall.compile_dir(str(REPO / "server" / "kenning"), quiet=1)
        except OSError as exc:  # a read-only checkout: measured as it is
            log(f"restart: kenning's bytecode not written ({exc})")
        self.r["restart"] = {
            "server": server_restarts(self.ws, "return value", self.plan.restarts),
            "cli": cli_reindex(self.ws, self.plan.cli_repeats),
        }

    def _queries(self) -> tuple[list[str], list[str]]:
        import random

        from bench.corpus import docstring_queries
        from bench.fuzzy_latency import make_queries

        docs = docstring_queries(self.doc_candidates, self.plan.latency_queries, seed=99)
        rng = random.Random(98)
        names = self._symbol_names()
        idents = rng.sample(names, min(len(names), self.plan.latency_queries // 2))
        search_q = [d.query for d in docs[: self.plan.latency_queries - len(idents)]] + idents
        symbol_q = [q for _, q in make_queries(names, self.plan.symbol_queries, seed=7)]
        return search_q, symbol_q

    def _symbol_names(self) -> list[str]:
        conn = sqlite3.connect(f"file:{self.ws / '.kenning' / 'kenning.sqlite3'}?mode=ro", uri=True)
        try:
            return sorted({str(r[0]) for r in conn.execute("SELECT name FROM symbols")})
        finally:
            conn.close()

    def latency(self) -> None:
        from bench import seeded
        from bench.server import warm_latency

        p = self.plan
        base_db = self.ws / ".kenning" / "kenning.sqlite3"
        chunks = seeded.chunk_counts(base_db)
        symbols = seeded.chunk_counts(base_db, "symbols")
        search_q, symbol_q = self._queries()
        self.search_queries, self.symbol_q = search_q, symbol_q
        lat: dict[str, Any] = {"built": {}, "filters": {}}
        self.r["latency"] = lat
        spaces = {}
        # A kept --workdir holds the last run's copies: built again, from the base index as it is.
        for name in ("w10k", "w100k", "wsym"):
            shutil.rmtree(self.work / name, ignore_errors=True)
        small = self.work / "w10k"
        if p.small_chunks is None:
            seeded.write_sample(self.ws, small, sorted(chunks))
        else:
            seeded.write_sample(self.ws, small, seeded.sample_files(chunks, p.small_chunks))
        spaces["10k"] = small
        large = self.work / "w100k"
        seeded.write_replicas(self.ws, large, chunks, p.large_chunks)
        spaces["100k"] = large
        sym = self.work / "wsym"
        seeded.write_replicas(self.ws, sym, symbols, p.large_symbols)
        spaces["symbols"] = sym
        for key, ws in spaces.items():
            log(f"building the {key} index at {ws}")
            lat["built"][key] = seeded.build(ws, base_db)
        for key in ("10k", "100k"):
            ws = spaces[key]
            glob, selected, total = seeded.filter_glob(ws / ".kenning" / "kenning.sqlite3")
            lat["filters"][key] = f"`{glob}` ({selected:,} of {total:,} chunks)"
            log(f"latency at {key} ({total:,} chunks), filter {glob}")
            lat[key] = warm_latency(
                ws,
                search_q,
                modes=("hybrid", "semantic", "lexical"),
                filter_glob=glob,
                rounds=p.rounds,
                idle_s=p.idle_s if key == "100k" else 0.0,
            )
        log("workspace/symbol at the symbols index")
        res = warm_latency(sym, [], modes=(), filter_glob=None, rounds=p.rounds, symbol_queries=symbol_q)
        res["symbols"] = lat["built"]["symbols"]["symbols"]
        lat["symbols"] = res
        if not self.args.keep:
            for ws in spaces.values():
                shutil.rmtree(ws, ignore_errors=True)

    def _base_db(self) -> Path:
        """The base index, whose vectors the large trees reuse (built here for ``--only``)."""
        base_db = self.ws / ".kenning" / "kenning.sqlite3"
        if not base_db.exists():
            subprocess.run([sys.executable, "-m", "kenning", "index", "-q", str(self.ws)], check=True)
        return base_db

    def files(self) -> None:
        """100,000 files (bench/manyfiles.py): unchanged `kenning index`, restarts, didSave."""
        from bench.manyfiles import measure

        p = self.plan
        self.r["files"] = {}
        measure(
            self.ws,
            self._base_db(),
            self.work,
            files=p.many_files,
            restarts=p.restarts,
            cli_repeats=p.cli_repeats,
            saves=p.saves,
            keep=self.args.keep,
            out=self.r["files"],
        )

    def scale(self) -> None:
        """About a million chunks (bench/scale.py): search, symbols, memory, restarts, rebuild."""
        from bench.scale import measure

        p = self.plan
        base_db = self._base_db()
        search_q, symbol_q = self._queries()
        target = self.args.scale_chunks or p.scale_chunks
        self.r["scale"] = {"target": target}
        measure(
            self.ws,
            base_db,
            self.work,
            target=target,
            queries=search_q,
            symbol_queries=symbol_q,
            rounds=p.rounds,
            restarts=p.restarts,
            cli_repeats=p.cli_repeats,
            keep=self.args.keep,
            out=self.r["scale"],
        )

    def symbols(self) -> None:
        from bench import others
        from bench.server import warm_latency

        p = self.plan
        queries = getattr(self, "symbol_q", None) or self._queries()[1]
        queries = queries[: p.others_queries]
        out: dict[str, Any] = {"queries": len(queries)}
        self.r["symbols"] = out
        k = warm_latency(self.ws, [], modes=(), filter_glob=None, rounds=1, symbol_queries=queries)
        # The same keys as the other servers' (bench/others.py), so the table compares like
        # with like: the first query builds kenning's symbol index, as theirs warm up.
        out["kenning"] = {
            "version": "this tree",
            "first_query_ms": k.get("symbol_first_ms"),
            "results_mean": k.get("symbol_results_mean"),
            **k,
        }
        if not (p.others or self.args.others):
            return
        venv = Path(self.args.others_venv) if self.args.others_venv else self.work / "others-venv"
        versions = others.install(venv)
        for name, version in versions.items():
            if version.startswith("unavailable"):
                out[name] = {"skipped": version}
                continue
            log(f"workspace/symbol in {name} {version}")
            try:
                got = others.measure(name, venv, self.ws, queries, first_timeout=600, timeout=120)
            except Exception as exc:
                got = {"skipped": f"failed: {exc!r}"}
            out[name] = {"version": version, **got}

    def sharing(self) -> None:
        """A second clone's first index with the shared embedding cache, against the first's."""
        from bench.corpus import docstring_queries
        from bench.sharing import measure

        queries = getattr(self, "search_queries", None) or [
            d.query for d in docstring_queries(self.doc_candidates, self.plan.latency_queries, seed=99)
        ]
        self.r["sharing"] = measure(
            self.ws,
            self.work / "sharing",
            files=self.plan.sharing_files,
            queries=queries[: max(5, self.plan.latency_queries // 2)],
            repeats=max(1, min(3, self.plan.cli_repeats)),
        )

    def quality(self) -> None:
        from bench import quality
        from bench.corpus import docstring_queries, strip_tree

        p = self.plan
        ws = self.work / "nodoc"
        # With a reused --workdir the stores below are kept: an embedding cache keyed by the
        # exact model input, so only inputs that changed since are embedded again.
        shutil.copytree(self.ws, ws, ignore=shutil.ignore_patterns(".kenning"), dirs_exist_ok=True)
        candidates = strip_tree(ws, self.files)
        base_db = self.ws / ".kenning" / "kenning.sqlite3"
        store = self.work / "nodoc-store-optimized"
        built = quality.build_index(ws, store, "auto", base_db if base_db.exists() else None)
        with quality.open_engine(ws, store, "auto") as engine:
            indexed = {
                f for (f,) in engine.db.reader().execute("SELECT path FROM files WHERE skip_reason IS NULL")
            }
            queries = docstring_queries(candidates, p.quality_queries, seed=13, indexed=indexed)
            q: dict[str, Any] = {
                "queries": len(queries),
                "seed": 13,
                "chunks": built["chunks"],
                "built": {"optimized": built},
            }
            self.r["quality"] = q
            scores = quality.evaluate(engine, queries, ("lexical", "semantic", "hybrid"))
            q["optimized"] = {m: s.as_dict() for m, s in scores.items()}
            with quality.query_adapter_off(engine):
                scores = quality.evaluate(engine, queries, ("semantic", "hybrid"))
            q["no query adapter"] = {m: s.as_dict() for m, s in scores.items()}
            q["variant_default"] = engine.encoder().variant
            if p.tune:
                log("tuning fusion")
                q["tuning"] = quality.tune(engine, queries)
        if p.gate:
            store = self.work / "nodoc-store-original"
            log("embedding the docstring-free corpus with the original graph")
            q["built"]["original"] = quality.build_index(ws, store, "original", None)
            # The gate compares graphs: both without the query adapter, which maps queries the
            # same way whichever graph made the vectors.
            with quality.open_engine(ws, store, "original") as engine, quality.query_adapter_off(engine):
                scores = quality.evaluate(engine, queries, ("semantic", "hybrid"))
                q["original"] = {m: s.as_dict() for m, s in scores.items()}
            graphs = {(g["tokens"], g["batch"]): g for g in _get_list(self.r, "model", "graphs")}
            g = graphs.get((256, "default")) or graphs.get((max(p.model_tokens), "default"))
            # None when this run skipped the model step (``--only quality``): the gate then
            # judges quality alone and says so, rather than failing on a speed it never took.
            speedup = g["optimized"] / g["original"] if g else None
            mine = q["no query adapter"]
            d_sem = mine["semantic"]["mrr@10"] - q["original"]["semantic"]["mrr@10"]
            d_hyb = mine["hybrid"]["mrr@10"] - q["original"]["hybrid"]["mrr@10"]
            q["gate"] = {
                "speedup": speedup,
                "delta_semantic": d_sem,
                "delta_hybrid": d_hyb,
                "passes": bool((speedup is None or speedup > 1.0) and d_sem >= -0.01),
            }

    def endpoint(self) -> None:
        from bench.endpoint import measure

        self.r["endpoint"] = measure(self.ws, self.work, self.plan.name)

    def mcp(self) -> None:
        """``kenning mcp`` tool-call latency and answer sizes (bench/mcp_latency.py)."""
        from bench.mcp_latency import measure

        if not (self.ws / ".kenning" / "kenning.sqlite3").exists():  # --only mcp: index it first
            subprocess.run([sys.executable, "-m", "kenning", "index", "-q", str(self.ws)], check=True)
        search_q, symbol_q = self._queries()
        n = max(self.plan.latency_queries // 2, 5)
        got = measure(self.ws, search_q[:n], symbol_q[:n], rounds=1)
        self.r["mcp"] = got
        lat, size = got["latency_ms"], got["answer_chars"]
        log(
            "mcp: search_code p50 {:.0f} ms p95 {:.0f} ms; default answer {:.0f} chars vs {:.0f} as plain"
            " text".format(
                lat["search_code"]["p50"],
                lat["search_code"]["p95"],
                size["search_code_default"],
                size["same_hits_plain_text"],
            )
        )

    def multilang(self) -> None:
        """Python, Go, Rust, TypeScript, JavaScript, Java, C and C++ quality next to the naive 40-line
        hybrid (bench/multilang.py): in the full run or with --only (it embeds ~10,000 chunks
        from scratch, and its sources come from apt and npm)."""
        from bench import multilang

        if self.plan.name != "full" and self.args.only is None:
            return
        self.r["multilang"] = multilang.run(self.work / "multilang", do_tune=self.plan.tune)
        self.r["multilang"]["command"] = self.r["command"]


def _get_list(r: dict[str, Any], *path: str) -> list[Any]:
    node: Any = r
    for key in path:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, list) else []


def compile_kenning() -> None:
    """Compile kenning's bytecode, as ``pip install`` does: every start is then measured as a
    user's install starts. An editable install gets bytecode only from imports that may write
    it, and under PYTHONDONTWRITEBYTECODE (set on the machine of session 9) none may: each
    server start compiled all 86 of its modules from source, 0.1-0.2 s of a 1 s restart."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("kenning")
    assert spec is not None and spec.submodule_search_locations
    for location in spec.submodule_search_locations:
        compileall.compile_dir(location, quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a tenth of the library, fewer repeats")
    mode.add_argument("--smoke", action="store_true", help="CI: a few dozen files, one repeat")
    parser.add_argument(
        "--output",
        type=Path,
        default=REPO / "docs" / "performance.md",
        help="Markdown file whose results section is (re)written",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the raw results")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="work here (kept) instead of a temporary directory"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--others",
        action="store_true",
        help="compare with jedi-language-server and basedpyright (full: always)",
    )
    parser.add_argument("--others-venv", default=None, help="an existing venv holding the other servers")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated steps: model,fresh,first,pipeline,restart,latency,files,scale,symbols,sharing,"
        "quality,endpoint,mcp,multilang",
    )
    parser.add_argument(
        "--scale-chunks",
        type=int,
        default=None,
        help="the scale step's index size (default: full 1,000,000, quick 100,000, smoke 2,000)",
    )
    parser.add_argument("--fail-fast", action="store_true")
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Every measure but "sharing" indexes as a machine that has never seen the corpus: several
    # index the same files into new stores, which the shared embedding cache would turn into
    # copies. The "sharing" step switches it on, with a private cache directory.
    os.environ["KENNING_SHARED_CACHE"] = "0"
    sys.path.insert(0, str(REPO))
    compile_kenning()
    from bench import report
    from bench.machine import describe, load_now

    plan = plans()["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.workdir:
        work = args.workdir.resolve()
        work.mkdir(parents=True, exist_ok=True)
        args.keep = True
    else:
        work = Path(tempfile.mkdtemp(prefix="kenning-bench-"))
    started = time.perf_counter()
    runner = Runner(plan, work, args)
    runner.r["machine"] = describe()
    runner.r["command"] = (
        "python -m bench" + {"full": "", "quick": " --quick", "smoke": " --smoke"}[plan.name]
    )
    steps = [
        ("corpus", runner.corpus),
        ("model", runner.model),
        ("fresh", runner.fresh),
        ("first", runner.first),
        ("pipeline", runner.pipeline),
        ("restart", runner.restart),
        ("latency", runner.latency),
        ("symbols", runner.symbols),
        ("sharing", runner.sharing),
        ("quality", runner.quality),
        ("endpoint", runner.endpoint),
        ("mcp", runner.mcp),
        ("multilang", runner.multilang),
        ("files", runner.files),
        # Last: at a million chunks it is the longest step, and stopping it (Ctrl-C) still
        # leaves every other table to be written.
        ("scale", runner.scale),
    ]
    only = set(args.only.split(",")) | {"corpus"} if args.only else None
    try:
        for name, fn in steps:
            if only is None or name in only:
                try:
                    runner.step(name, fn)
                except KeyboardInterrupt:
                    runner.errors.append(f"{name}: interrupted (Ctrl-C); the steps after it did not run")
                    break
    finally:
        runner.r["seconds"] = time.perf_counter() - started
        runner.r["load_at_end"] = load_now()
        runner.r["errors"] = runner.errors
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(report.table(report.summary_rows(runner.r)))
    if runner.errors:
        print("\nerrors:\n  " + "\n  ".join(runner.errors))
    report.write(args.output, report.markdown(runner.r))
    if "multilang" in runner.r:
        from bench import multilang

        report.write(
            args.output, multilang.markdown(runner.r["multilang"]), start=multilang.START, end=multilang.END
        )
    print(f"\nresults written to {args.output}")
    if args.json:
        args.json.write_text(json.dumps(runner.r, indent=1, default=str), encoding="utf-8")
    return 1 if runner.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
