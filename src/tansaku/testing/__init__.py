"""Test helpers that ship with the library: a deterministic embedder and the store contract."""

from tansaku.testing.embedders import HashEmbedder

__all__ = ["HashEmbedder"]
