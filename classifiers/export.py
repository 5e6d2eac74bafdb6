"""Write the classifier head as an ONNX graph: Gemm (+ReLU) layers, then softmax(logits / T).

Built with `onnx.helper` from the trained weights rather than `torch.onnx.export`, because the head is
a few matrix products and the torch exporter would pull in onnxscript for nothing. The temperature is
inside the graph, so every runtime gets calibrated probabilities without extra code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # readable by onnxruntime >= 1.10, whatever onnx version wrote it
INPUT = "embedding"
OUTPUT = "probs"


def head_to_onnx(
    layers: Sequence[tuple[np.ndarray, np.ndarray]],
    temperature: float,
    labels: Sequence[str],
    *,
    doc: str = "",
) -> onnx.ModelProto:
    """layers: (weight [in, out], bias [out]) pairs; ReLU between them, none after the last."""
    dim = layers[0][0].shape[0]
    inits, nodes = [], []
    x = INPUT
    for i, (w, b) in enumerate(layers):
        inits += [numpy_helper.from_array(w.astype(np.float32), f"w{i}"), numpy_helper.from_array(b.astype(np.float32), f"b{i}")]
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [f"h{i}"]))
        x = f"h{i}"
        if i < len(layers) - 1:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    inits.append(numpy_helper.from_array(np.array(1.0 / temperature, dtype=np.float32), "inv_t"))
    nodes.append(helper.make_node("Mul", [x, "inv_t"], ["scaled"]))
    nodes.append(helper.make_node("Softmax", ["scaled"], [OUTPUT], axis=-1))
    graph = helper.make_graph(
        nodes,
        "prompt_classifier",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["batch", dim])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", len(labels)])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="switchyard")
    model.ir_version = IR_VERSION
    model.doc_string = doc
    helper.set_model_props(model, {"labels": ",".join(labels), "temperature": repr(float(temperature))})
    onnx.checker.check_model(model)
    return model
