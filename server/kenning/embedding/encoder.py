"""The encoder: texts in, L2-normalised float32 vectors out (tokenizer + ONNX session).

Owns :class:`Encoder` and :class:`EmbeddingCancelled`. Inputs are tokenized once, sorted by
length and cut into batches whose padded size (``batch x longest``) stays within a token
budget, which bounds onnxruntime's working memory whatever the input mix (512 x 32 tokens
once took the process to 4.7 GB); results come back in input order. The session may run
the optimised graph (``graph.py``, cached by ``cache.py``; one text per call, see
``Encoder.max_batch``) or the model as shipped.

Lanes: the optimised graph runs one text per call, and one call split over two cores spends
much of its time handing work between them. So that graph's session runs single-threaded
and ``Encoder.lanes`` calls run side by side, one per core, each taking the next batch
(measured on two cores, alternated: 1.17x the chunks/s at 256 tokens, 1.28x at 128, 2x at
32; the vectors are bit-identical). A lone text (a query) runs on one core, where a query's
few tokens are as fast as on two.

Thread-safety: ``embed_documents``/``embed_query``/``count_tokens`` may be called from several
threads at once. ``InferenceSession.run`` is thread-safe, and the two tokenizers are configured
once in ``load`` and only read afterwards (``enable_truncation`` mutates a tokenizer).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from kenning.embedding.adapter import QueryAdapter, load_adapter
from kenning.embedding.cache import load_or_build, read_failure, record_failure, sha256_hex
from kenning.embedding.graph import RECIPE, UNFUSED_AT_LOAD, OptimizationError, optimize_graph
from kenning.embedding.layer_patch import load_patch, replace_initializers
from kenning.embedding.model import LAYER_PATCH_SUFFIX, ModelError, ModelSpec, resolve_model

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = ["EmbeddingCancelled", "Encoder", "Variant", "patched_model"]

log = logging.getLogger(__name__)

Variant = Literal["auto", "optimized", "original"]
_VARIANTS = ("auto", "optimized", "original")
#: The variant tag of the model as shipped (the optimised one is ``graph.RECIPE``).
ORIGINAL = "original"
#: Texts tokenized (and sorted) at a time: bounds the Encoding objects held at once, while
#: being large enough that sorting by length leaves little padding.
_WINDOW = 2048
#: The graph inputs we know how to fill.
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: An optimised graph must agree with the original on the probe texts (cosine of the pooled
#: vectors) or it is rejected. This catches a broken rewrite (cosines of 0.1-0.8), not fine
#: quality: int8 activations measured mean 0.994 on code, 0.97 on the empty text.
_MIN_COSINE = 0.95
_MIN_MEAN_COSINE = 0.98
_PROBE_TEXTS = (
    "read the configuration file and return the parsed settings",
    "def parse_header(line: str) -> tuple[str, str]:\n    name, _, value = line.partition(':')\n"
    "    return name.strip().lower(), value.strip()",
    "retry the request with exponential backoff",
    "",
    "class LRUCache:\n    def __init__(self, size):\n        self.data = OrderedDict()\n"
    "        self.size = size\n\n    def get(self, key):\n        self.data.move_to_end(key)\n"
    "        return self.data[key]\n" * 6,
    "SELECT name, count(*) FROM users GROUP BY name HAVING count(*) > 1",
    "function debounce(fn, ms) { let t; return (...a) => { clearTimeout(t); "
    "t = setTimeout(() => fn(...a), ms); }; }",
    "## Installation\n\nRun `pip install kenning`, then point your editor at `kenning`.",
)


#: Operators worth naming in the log line of a build.
_FUSED_OPS = ("FusedDynamoAttention", "QAttention", "LayerNormalization", "BiasGelu", "MatMulInteger")


class EmbeddingCancelled(Exception):
    """``should_stop`` returned True between two batches; nothing was returned."""


class Encoder:
    """A loaded embedding model. Create with :meth:`Encoder.load`.

    ``model_id`` names exactly what produced the vectors:
    ``"<spec id>:<sha256 of model.onnx, 16 hex>:<variant tag>:<inputs digest, 8 hex>"``, where
    the variant tag is ``"original"`` or the optimisation recipe (``"optimized-v2"``) and the
    inputs digest covers the tokenizer file and every setting that shapes the model's input
    or output (max_tokens, prefixes, pooling, normalize). Two encoders with equal ids give
    equal vectors.
    """

    model_id: str
    dim: int
    max_tokens: int
    variant: str  # "optimized" or "original": the graph actually in use
    token_budget: int  # at most this many padded tokens per onnxruntime call
    max_batch: int | None  # at most this many texts per call (None: the budget decides);
    # 1 for a graph with dynamically quantised activations, see _max_batch_for
    lanes: int  # onnxruntime calls run side by side (each single-threaded when > 1)
    spec: ModelSpec
    query_adapter: QueryAdapter | None  # applied to query vectors only (embedding/adapter.py)

    def __init__(
        self,
        *,
        spec: ModelSpec,
        session: ort.InferenceSession,
        tokenizer: Tokenizer,
        count_tokenizer: Tokenizer | None = None,
        pad_id: int,
        max_tokens: int,
        token_budget: int,
        variant: str,
        model_id: str,
        max_batch: int | None = None,
        lanes: int = 1,
    ) -> None:
        """Internal: use :meth:`load`."""
        self.spec = spec
        self.max_tokens = max_tokens
        self.token_budget = token_budget
        self.variant = variant
        self.max_batch = max_batch
        self.lanes = max(1, lanes)
        self.model_id = model_id
        self.query_adapter = None
        self._session = session
        self._tokenizer = tokenizer
        self._count_tokenizer = count_tokenizer
        self._count_lock = threading.Lock()
        self._pad_id = pad_id
        self._inputs = _input_types(session, spec.onnx_path)
        self._output, self._output_rank = _pick_output(session, spec.onnx_path)
        self.dim = self._probe_dim()

    # -- loading ----------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        model: str | Path | None = None,
        *,
        variant: Variant | str = "auto",
        threads: int = 0,
        max_tokens: int | None = None,
        token_budget: int = 4096,
        query_adapter: bool = True,
        layer_patch: bool = True,
    ) -> Encoder:
        """Load ``model`` (None = the packaged all-MiniLM-L6-v2 int8).

        ``variant``: "original" runs the graph as shipped; "optimized" the optimised graph
        (built once and cached; :class:`ModelError` if it cannot be built); "auto" the
        optimised one when it can be had, else the original with a warning.
        ``threads``: cores the model may use, 0 = all physical cores (the optimised graph
        runs that many single-threaded lanes, the original graph that many onnxruntime
        intra-op threads). ``max_tokens``: truncate here instead of at the model's maximum.
        ``token_budget``: at most this many (padded) tokens per onnxruntime call.
        ``query_adapter``: map query vectors with the model's adapter when it has one fitted
        for exactly this model file (False: queries get the model's own vectors).
        ``layer_patch``: apply the model's code-tuned layer when it has one made for exactly
        this model file (False: the file's own weights; another model id, so a store made
        with the other weights re-embeds).
        """
        if variant not in _VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(_VARIANTS)}, not {variant!r}")
        if threads < 0:
            raise ValueError(f"threads must be >= 0 (0 = all cores), not {threads}")
        if token_budget < 1:
            raise ValueError(f"token_budget must be >= 1, not {token_budget}")
        if max_tokens is not None and max_tokens < 2:
            raise ValueError(f"max_tokens must be >= 2 ([CLS] and [SEP]), not {max_tokens}")
        started = time.perf_counter()
        spec = resolve_model(model)
        limit = max_tokens if max_tokens is not None else spec.max_tokens
        try:
            source = spec.onnx_path.read_bytes()
        except OSError as exc:
            raise ModelError(f"cannot read the model {spec.onnx_path}: {exc}") from exc
        if layer_patch:
            source, spec = patched_model(source, spec)
        tokenizer = _load_tokenizer(spec.tokenizer_path, truncate_at=limit)
        pad_id = _pad_id(tokenizer)
        options = _session_options(threads)
        cores = threads or physical_cores()
        source_sha = sha256_hex(source)

        def make(session: ort.InferenceSession, tag: str, max_batch: int | None = None) -> Encoder:
            return cls(
                spec=spec,
                session=session,
                tokenizer=tokenizer,
                pad_id=pad_id,
                max_tokens=limit,
                token_budget=token_budget,
                variant="original" if tag == ORIGINAL else "optimized",
                model_id=_model_id(spec, source_sha, tag, limit),
                max_batch=max_batch,
                lanes=cores if max_batch == 1 else 1,
            )

        encoder: Encoder | None = None
        if variant != "original":
            lane_options = _session_options(1) if cores > 1 else options
            encoder = _load_optimized(source, source_sha, spec, options, lane_options, make, variant)
        if encoder is None:
            encoder = make(_session(source, options, spec.onnx_path), ORIGINAL)
        if query_adapter:
            encoder.query_adapter = _adapter_for(spec, source_sha, encoder.dim)
        log.info(
            "embedding model %s loaded (%s graph, %d dims, max %d tokens, %d lane(s), query adapter %s)"
            " in %.2f s",
            encoder.model_id,
            encoder.variant,
            encoder.dim,
            limit,
            encoder.lanes,
            "on" if encoder.query_adapter is not None else "off",
            time.perf_counter() - started,
        )
        return encoder

    # -- embedding --------------------------------------------------------------------------

    def embed_documents(
        self, texts: Sequence[str], should_stop: Callable[[], bool] | None = None
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32 vectors, in input order; applies the document prefix.

        ``should_stop`` is polled before every batch; when it returns True,
        :class:`EmbeddingCancelled` is raised.
        """
        return self._embed(texts, self.spec.document_prefix, should_stop)

    def embed_query(self, text: str) -> np.ndarray:
        """The ``(dim,)`` float32 vector of one query; applies the query prefix, then the query
        adapter when one is loaded."""
        vectors: np.ndarray = self._embed([text], self.spec.query_prefix, None)
        first: np.ndarray = vectors[0]
        if self.query_adapter is not None:
            return self.query_adapter.apply(first)
        return first

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text takes as a document (with the document prefix and the special
        tokens), before truncation; compare with ``max_tokens``."""
        prefix = self.spec.document_prefix
        with self._count_lock:
            # Loaded on first use: only the benchmark counts, and a load costs 45 ms of every start.
            if self._count_tokenizer is None:
                self._count_tokenizer = _load_tokenizer(self.spec.tokenizer_path, truncate_at=None)
            counter = self._count_tokenizer
        encodings = counter.encode_batch([prefix + _clean(t) for t in texts])
        return [len(e.ids) for e in encodings]

    def _embed(self, texts: Sequence[str], prefix: str, should_stop: Callable[[], bool] | None) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _WINDOW):
            window = [prefix + _clean(t) for t in texts[start : start + _WINDOW]]
            ids = [e.ids for e in self._tokenizer.encode_batch(window)]
            lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
            # Longest first: the biggest batch runs at once, so memory trouble shows early
            # (and, in lanes, the short tail evens out the lanes' finishing times).
            order = np.argsort(-lengths, kind="stable")
            batches = [order[b] for b in plan_batches(lengths[order], self.token_budget, self.max_batch)]
            vectors = self._run_all([[ids[i] for i in rows] for rows in batches], should_stop)
            for rows, batch_vectors in zip(batches, vectors, strict=True):
                out[start + rows] = batch_vectors
        return out

    def _run_all(
        self, batches: list[list[list[int]]], should_stop: Callable[[], bool] | None
    ) -> list[np.ndarray]:
        """Every batch's vectors, in order: in turn, or in up to ``lanes`` threads that each
        take the next batch not yet taken (the calling thread is one of them)."""
        results: list[np.ndarray | None] = [None] * len(batches)
        taken = 0
        failures: list[BaseException] = []
        lock = threading.Lock()

        def lane() -> None:
            nonlocal taken
            while True:
                with lock:
                    if failures or taken == len(batches):
                        return
                    index = taken
                    taken += 1
                try:
                    if should_stop is not None and should_stop():
                        raise EmbeddingCancelled("embedding cancelled")
                    results[index] = self._run(batches[index])
                except BaseException as exc:  # handed to the caller, who re-raises it
                    with lock:
                        failures.append(exc)
                    return

        helpers = [
            threading.Thread(target=lane, name="kenning-embed-lane", daemon=True)
            for _ in range(min(self.lanes, len(batches)) - 1)
        ]
        for helper in helpers:
            helper.start()
        lane()
        for helper in helpers:
            helper.join()
        if failures:
            raise failures[0]
        return [r for r in results if r is not None]

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        """Pooled (and normalised) vectors of one batch of token id lists."""
        width = max(len(row) for row in batch)
        input_ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for r, row in enumerate(batch):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        arrays = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),  # single-segment inputs
        }
        feed: dict[str, np.ndarray] = {
            name: arrays[name].astype(dtype, copy=False) for name, dtype in self._inputs
        }
        (hidden,) = self._session.run([self._output], feed)
        return _pool(
            hidden, mask, self.spec.pooling if self._output_rank == 3 else "none", self.spec.normalize
        )

    def _probe_dim(self) -> int:
        declared = self._session.get_outputs()
        for out in declared:
            if out.name == self._output and isinstance(out.shape[-1], int) and out.shape[-1] > 0:
                return int(out.shape[-1])
        # A dynamic last dimension: ask the graph.
        ids = self._tokenizer.encode("probe").ids
        return int(self._run([ids]).shape[1])

    def __repr__(self) -> str:
        return f"Encoder({self.model_id!r}, dim={self.dim}, variant={self.variant!r})"


# -- batching ---------------------------------------------------------------------------------


def plan_batches(sorted_lengths: np.ndarray, token_budget: int, max_batch: int | None = None) -> list[slice]:
    """Cut lengths sorted longest-first into slices with ``len(slice) x longest <= budget``
    (and at most ``max_batch`` long).

    The first (longest) item of a slice sets its padded width. An item longer than the budget
    alone still gets a batch of its own.
    """
    batches: list[slice] = []
    i, n = 0, len(sorted_lengths)
    while i < n:
        size = max(1, token_budget // max(1, int(sorted_lengths[i])))
        if max_batch is not None:
            size = min(size, max(1, max_batch))
        batches.append(slice(i, min(n, i + size)))
        i += size
    return batches


def _pool(hidden: np.ndarray, mask: np.ndarray, pooling: str, normalize: bool) -> np.ndarray:
    if pooling == "mean":
        weights = mask.astype(np.float32)
        # (batch, 1, seq) @ (batch, seq, dim): a batched GEMM, no (batch, seq, dim) temporary
        summed = np.matmul(weights[:, None, :], hidden.astype(np.float32, copy=False))[:, 0, :]
        vectors = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
    elif pooling == "cls":
        vectors = hidden[:, 0, :]
    else:  # the graph pooled already
        vectors = hidden
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if normalize:
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.maximum(norms, 1e-12)
    return vectors


def _clean(text: str) -> str:
    """Text the tokenizer accepts: lone surrogates (from ``surrogateescape`` decoding of
    invalid UTF-8) make it raise, so they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


# -- loading helpers --------------------------------------------------------------------------


def _load_tokenizer(path: Path, *, truncate_at: int | None) -> Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception for missing and bad files
        raise ModelError(f"cannot load the tokenizer {path}: {exc}") from exc
    # The shipped file pads to a fixed 128 and truncates at 128: we pad per batch ourselves
    # (to the batch's longest) and truncate at the model's limit instead.
    tokenizer.no_padding()
    if truncate_at is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=truncate_at)
    return tokenizer


def _pad_id(tokenizer: Tokenizer) -> int:
    # no_padding() has cleared the configured pad id; find the pad token by name.
    for token in ("[PAD]", "<pad>", "<PAD>"):
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return int(token_id)
    return 0  # positions past the attention mask are ignored; any id works


def _session_options(threads: int) -> ort.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0 = onnxruntime's default: all physical cores
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # The arena keeps the peak buffers of the largest batch forever; the memory pattern
    # planner only helps when shapes repeat, and ours vary with every batch.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    # Idle intra-op threads spin by default, and not only inside a run: between queries a
    # worker kept a core busy all the time (12 ms of CPU on each 13 ms semantic search at 100k
    # chunks), a core the lexical half needs on two; whole batches embed no slower without it
    # (alternated runs on one machine, inside the noise).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: warnings about unused initializers are noise
    return options


def physical_cores() -> int:
    """Physical cores this process may run on (onnxruntime's own default for its threads):
    hyper-threads of one core share its vector units, so a second lane there gains little."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return max(1, (os.cpu_count() or 2) // 2)
    cores: set[tuple[str, str]] = set()
    for cpu in allowed:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            return len(allowed)  # no topology to read (a container may hide it): one lane per CPU
        cores.add((package, core))
    return max(1, len(cores))


def _session(
    model: bytes, options: ort.SessionOptions, path: Path, *, unfused: Sequence[str] = ()
) -> ort.InferenceSession:
    """A CPU session on ``model``; ``unfused``: onnxruntime fusions to leave out at load."""
    import onnxruntime as ort

    if not model:
        raise ModelError(f"the model {path} is empty")
    try:
        return ort.InferenceSession(
            model, options, providers=["CPUExecutionProvider"], disabled_optimizers=list(unfused)
        )
    except Exception as exc:  # NoSuchFile / InvalidProtobuf / InvalidArgument / Fail ...
        raise ModelError(f"cannot load the model {path}: {exc}") from exc


def _input_types(session: ort.InferenceSession, path: Path) -> list[tuple[str, type]]:
    types: list[tuple[str, type]] = []
    for node in session.get_inputs():
        if node.name not in _INPUTS:
            raise ModelError(
                f"the model {path} has an input {node.name!r}; kenning feeds only {', '.join(_INPUTS)}"
            )
        types.append((node.name, np.int32 if node.type == "tensor(int32)" else np.int64))
    if not any(name == "input_ids" for name, _ in types):
        raise ModelError(f"the model {path} has no 'input_ids' input")
    return types


def _pick_output(session: ort.InferenceSession, path: Path) -> tuple[str, int]:
    """The token states (``last_hidden_state``, rank 3) or an already pooled output (rank 2)."""
    outputs = session.get_outputs()
    chosen = next((o for o in outputs if o.name == "last_hidden_state"), outputs[0])
    rank = len(chosen.shape)
    if rank not in (2, 3):
        raise ModelError(f"the model {path}: output {chosen.name!r} has rank {rank}, not 2 or 3")
    return chosen.name, rank


def patched_model(source: bytes, spec: ModelSpec) -> tuple[bytes, ModelSpec]:
    """The model file with the spec's layer patch applied, and the spec renamed to say so; the
    file as it is when there is no patch, or one made for another file, or a broken one (that
    costs the patch's gain, never the model: it is logged and left out)."""
    if spec.layer_patch is None:
        return source, spec
    path = spec.layer_patch
    try:
        made_for, arrays = load_patch(path)
        if made_for != sha256_hex(source):
            log.info("layer patch %s was made for another model file: not used", path)
            return source, spec
        # Patching needs onnx, whose import alone takes a second; the patched file is cached
        # beside the optimised graphs, keyed by both files, and read back on later starts.
        key = f"{made_for[:16]}-patched-{sha256_hex(path.read_bytes())[:16]}"
        patched = load_or_build(key, lambda: replace_initializers(source, arrays, path))
    except ModelError as exc:
        log.warning("%s: the model runs with its own weights", exc)
        return source, spec
    except (ImportError, OSError) as exc:  # onnx is a dependency; a broken install still runs
        log.warning("cannot apply the layer patch %s (%s): the model runs with its own weights", path, exc)
        return source, spec
    return patched, dataclasses.replace(spec, id=spec.id + LAYER_PATCH_SUFFIX)


def _adapter_for(spec: ModelSpec, source_sha: str, dim: int) -> QueryAdapter | None:
    """The spec's query adapter when it was fitted for this very model file, else None.

    A broken adapter costs the queries its gain, never the model: it is logged and left out.
    """
    if spec.query_adapter is None:
        return None
    try:
        adapter = load_adapter(spec.query_adapter, dim=dim)
    except ModelError as exc:
        log.warning("%s: queries use the model's own vectors", exc)
        return None
    if adapter.source_sha != source_sha:
        log.info(
            "query adapter %s was fitted for another model file (sha256 %s…, this one %s…): not used",
            spec.query_adapter,
            adapter.source_sha[:12],
            source_sha[:12],
        )
        return None
    return adapter


def _model_id(spec: ModelSpec, source_sha: str, tag: str, max_tokens: int) -> str:
    digest = hashlib.sha256()
    try:
        digest.update(spec.tokenizer_path.read_bytes())
    except OSError as exc:
        raise ModelError(f"cannot read the tokenizer {spec.tokenizer_path}: {exc}") from exc
    settings = {
        "max_tokens": max_tokens,
        "pooling": spec.pooling,
        "query_prefix": spec.query_prefix,
        "document_prefix": spec.document_prefix,
        "normalize": spec.normalize,
    }
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return f"{spec.id}:{source_sha[:16]}:{tag}:{digest.hexdigest()[:8]}"


# -- the optimised graph ----------------------------------------------------------------------


def _load_optimized(
    source: bytes,
    source_sha: str,
    spec: ModelSpec,
    options: ort.SessionOptions,
    lane_options: ort.SessionOptions,
    make: Callable[[ort.InferenceSession, str, int | None], Encoder],
    variant: str,
) -> Encoder | None:
    """The encoder on the optimised graph, or None ("auto" only) when it cannot be had.

    ``options`` open the original graph and a batched optimised one; ``lane_options`` (one
    thread) an optimised graph run one text per call, in lanes."""
    import onnxruntime as ort

    key = f"{source_sha[:16]}-{RECIPE}"
    failure_note = f"onnxruntime {ort.__version__}"
    note = read_failure(key)
    if variant == "auto" and note is not None and note.startswith(failure_note + ":"):
        log.info(
            "the optimised graph for %s failed to build before (%s); using the original", spec.onnx_path, note
        )
        return None
    sessions: dict[str, ort.InferenceSession] = {}

    def open_candidate(data: bytes) -> None:
        chosen = lane_options if _max_batch_for(data) == 1 else options
        sessions["optimized"] = _session(data, chosen, spec.onnx_path, unfused=UNFUSED_AT_LOAD)

    def build() -> bytes:
        started = time.perf_counter()
        # A source that does not load is the model's fault, not the recipe's: ModelError
        # propagates from here (and is not remembered as a failed build).
        original = make(_session(source, options, spec.onnx_path), ORIGINAL, None)
        data, ops = optimize_graph(source)
        try:
            open_candidate(data)
        except ModelError as exc:
            raise OptimizationError(f"the optimised graph does not load: {exc}") from exc
        candidate = make(sessions["optimized"], RECIPE, _max_batch_for(data))
        low, mean = _agreement(original, candidate)
        if candidate.dim != original.dim or low < _MIN_COSINE or mean < _MIN_MEAN_COSINE:
            raise OptimizationError(
                f"the optimised graph disagrees with the original (cosine min {low:.3f}, mean {mean:.3f})"
            )
        fused = {k: v for k, v in ops.items() if k in _FUSED_OPS and v}
        log.info(
            "built the optimised graph for %s in %.1f s (%s; cosine min %.4f, mean %.4f)",
            spec.onnx_path,
            time.perf_counter() - started,
            fused,
            low,
            mean,
        )
        return data

    try:
        data = load_or_build(key, build, validate=open_candidate)
        if "optimized" not in sessions:
            open_candidate(data)
        return make(sessions["optimized"], RECIPE, _max_batch_for(data))
    except OptimizationError as exc:
        if exc.permanent:
            record_failure(key, f"{failure_note}: {exc}")
        if variant == "optimized":
            raise ModelError(f"cannot build the optimised graph for {spec.onnx_path}: {exc}") from exc
        log.warning("using the original graph of %s: %s", spec.onnx_path, exc)
        return None


def _max_batch_for(graph: bytes) -> int | None:
    """1 when the graph quantises activations on the fly, else None (no limit).

    Dynamic quantisation uses one scale per tensor, i.e. per call: batched, a text's vector
    would depend on its batch-mates (cosine to its lone vector 0.99 on average, 0.95 for
    short texts). One text per call keeps vectors reproducible and closer to the original's;
    measured, it costs nothing at 128-256 tokens (batch 1 ran as fast as 16: attention's
    working set then fits the cache) and up to a quarter on 16-token texts, cheap anyway.
    The op names are plain strings in the protobuf, so a byte search finds them without
    parsing the graph (a false positive only costs batching).
    """
    return 1 if _DYNAMIC_QUANT.search(graph) else None


_DYNAMIC_QUANT = re.compile(rb"DynamicQuantize|QAttention|MatMulIntegerToFloat")


def _agreement(a: Encoder, b: Encoder) -> tuple[float, float]:
    """(min, mean) cosine between two encoders' vectors of the probe texts (one padded batch)."""
    texts = list(_PROBE_TEXTS)
    va = a.embed_documents(texts)
    vb = b.embed_documents(texts)
    na = va / np.maximum(np.linalg.norm(va, axis=1, keepdims=True), 1e-12)
    nb = vb / np.maximum(np.linalg.norm(vb, axis=1, keepdims=True), 1e-12)
    cosines = (na * nb).sum(axis=1)
    return float(cosines.min()), float(cosines.mean())
