"""User model directories and broken model files (a clear ``ModelError``), and the throughput
benchmark's measurement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.embedding import Encoder, ModelError, resolve_model

from .conftest import CODE


def test_user_model_directory(model_dir: Path, original: Encoder) -> None:
    encoder = Encoder.load(model_dir, variant="original", threads=2)
    assert encoder.model_id.startswith("my-minilm:")
    assert encoder.dim == 384
    texts = list(CODE.values())
    # A user's model runs as its file says: the packaged model's code-tuned layer is for the
    # packaged file only, so this copy of the plain file gives the plain file's vectors.
    plain = Encoder.load(variant="original", threads=2, layer_patch=False)
    np.testing.assert_allclose(encoder.embed_documents(texts), plain.embed_documents(texts), atol=1e-6)
    assert not np.allclose(encoder.embed_documents(texts), original.embed_documents(texts), atol=1e-3)


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


def test_throughput_bench_measures(original: Encoder) -> None:
    import importlib.util

    path = Path(__file__).parents[2] / "bench" / "model_throughput.py"
    spec = importlib.util.spec_from_file_location("kenning_bench_model_throughput", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # importing runs nothing
    texts = bench.code_windows(original, 4, 32)
    assert original.count_tokens(texts) == [32] * 4
    result = bench.measure(original, texts, 2)
    assert result["chunks"] == 4 and result["repeats"] == 2
    assert result["chunks_per_s"] > 0 and result["variant"] == "original"
