"""Test helpers that ship with the library: a deterministic embedder, the store contract suite
and a local fake rerank server speaking Cohere's, TEI's and the Jina/Infinity/vLLM protocols."""

from tansaku.testing.embedders import HashEmbedder
from tansaku.testing.fake_rerank_server import FakeRerankServer

__all__ = ["FakeRerankServer", "HashEmbedder"]
