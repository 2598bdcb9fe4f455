"""``bench.layer_patch soup``: the weight average of code-layer patches (the shipped file is one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench import layer_patch

SHA = "ab" * 32


def _patch(path: Path, matrix: np.ndarray, bias: np.ndarray, sha: str = SHA) -> Path:
    scale = np.abs(matrix).max(axis=0, keepdims=True) / 127.0
    np.savez_compressed(
        path,
        source_sha=np.array(sha),
        m_q=np.round(matrix / scale).astype(np.int8),
        m_scale=scale.astype(np.float32),
        **{"layer.bias": bias.astype(np.float32)},
    )
    return path


def test_soup_averages_the_matrices_as_stored_and_the_biases(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    first, second = rng.normal(size=(8, 4)), rng.normal(size=(8, 4)) * 3
    a = _patch(tmp_path / "a.npz", first, np.array([1.0, 2.0, 3.0, 4.0]))
    b = _patch(tmp_path / "b.npz", second, np.array([3.0, 2.0, 1.0, 0.0]))
    out = tmp_path / "soup.npz"
    layer_patch.soup([a, b], out)
    with np.load(out, allow_pickle=False) as soup, np.load(a) as pa, np.load(b) as pb:
        assert str(soup["source_sha"]) == SHA
        assert soup["m_q"].dtype == np.int8 and soup["m_scale"].shape == (1, 4)
        stored = [p["m_q"] * p["m_scale"].astype(np.float64) for p in (pa, pb)]
        mean = (stored[0] + stored[1]) / 2
        got = soup["m_q"] * soup["m_scale"].astype(np.float64)
        # rounded again to int8 per column: within half a step of the mean
        assert np.all(np.abs(got - mean) <= soup["m_scale"] / 2 + 1e-7)
        assert np.abs(soup["m_q"]).max() == 127
        np.testing.assert_array_equal(soup["layer.bias"], np.array([2.0, 2.0, 2.0, 2.0], dtype=np.float32))


def test_soup_refuses_patches_of_another_model_or_with_other_weights(tmp_path: Path) -> None:
    a = _patch(tmp_path / "a.npz", np.eye(4), np.zeros(4))
    other_model = _patch(tmp_path / "b.npz", np.eye(4), np.zeros(4), sha="cd" * 32)
    with pytest.raises(SystemExit, match="another model file"):
        layer_patch.soup([a, other_model], tmp_path / "out.npz")
    other_weights = tmp_path / "c.npz"
    np.savez_compressed(other_weights, source_sha=np.array(SHA), n_q=np.zeros((4, 4), np.int8))
    with pytest.raises(SystemExit, match="other weights"):
        layer_patch.soup([a, other_weights], tmp_path / "out.npz")
    assert not (tmp_path / "out.npz").exists()


def test_soup_command_needs_two_patches(tmp_path: Path) -> None:
    a = _patch(tmp_path / "a.npz", np.eye(4), np.zeros(4))
    with pytest.raises(SystemExit):
        layer_patch.main(["soup", "--parts", str(a), "--out", str(tmp_path / "out.npz")])
    b = _patch(tmp_path / "b.npz", 2 * np.eye(4), np.ones(4))
    assert layer_patch.main(["soup", "--parts", str(a), str(b), "--out", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as soup:
        np.testing.assert_array_equal(soup["layer.bias"], np.full(4, 0.5, dtype=np.float32))
