"""The encoder's batches: their order and bounds, truncation, token counts, threads, and
cancellation between batches."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.embedding import EmbeddingCancelled, Encoder, resolve_model
from kenning.embedding.encoder import _max_batch_for, physical_cores, plan_batches

from .conftest import CODE, varied_texts


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


class ThreadRecordingSession(RecordingSession):
    """Also records which thread ran each call, and fails the call numbered ``fail_at``."""

    def __init__(self, session: Any, fail_at: int | None = None) -> None:
        super().__init__(session)
        self.threads: set[str] = set()
        self.fail_at = fail_at
        self._lock = threading.Lock()

    def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        with self._lock:
            self.threads.add(threading.current_thread().name)
            if self.fail_at is not None and len(self.shapes) + 1 == self.fail_at:
                raise RuntimeError("onnxruntime failed on this batch")
        return super().run(outputs, feed)


def _in_lanes(
    encoder: Encoder, monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None
) -> ThreadRecordingSession:
    recorder = ThreadRecordingSession(encoder._session, fail_at)
    monkeypatch.setattr(encoder, "_session", recorder)
    return recorder


def test_optimized_graph_runs_in_lanes_with_the_same_vectors(
    cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = Encoder.load(variant="optimized", threads=2)
    one = Encoder.load(variant="optimized", threads=1)
    assert (two.lanes, one.lanes) == (2, 1)
    assert Encoder.load(variant="original", threads=2).lanes == 1  # batched: onnxruntime's threads
    texts = varied_texts() * 3
    recorder = _in_lanes(two, monkeypatch)
    # Bit-equal to one lane, in input order: each text is still its own call.
    np.testing.assert_array_equal(two.embed_documents(texts), one.embed_documents(texts))
    assert len(recorder.shapes) == len(texts)
    assert {"kenning-embed-lane", threading.current_thread().name} <= recorder.threads
    recorder.threads.clear()
    two.embed_query("parse a json file")  # a lone text: no lane started for it
    assert recorder.threads == {threading.current_thread().name}


def test_lanes_stop_when_asked_and_report_a_failure(
    cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = Encoder.load(variant="optimized", threads=2)
    texts = varied_texts()
    calls = 0
    lock = threading.Lock()

    def stop_on_fifth() -> bool:
        nonlocal calls
        with lock:
            calls += 1
            return calls >= 5

    recorder = _in_lanes(encoder, monkeypatch)
    with pytest.raises(EmbeddingCancelled):
        encoder.embed_documents(texts, should_stop=stop_on_fifth)
    assert len(recorder.shapes) == 4  # each lane asks before every batch; none ran after the 5th
    failing = _in_lanes(encoder, monkeypatch, fail_at=3)
    with pytest.raises(RuntimeError, match="failed on this batch"):
        encoder.embed_documents(texts)
    assert len(failing.shapes) < len(texts)  # the lanes stopped at the failure
    monkeypatch.undo()
    assert encoder.embed_documents(["one"]).shape == (1, 384)  # and the encoder still works


def test_physical_cores() -> None:
    cores = physical_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
