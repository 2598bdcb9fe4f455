"""Fit the query adapter (``server/kenning/embedding/data/query-adapter.npz``).

``python -m bench.query_adapter pairs --workdir DIR`` then
``python -m bench.query_adapter fit --workdir DIR [--out FILE]`` (``fit`` needs PyTorch, which
kenning itself never imports: ``pip install torch``; a CPU build fits in about a minute).

What it learns from: 65 libraries that are in no benchmark here (the multi-language set is the
Go, Rust, Java standard libraries' ``java.*``, RxJS, Zod/TanStack/ProseMirror, ESLint, glibc and
JUCE; the Python one is the standard library). The same pairs train the code layers
(``bench.layer_patch``), which is what they serve today: the shipped query adapter applies only
with the code layers off, and was fitted on the first 58 libraries at 0.4 × these budgets
(this file at commit 5484f31). Each library is a seeded subset with its doc comments stripped
(``bench.mlcorpus``), indexed by kenning with the packaged model; every documented function
gives a descriptive query (the doc comment's first sentence, the name removed) and every
function an identifier query, each with the chunks that overlap it as positives. Sources, from
the registries only (nothing is committed):

* Debian: ``apt-get install`` the packages in :data:`APT` (Go under ``/usr/share/gocode/src``,
  Rust crates under ``/usr/share/cargo/registry``, C++ headers under ``/usr/include``) and
  ``openjdk-17-source`` (modules other than ``java.base``, unzipped into ``DIR/src/jdk``);
* npm: ``npm pack`` of :data:`NPM` into ``DIR/src/npm`` (packages that ship their ``src/``);
* PyPI: ``pip download --no-binary :all:`` of :data:`PYPI` into ``DIR/src/py``.

``pairs`` fetches the npm and PyPI ones and unzips the JDK modules when they are missing; a
library whose sources are absent is skipped and said so.

The fit: ``q' = normalise(W q + b)``, ``W`` from the identity, the loss a softmax over all of
the library's chunks (temperature 0.03, the positives pooled) plus ``0.01 ||W - I||²``, Adam
(lr 1e-3, batches of 64 queries of one library, 20 epochs), averaged over seeds 0-4. Query
vectors only: chunk vectors are the model's own, so stores are not re-embedded.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench import mlcorpus, quality
from bench.corpus import DocQuery, docstring_queries
from kenning.indexer.chunks import embed_input

REPO = Path(__file__).resolve().parents[1]
SEEDS = 5
EPOCHS = 20
TEMPERATURE = 0.03
REGULARISATION = 0.01
LEARNING_RATE = 1e-3
BATCH = 64

APT = (
    "golang-golang-x-tools-dev",
    "golang-golang-x-net-dev",
    "golang-golang-x-text-dev",
    "golang-github-spf13-cobra-dev",
    "golang-github-prometheus-client-golang-dev",
    "golang-github-google-go-cmp-dev",
    "golang-github-sirupsen-logrus-dev",
    "golang-github-stretchr-testify-dev",
    "golang-github-burntsushi-toml-dev",
    "librust-regex-dev",
    "librust-tokio-dev",
    "librust-serde-dev",
    "librust-hashbrown-dev",
    "librust-itertools-dev",
    "librust-rayon-dev",
    "librust-bytes-dev",
    "librust-futures-util-dev",
    "librust-chrono-dev",
    "librust-nom-dev",
    "librust-indexmap-dev",
    "librust-petgraph-dev",
    "librust-rand-dev",
    "librust-smallvec-dev",
    "librust-num-traits-dev",
    "libeigen3-dev",
    "libfmt-dev",
    "nlohmann-json3-dev",
    "libspdlog-dev",
    "libglm-dev",
    "libboost1.81-dev",
    "openjdk-17-source",
)
NPM = (
    "effect@3.10.0",
    "@reduxjs/toolkit@2.2.7",
    "@trpc/server@10.45.2",
    "mobx@6.13.5",
    "@tanstack/query-core@5.59.0",
    "immer@10.1.1",
    "@tiptap/core@3.35.0",
    "msw@2.15.0",
    "@tanstack/db@0.15.2",
    "@effect/platform@0.97.2",
    "@effect/cli@0.77.2",
    "@trpc/client@11.25.2",
    "redux@5.0.1",
    "reselect@5.3.0",
)
PYPI = (
    "networkx==3.3",
    "click==8.1.7",
    "rich==13.7.1",
    "attrs==24.2.0",
    "werkzeug==3.0.4",
    "jinja2==3.1.4",
    "boltons==24.0.0",
    "more-itertools==10.5.0",
    "toolz==0.12.1",
)
JDK_MODULES = (
    "java.sql",
    "java.net.http",
    "jdk.httpserver",
    "java.logging",
    "java.xml",
    "java.desktop",
    "java.management",
    "jdk.jfr",
)

_G = "/usr/share/gocode/src/"
_R = "/usr/share/cargo/registry/"
# (language, name, root: absolute, or {npm}/{py}/{jdk} below the workdir's src/, code-line budget)
LIBRARIES: tuple[tuple[str, str, str, int], ...] = (
    ("go", "x-tools", _G + "golang.org/x/tools", 35000),
    ("go", "x-net", _G + "golang.org/x/net", 25000),
    ("go", "x-text", _G + "golang.org/x/text", 20000),
    ("go", "cobra", _G + "github.com/spf13/cobra", 10000),
    ("go", "prom", _G + "github.com/prometheus/client_golang", 20000),
    ("go", "gocmp", _G + "github.com/google/go-cmp", 10000),
    ("go", "logrus", _G + "github.com/sirupsen/logrus", 7500),
    ("go", "testify", _G + "github.com/stretchr/testify", 12500),
    ("go", "protobuf", _G + "google.golang.org/protobuf", 25000),
    ("go", "toml", _G + "github.com/BurntSushi/toml", 7500),
    ("rust", "regex", _R + "regex-1.7.1/src", 15000),
    ("rust", "regex-syntax", _R + "regex-syntax-0.6.27/src", 20000),
    ("rust", "tokio", _R + "tokio-1.24.2/src", 30000),
    ("rust", "serde", _R + "serde-1.0.152/src", 15000),
    ("rust", "hashbrown", _R + "hashbrown-0.12.3/src", 15000),
    ("rust", "itertools", _R + "itertools-0.10.3/src", 15000),
    ("rust", "rayon", _R + "rayon-1.6.1/src", 20000),
    ("rust", "bytes", _R + "bytes-1.2.1/src", 10000),
    ("rust", "futures-util", _R + "futures-util-0.3.21/src", 20000),
    ("rust", "chrono", _R + "chrono-0.4.23/src", 15000),
    ("rust", "nom", _R + "nom-7.1.1/src", 12500),
    ("rust", "indexmap", _R + "indexmap-1.9.2/src", 10000),
    ("rust", "petgraph", _R + "petgraph-0.6.2/src", 15000),
    ("rust", "rand", _R + "rand-0.8.5/src", 10000),
    ("rust", "smallvec", _R + "smallvec-1.9.0/src", 7500),
    ("rust", "num-traits", _R + "num-traits-0.2.15/src", 10000),
    ("typescript", "effect", "{npm}/effect-3.10.0/package/src", 50000),
    ("typescript", "redux-toolkit", "{npm}/reduxjs-toolkit-2.2.7/package/src", 20000),
    ("typescript", "trpc", "{npm}/trpc-server-10.45.2/package/src", 12500),
    ("typescript", "mobx", "{npm}/mobx-6.13.5/package/src", 15000),
    ("typescript", "query-core", "{npm}/tanstack-query-core-5.59.0/package/src", 12500),
    ("typescript", "immer", "{npm}/immer-10.1.1/package/src", 7500),
    ("typescript", "tiptap", "{npm}/tiptap-core-3.35.0/package/src", 20000),
    ("java", "jdk-sql", "{jdk}/java.sql", 15000),
    ("java", "jdk-http", "{jdk}/java.net.http", 15000),
    ("java", "jdk-httpserver", "{jdk}/jdk.httpserver", 10000),
    ("java", "jdk-logging", "{jdk}/java.logging", 10000),
    ("java", "jdk-xml", "{jdk}/java.xml", 20000),
    ("java", "jdk-swingtext", "{jdk}/java.desktop", 20000),
    ("java", "jdk-management", "{jdk}/java.management", 15000),
    ("java", "jdk-jfr", "{jdk}/jdk.jfr", 15000),
    ("cpp", "eigen", "/usr/include/eigen3/Eigen/src", 25000),
    ("cpp", "fmt", "/usr/include/fmt", 10000),
    ("cpp", "nlohmann", "/usr/include/nlohmann", 15000),
    ("cpp", "spdlog", "/usr/include/spdlog", 10000),
    ("cpp", "glm", "/usr/include/glm", 12500),
    ("cpp", "boost-container", "/usr/include/boost/container", 15000),
    ("cpp", "boost-graph", "/usr/include/boost/graph", 15000),
    ("cpp", "boost-asio", "/usr/include/boost/asio", 20000),
    ("python", "networkx", "{py}/networkx-3.3/networkx", 35000),
    ("python", "click", "{py}/click-8.1.7/src", 12500),
    ("python", "rich", "{py}/rich-13.7.1/rich", 20000),
    ("python", "attrs", "{py}/attrs-24.2.0/src", 10000),
    ("python", "werkzeug", "{py}/werkzeug-3.0.4/src", 17500),
    ("python", "jinja2", "{py}/jinja2-3.1.4/src", 15000),
    ("python", "boltons", "{py}/boltons-24.0.0/boltons", 15000),
    ("python", "more-itertools", "{py}/more-itertools-10.5.0/more_itertools", 7500),
    ("python", "toolz", "{py}/toolz-0.12.1/toolz", 7500),
    ("typescript", "msw", "{npm}/msw-2.15.0/package/src", 10000),
    ("typescript", "tanstack-db", "{npm}/tanstack-db-0.15.2/package/src", 10000),
    ("typescript", "effect-platform", "{npm}/effect-platform-0.97.2/package/src", 10000),
    ("typescript", "effect-cli", "{npm}/effect-cli-0.77.2/package/src", 5000),
    ("typescript", "trpc-client", "{npm}/trpc-client-11.25.2/package/src", 5000),
    ("typescript", "redux", "{npm}/redux-5.0.1/package/src", 3000),
    ("typescript", "reselect", "{npm}/reselect-5.3.0/package/src", 3000),
)

_SKIP_DIRS = frozenset(
    {
        "tests",
        "test",
        "testdata",
        "vendor",
        "examples",
        "example",
        "_examples",
        "benches",
        "bench",
        "docs",
        "doc",
        "__tests__",
        "node_modules",
        "fuzz",
        "testing",
        "testutil",
        "dtslint",
    }
)
_EXTS = {
    "go": (".go",),
    "rust": (".rs",),
    "typescript": (".ts",),
    "python": (".py",),
    "java": (".java",),
    "cpp": (".h", ".hpp", ".cpp", ".cc"),
    "c": (".c",),
}
_SKIP_SUFFIXES = {
    "go": ("_test.go",),
    "rust": ("/tests.rs", "/benches.rs"),
    "typescript": (".d.ts", ".spec.ts", ".test.ts", ".test-d.ts"),
    "python": ("/conftest.py", "/setup.py"),
    "java": ("/package-info.java", "/module-info.java"),
    "cpp": (),
    "c": (),
}


def log(msg: str) -> None:
    print(f"[query-adapter] {msg}", file=sys.stderr, flush=True)


# -- pairs ----------------------------------------------------------------------------------------


def fetch_sources(src: Path) -> None:
    """The npm and PyPI sources and the JDK modules, where missing (Debian's are installed by hand)."""
    npm = src / "npm"
    npm.mkdir(parents=True, exist_ok=True)
    for spec in NPM:
        stem = spec.lstrip("@").replace("/", "-").replace("@", "-")
        if (npm / stem).is_dir():
            continue
        out = subprocess.run(["npm", "pack", spec, "--silent"], cwd=npm, capture_output=True, text=True)
        tarball = npm / (out.stdout.strip().splitlines() or [""])[-1]
        if out.returncode != 0 or not tarball.is_file():
            log(f"npm pack {spec} failed: {out.stderr.strip()[:200]}")
            continue
        (npm / stem).mkdir()
        subprocess.run(["tar", "xzf", str(tarball), "-C", str(npm / stem)], check=True)
    py = src / "py"
    py.mkdir(parents=True, exist_ok=True)
    for spec in PYPI:
        stem = spec.replace("==", "-")
        if (py / stem).is_dir():
            continue
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", spec],
            cwd=py,
            check=False,
        )
        for archive in py.glob(f"{stem}.tar.gz"):
            subprocess.run(["tar", "xzf", str(archive), "-C", str(py)], check=True)
    jdk = src / "jdk"
    if not jdk.is_dir() and Path(mlcorpus.JDK_SRC).is_file():
        jdk.mkdir(parents=True)
        patterns = [f"{m}/*" for m in JDK_MODULES]
        subprocess.run(["unzip", "-q", "-o", mlcorpus.JDK_SRC, *patterns, "-d", str(jdk)], check=False)


def _positives(
    engine: Any, queries: list[DocQuery]
) -> tuple[list[str], np.ndarray, list[list[int]], np.ndarray, list[str]]:
    """Query texts and vectors (the model's own), their positive chunks, every chunk vector and
    every chunk's model input (what ``bench.layer_patch`` trains on)."""
    conn = engine.db.reader()
    rows = conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, c.header, c.text"
        " FROM chunks c JOIN files f ON f.id = c.file_id"
    ).fetchall()
    ids, vectors = engine.db.vectors_for([r[0] for r in rows], conn)
    where = {r[0]: r[1:] for r in rows}
    by_path: dict[str, list[tuple[int, int, int]]] = {}
    inputs: list[str] = []
    for row, chunk_id in enumerate(ids):
        path, start, end, header, text = where[chunk_id]
        by_path.setdefault(path, []).append((row, start, end))
        inputs.append(embed_input(path, header, text))
    encoder = engine.encoder()
    texts: list[str] = []
    qvecs: list[np.ndarray] = []
    positives: list[list[int]] = []
    for q in queries:
        hits = sorted(
            {
                row
                for path, lo, hi in ((q.path, q.start_line, q.end_line), *q.also)
                for row, start, end in by_path.get(path, [])
                if start <= hi and end >= lo
            }
        )
        if hits:
            texts.append(q.query)
            qvecs.append(encoder.embed_query(q.query))
            positives.append(hits)
    dim = vectors.shape[1] if len(vectors) else 0
    return texts, np.array(qvecs, dtype=np.float32).reshape(-1, dim), positives, vectors, inputs


def library_pairs(
    lang: str, name: str, root: Path, budget: int, work: Path, out: Path, *, documented: float = 0.0
) -> None:
    key = f"adapter-{name}"
    mlcorpus.SOURCES[key] = mlcorpus.Source(lang, name, _EXTS[lang], ("",), _SKIP_DIRS, _SKIP_SUFFIXES[lang])
    saved = mlcorpus.SOURCES[lang]
    mlcorpus.SOURCES[lang] = mlcorpus.SOURCES[key]  # prepare() reads the source by language
    try:
        prep = mlcorpus.prepare(lang, root, work / "ws", budget=budget, seed=7, documented=documented)
    finally:
        mlcorpus.SOURCES[lang] = saved
    indexed = set(prep.files)
    descriptive = docstring_queries(prep.descriptive, 1_000_000, seed=13, indexed=indexed)
    identifier = mlcorpus.identifier_queries(prep.identifiers, 1_000_000, seed=17, indexed=indexed)
    built = quality.build_index(work / "ws", work / "store", "auto", None)
    with quality.open_engine(work / "ws", work / "store", "auto") as engine:
        dt, dq, dp, chunks, inputs = _positives(engine, descriptive)
        it, iq, ip, _, _ = _positives(engine, identifier)
    log(f"{name} ({lang}): {len(prep.files)} files, {built['chunks']} chunks, {len(dt)} + {len(it)} queries")
    np.savez_compressed(
        out,
        lang=lang,
        chunks=chunks.astype(np.float16),
        queries=np.concatenate([dq, iq]),
        chunk_texts=np.array(inputs, dtype=str),
        query_texts=np.array(dt + it, dtype=str),
        kinds=np.array(["d"] * len(dt) + ["i"] * len(it)),
        positive_rows=np.concatenate([np.array(p, dtype=np.int32) for p in dp + ip]),
        positive_counts=np.array([len(p) for p in dp + ip], dtype=np.int32),
    )


def pairs(workdir: Path, *, documented: float = 0.0) -> None:
    os.environ["KENNING_QUERY_ADAPTER"] = "0"  # the pairs hold the model's own query vectors
    src = workdir / "src"
    fetch_sources(src)
    places = {"npm": str(src / "npm"), "py": str(src / "py"), "jdk": str(src / "jdk")}
    (workdir / "pairs").mkdir(parents=True, exist_ok=True)
    for lang, name, root, budget in LIBRARIES:
        out = workdir / "pairs" / f"{name}.npz"
        path = Path(root.format(**places))
        if out.exists():
            continue
        if not path.is_dir():
            log(f"{name}: {path} is missing, skipped (see this module's docstring)")
            continue
        library_pairs(lang, name, path, budget, workdir / "libraries" / name, out, documented=documented)


# -- fit ------------------------------------------------------------------------------------------


def fit(workdir: Path, out: Path) -> None:
    import torch  # only here: kenning never needs it

    libraries = []
    for path in sorted(glob.glob(str(workdir / "pairs" / "*.npz"))):
        with np.load(path, allow_pickle=False) as data:
            counts = data["positive_counts"]
            if not len(counts):
                continue
            rows = np.split(data["positive_rows"], np.cumsum(counts)[:-1])
            chunks = torch.nn.functional.normalize(torch.tensor(data["chunks"].astype(np.float32)), dim=1)
            mask = torch.zeros(len(counts), len(chunks), dtype=torch.bool)
            for i, r in enumerate(rows):
                mask[i, torch.tensor(r, dtype=torch.long)] = True
            libraries.append((torch.tensor(data["queries"]), chunks, mask))
    log(f"{len(libraries)} libraries, {sum(len(q) for q, _, _ in libraries)} queries")
    dim = libraries[0][1].shape[1]
    eye = torch.eye(dim)
    weights, biases = [], []
    for seed in range(SEEDS):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        w = torch.nn.Parameter(torch.eye(dim))
        b = torch.nn.Parameter(torch.zeros(dim))
        optimiser = torch.optim.Adam([w, b], lr=LEARNING_RATE)
        batches = [(i, s) for i, (q, _, _) in enumerate(libraries) for s in range(0, len(q), BATCH)]
        for epoch in range(EPOCHS):
            rng.shuffle(batches)
            orders = [torch.randperm(len(q)) for q, _, _ in libraries]
            total = 0.0
            for i, start in batches:
                queries, chunks, mask = libraries[i]
                picked = orders[i][start : start + BATCH]
                mapped = torch.nn.functional.normalize(queries[picked] @ w.T + b, dim=1)
                logits = mapped @ chunks.T / TEMPERATURE
                positive = torch.logsumexp(logits.masked_fill(~mask[picked], -1e9), dim=1)
                loss = (torch.logsumexp(logits, dim=1) - positive).mean()
                loss = loss + REGULARISATION * ((w - eye) ** 2).sum()
                optimiser.zero_grad()
                loss.backward()  # type: ignore[no-untyped-call]
                optimiser.step()
                total += float(loss.detach())
            log(f"seed {seed} epoch {epoch}: loss {total / len(batches):.4f}")
        weights.append(w.detach().clone())
        biases.append(b.detach().clone())
    from kenning.embedding.encoder import patched_model
    from kenning.embedding.model import resolve_model

    # The file the queries were embedded with: the packaged one with its code-tuned layer.
    spec = resolve_model(None)
    source, _ = patched_model(spec.onnx_path.read_bytes(), spec)
    source_sha = hashlib.sha256(source).hexdigest()
    np.savez_compressed(
        out,
        w=torch.stack(weights).mean(0).numpy().astype(np.float16),
        b=torch.stack(biases).mean(0).numpy().astype(np.float16),
        source_sha=np.array(source_sha),
    )
    log(f"wrote {out} ({out.stat().st_size:,} bytes) for model file sha256 {source_sha[:16]}…")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.query_adapter", description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("pairs", "fit"))
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=REPO / "server/kenning/embedding/data/query-adapter.npz")
    ap.add_argument(
        "--documented",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="pairs: the share of files indexed with their doc comments kept (default 0: all stripped)",
    )
    args = ap.parse_args(argv)
    if args.step == "pairs":
        pairs(args.workdir, documented=args.documented)
    else:
        fit(args.workdir, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
