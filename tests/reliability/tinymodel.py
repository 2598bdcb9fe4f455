"""A tiny, real, deterministic embedding model for the crash and fuzz loops.

It is an ONNX graph like any user's model directory (``model.onnx``, the packaged
``tokenizer.json``, ``kenning-model.json``), so the server loads it through the normal
``model`` option: no test hook in product code. The graph is one ``Gather`` from a fixed random
``[vocab, dim]`` table: a text's vector is the mean of its tokens' rows, which keeps texts that
share words close and costs microseconds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np


def build_tiny_model(directory: Path, *, dim: int = 32, seed: int = 7, model_id: str = "tiny-test") -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from kenning.embedding import resolve_model

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = resolve_model(None).tokenizer_path
    shutil.copyfile(tokenizer, directory / "tokenizer.json")
    vocab = len(json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"])
    table = np.random.default_rng(seed).standard_normal((vocab, dim)).astype(np.float32)
    shape = ["batch", "seq"]
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "kenning-tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, shape),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, shape),
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, shape),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*shape, dim])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime 1.x reads everywhere
    onnx.checker.check_model(model)
    (directory / "model.onnx").write_bytes(model.SerializeToString())
    (directory / "kenning-model.json").write_text(json.dumps({"id": model_id, "max_tokens": 64}))
    return directory
