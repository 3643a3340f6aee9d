"""Test helpers that ship with the library: a deterministic embedder, the store contract suite,
a local fake rerank server speaking Cohere's, TEI's and the Jina/Infinity/vLLM protocols, and
local fake chat-model servers (OpenAI chat-completions, Gemini) answering from a script, and an
in-process scripted chat model (:class:`ScriptedChatModel`)."""

from tansaku.embed.hash import HashEmbedder
from tansaku.testing._fake_llm import ChatTurn, Reply, ScriptedCall
from tansaku.testing.fake_gemini_server import FakeGeminiServer
from tansaku.testing.fake_openai_server import FakeOpenAIServer
from tansaku.testing.fake_rerank_server import FakeRerankServer
from tansaku.testing.scripted_model import ChatRequest, ScriptedChatModel

__all__ = [
    "ChatRequest",
    "ChatTurn",
    "FakeGeminiServer",
    "FakeOpenAIServer",
    "FakeRerankServer",
    "HashEmbedder",
    "Reply",
    "ScriptedCall",
    "ScriptedChatModel",
]
