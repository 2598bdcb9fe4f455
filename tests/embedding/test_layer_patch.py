"""The code-tuned layer: new weights for the packaged model's last layer, applied at load.

The real packaged model and the real shipped patch throughout; the faults are files written here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from kenning.config import Config
from kenning.embedding import Encoder, ModelError, resolve_model
from kenning.embedding.encoder import patched_model
from kenning.embedding.layer_patch import MAX_PATCH_BYTES, apply_patch, load_patch
from kenning.embedding.model import DEFAULT_MODEL_ID, LAYER_PATCH_SUFFIX
from tests.embedding.conftest import CODE, QUERIES


@pytest.fixture(scope="module")
def tuned(cache_root: Path) -> Encoder:
    return Encoder.load(variant="optimized", threads=2)


@pytest.fixture(scope="module")
def plain(cache_root: Path) -> Encoder:
    return Encoder.load(variant="optimized", threads=2, layer_patch=False)


@pytest.fixture(scope="module")
def source() -> bytes:
    return resolve_model(None).onnx_path.read_bytes()


def _save(path: Path, **arrays: np.ndarray) -> Path:
    with path.open("wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
    return path


def test_packaged_patch_fits_the_packaged_model(source: bytes) -> None:
    spec = resolve_model(None)
    assert spec.layer_patch is not None and spec.layer_patch.is_file()
    source_sha, arrays = load_patch(spec.layer_patch)
    assert source_sha == hashlib.sha256(source).hexdigest()
    patched = apply_patch(source, spec.layer_patch)
    assert patched is not None
    before = {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(source).graph.initializer}
    after = {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(patched).graph.initializer}
    assert before.keys() == after.keys()
    changed = {name for name in before if not np.array_equal(before[name], after[name])}
    # Only the last three layers: each one's six matrices (int8 values and scales), biases and
    # layer norms.
    assert changed and changed <= set(arrays)
    layers = {name.split(".")[3] for name in arrays if name.startswith("inner.encoder.layer.")}
    assert layers == {"3", "4", "5"}
    assert all(name.startswith(("inner.encoder.layer.", "val_")) for name in arrays)
    assert len([n for n in arrays if n.endswith("_q")]) == 3 * 6


def test_tuned_and_plain_are_different_models(tuned: Encoder, plain: Encoder) -> None:
    assert tuned.model_id.startswith(DEFAULT_MODEL_ID + LAYER_PATCH_SUFFIX + ":")
    assert plain.model_id.startswith(DEFAULT_MODEL_ID + ":")
    texts = list(CODE.values())
    a, b = tuned.embed_documents(texts), plain.embed_documents(texts)
    cosines = np.sum(a * b, axis=1)
    # One layer of six retrained: the same space, moved.
    assert float(cosines.min()) > 0.5 and float(cosines.max()) < 0.9999


def test_tuned_model_finds_code(tuned: Encoder) -> None:
    names = list(CODE)
    docs = tuned.embed_documents([CODE[n] for n in names])
    found = 0
    for name, query in QUERIES.items():
        order = np.argsort(-(docs @ tuned.embed_query(query)))
        found += names[int(order[0])] == name
    # 10 of 12 (the model's own weights: 11; a broken layer would find one or two by chance).
    # These snippets carry no path or header; on the multi-language dev set's 2,000 queries the
    # tuned layer is the better one (docs/performance.md).
    assert found >= len(QUERIES) - 2, found


def test_config_and_environment_turn_it_off(monkeypatch: pytest.MonkeyPatch, cache_root: Path) -> None:
    from kenning.engine.model import default_encoder_factory

    assert Config().code_layer_on()
    assert not Config(code_layer=False).code_layer_on()
    off = default_encoder_factory(Config(embed_threads=1, code_layer=False))
    assert isinstance(off, Encoder) and LAYER_PATCH_SUFFIX not in off.model_id
    monkeypatch.setenv("KENNING_CODE_LAYER", "0")
    assert not Config().code_layer_on()


def _first_matrix(source: bytes) -> tuple[str, np.ndarray]:
    spec = resolve_model(None)
    assert spec.layer_patch is not None
    _, arrays = load_patch(spec.layer_patch)
    name = next(n for n in sorted(arrays) if n.endswith("_q"))
    return name, arrays[name]


def test_foreign_patch_is_left_out(tmp_path: Path, source: bytes, caplog: pytest.LogCaptureFixture) -> None:
    name, matrix = _first_matrix(source)
    path = _save(tmp_path / "code-layer.npz", source_sha=np.array("0" * 64), **{name: matrix})
    assert apply_patch(source, path) is None
    spec = dataclasses.replace(resolve_model(None), layer_patch=path)
    with caplog.at_level(logging.INFO, logger="kenning.embedding.encoder"):
        data, same = patched_model(source, spec)
    assert data is source and same == spec
    assert "made for another model file" in caplog.text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("missing", "missing source_sha"),
        ("nan", "not finite"),
        ("unknown", "has no initializer"),
        ("shape", "the model's is int8"),
        ("empty", "holds no weights"),
    ],
)
def test_bad_patches_are_named_and_the_model_still_loads(
    tmp_path: Path,
    source: bytes,
    caplog: pytest.LogCaptureFixture,
    cache_root: Path,  # patched_model's build lock goes to the test's cache, not the user's
    change: str,
    message: str,
) -> None:
    name, matrix = _first_matrix(source)
    sha = np.array(hashlib.sha256(source).hexdigest())
    nan = np.full(384, np.nan, np.float32)
    arrays: dict[str, np.ndarray] = {
        "missing": {name: matrix},
        "nan": {"source_sha": sha, "inner.encoder.layer.5.output.dense.bias": nan},
        "unknown": {"source_sha": sha, "no_such_weight": matrix},
        "shape": {"source_sha": sha, name: matrix[:10]},
        "empty": {"source_sha": sha},
    }[change]
    path = _save(tmp_path / "code-layer.npz", **arrays)
    with pytest.raises(ModelError, match=message) as err:
        apply_patch(source, path)
    assert str(path) in str(err.value)
    spec = dataclasses.replace(resolve_model(None), layer_patch=path)
    with caplog.at_level(logging.WARNING, logger="kenning.embedding.encoder"):
        data, same = patched_model(source, spec)
    assert data is source and same.id == DEFAULT_MODEL_ID
    assert "the model runs with its own weights" in caplog.text


def test_files_that_are_no_patch_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "code-layer.npz"
    path.write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(ModelError, match="cannot be read"):
        load_patch(path)
    pickled = _save(tmp_path / "pickled.npz", source_sha=np.array("x"), w=np.array([object()], dtype=object))
    with pytest.raises(ModelError, match="cannot be read"):  # no pickle is ever loaded
        load_patch(pickled)
    oversized = tmp_path / "oversized.npz"
    with zipfile.ZipFile(oversized, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("w.npy", b"\0" * (MAX_PATCH_BYTES + 1))  # compresses to almost nothing
    with pytest.raises(ModelError, match=r"w\.npy larger than"):
        load_patch(oversized)


def test_later_starts_read_the_patched_file_back(tuned: Encoder, cache_root: Path) -> None:
    # `tuned` patched the file and cached it; a new process with that cache, where onnx cannot
    # even be imported (its import alone takes a second of every start), runs the tuned model.
    code = (
        "import sys\nsys.modules['onnx'] = None\nfrom kenning.embedding import Encoder\n"
        "print(Encoder.load(variant='optimized', threads=1).model_id)"
    )
    env = {**os.environ, "KENNING_CACHE_DIR": str(cache_root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == tuned.model_id
