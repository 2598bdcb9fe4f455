"""The query adapter: a linear map on query vectors, fitted for one model file only.

The real packaged model and the real shipped adapter throughout; the faults are files written
here (a broken or foreign adapter in a user's model directory). The shipped adapter was fitted
for the packaged file's own weights, so these tests load the model without its code-tuned layer
(``KENNING_CODE_LAYER=0``); with the layer the file is another one and the adapter is left out.
"""

from __future__ import annotations

import hashlib
import logging
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kenning.config import Config
from kenning.embedding import Encoder, ModelError, resolve_model
from kenning.embedding.adapter import load_adapter
from tests.embedding.conftest import CODE, QUERIES


@pytest.fixture(scope="module")
def adapted(cache_root: Path) -> Encoder:
    return Encoder.load(variant="optimized", threads=2, layer_patch=False)


@pytest.fixture(scope="module")
def unadapted(cache_root: Path) -> Encoder:
    return Encoder.load(variant="optimized", threads=2, query_adapter=False, layer_patch=False)


def _save(path: Path, **arrays: np.ndarray) -> Path:
    with path.open("wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
    return path


def test_packaged_adapter_fits_the_packaged_model(adapted: Encoder) -> None:
    spec = resolve_model(None)
    assert spec.query_adapter is not None and spec.query_adapter.is_file()
    adapter = adapted.query_adapter
    assert adapter is not None
    assert adapter.source_sha == hashlib.sha256(spec.onnx_path.read_bytes()).hexdigest()
    assert adapter.weight.shape == (adapted.dim, adapted.dim) and adapter.bias.shape == (adapted.dim,)


def test_an_adapter_for_the_plain_file_is_left_out_of_the_tuned_model(
    cache_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="kenning.embedding.encoder"):
        tuned = Encoder.load(variant="optimized", threads=2)
    assert tuned.query_adapter is None
    assert "fitted for another model file" in caplog.text


def test_queries_are_mapped_and_documents_are_not(adapted: Encoder, unadapted: Encoder) -> None:
    assert unadapted.query_adapter is None
    texts = list(CODE.values())
    # Stored vectors never depend on the adapter: a store is the same with it on or off.
    np.testing.assert_array_equal(adapted.embed_documents(texts), unadapted.embed_documents(texts))
    assert adapted.model_id == unadapted.model_id
    for query in QUERIES.values():
        raw = unadapted.embed_query(query)
        mapped = adapted.embed_query(query)
        assert adapted.query_adapter is not None
        np.testing.assert_allclose(mapped, adapted.query_adapter.apply(raw), atol=1e-6)
        assert mapped.dtype == np.float32
        assert abs(float(np.linalg.norm(mapped)) - 1.0) < 1e-5
        # A nudge toward code, not another space: the mapped query stays close to its own.
        assert 0.5 < float(mapped @ raw) < 0.9999


def test_adapted_queries_still_find_their_code(adapted: Encoder) -> None:
    names = list(CODE)
    docs = adapted.embed_documents([CODE[n] for n in names])
    found = 0
    for name, query in QUERIES.items():
        order = np.argsort(-(docs @ adapted.embed_query(query)))
        found += names[int(order[0])] == name
    assert found >= len(QUERIES) - 1, found


def test_config_and_environment_turn_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Config().query_adapter_on()
    assert not Config(query_adapter=False).query_adapter_on()
    monkeypatch.setenv("KENNING_QUERY_ADAPTER", "0")
    assert not Config().query_adapter_on()


def test_engine_loads_the_model_with_the_configured_adapter(cache_root: Path) -> None:
    from kenning.engine.model import default_encoder_factory

    on = default_encoder_factory(Config(embed_threads=1, code_layer=False))
    off = default_encoder_factory(Config(embed_threads=1, code_layer=False, query_adapter=False))
    assert isinstance(on, Encoder) and isinstance(off, Encoder)
    assert on.query_adapter is not None and off.query_adapter is None


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"w": np.eye(4, dtype=np.float32), "b": np.zeros(4, dtype=np.float32)}, "missing source_sha"),
        ({"w": np.eye(3), "b": np.zeros(4), "source_sha": np.array("x")}, "do not fit a 4-dimension"),
        ({"w": np.full((4, 4), np.nan), "b": np.zeros(4), "source_sha": np.array("x")}, "not finite"),
    ],
)
def test_bad_adapter_files_are_named(tmp_path: Path, arrays: dict[str, np.ndarray], message: str) -> None:
    path = _save(tmp_path / "query-adapter.npz", **arrays)
    with pytest.raises(ModelError, match=message) as err:
        load_adapter(path, dim=4)
    assert str(path) in str(err.value)


def test_a_file_that_is_no_adapter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "query-adapter.npz"
    path.write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(ModelError, match="cannot be read"):
        load_adapter(path, dim=4)
    pickled = _save(
        tmp_path / "pickled.npz",
        w=np.array([object()], dtype=object),
        b=np.zeros(4),
        source_sha=np.array("x"),
    )
    with pytest.raises(ModelError, match="cannot be read"):  # no pickle is ever loaded
        load_adapter(pickled, dim=4)


def test_user_model_directory_adapter(
    model_dir: Path, cache_root: Path, unadapted: Encoder, caplog: pytest.LogCaptureFixture
) -> None:
    spec = resolve_model(model_dir)
    assert spec.query_adapter is None  # none in the directory: none used
    dim = unadapted.dim
    sha = hashlib.sha256((model_dir / "model.onnx").read_bytes()).hexdigest()
    rotation = np.roll(np.eye(dim, dtype=np.float32), 1, axis=0)
    _save(model_dir / "query-adapter.npz", w=rotation, b=np.zeros(dim, np.float32), source_sha=np.array(sha))
    encoder = Encoder.load(model_dir, variant="original", threads=1)
    assert encoder.query_adapter is not None
    raw = Encoder.load(model_dir, variant="original", threads=1, query_adapter=False).embed_query(
        "open a file"
    )
    np.testing.assert_allclose(encoder.embed_query("open a file"), np.roll(raw, 1), atol=1e-6)

    # Fitted for another model file: ignored, never misapplied.
    _save(
        model_dir / "query-adapter.npz",
        w=rotation,
        b=np.zeros(dim, np.float32),
        source_sha=np.array("0" * 64),
    )
    with caplog.at_level(logging.INFO, logger="kenning.embedding.encoder"):
        assert Encoder.load(model_dir, variant="original", threads=1).query_adapter is None
    assert "fitted for another model file" in caplog.text

    # Broken: a warning, and queries still embed with the model's own vectors.
    (model_dir / "query-adapter.npz").write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger="kenning.embedding.encoder"):
        broken = Encoder.load(model_dir, variant="original", threads=1)
    assert broken.query_adapter is None
    assert "queries use the model's own vectors" in caplog.text
    np.testing.assert_allclose(broken.embed_query("open a file"), raw, atol=1e-6)


def test_an_oversized_member_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "query-adapter.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("w.npy", b"\0" * (4 * 4 * 8 + 4097))  # compresses to almost nothing
    with pytest.raises(ModelError, match=r"w\.npy larger than a 4-dimension map"):
        load_adapter(path, dim=4)
