"""The chat-model seam: messages in, text and/or tool calls out.

Every provider (OpenAI-compatible servers, Gemini, a local llama.cpp model) implements
:class:`ChatModel`; the agent loop, the LLM expander/classifier and Q/A generation only see this.

>>> reply = model.chat([Message.system("…"), Message.user("昨日の問題は?")], tools=specs)
>>> reply.tool_calls or reply.content
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from tansaku.errors import TansakuError

if TYPE_CHECKING:
    from tansaku.tools.spec import ToolSpec

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One call the model asked for; ``arguments`` is the model's raw JSON text (it may be
    malformed: the toolset answers a malformed call with a Japanese error, the loop goes on)."""

    id: str
    name: str
    arguments: str = "{}"
    signature: str = field(default="", compare=False)
    """Opaque provider data to send back with the call (Gemini's thought signature, base64);
    keep it when the call goes into the history (``Message.assistant(..., reply.tool_calls)``)."""


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant message's calls."""
    tool_call_id: str | None = None
    """A tool message: the call it answers."""
    name: str | None = None
    """A tool message: the tool's name (Gemini needs it)."""

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", content=text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Sequence[ToolCall] = ()) -> Message:
        return cls(role="assistant", content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, result: str) -> Message:
        return cls(role="tool", content=result, tool_call_id=call.id, name=call.name)


FinishReason = Literal["stop", "tool_calls", "length", "refusal", "error"]


@dataclass(frozen=True, kw_only=True)
class ChatResponse:
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason = "stop"
    model: str = ""
    """The model that answered (as the provider names it)."""
    usage: dict[str, int] = field(default_factory=dict)
    """``prompt_tokens`` / ``completion_tokens`` when the provider reports them."""


TextCallback = Callable[[str], None]
"""Receives streamed text deltas as they arrive."""


class ModelError(TansakuError):
    """A chat model could not answer; the message is Japanese and names the endpoint."""


class ModelTimeout(ModelError):
    """No complete answer within the timeout (after the provider's retries)."""


class ModelRateLimited(ModelError):
    """The provider kept answering 429 after the retries."""


class ModelUnavailable(ModelError):
    """Connection refused, DNS failure, 5xx after retries, bad credentials, unknown model."""


class ChatOptions(TypedDict, total=False):
    """The keyword options of :meth:`ChatModel.chat`, each one optional."""

    tools: Sequence[ToolSpec]
    """Tools the model may call: it may answer with ``tool_calls`` (several: parallel calls)."""
    temperature: float | None
    max_tokens: int | None
    timeout: float | None
    """Seconds the call may take (None: the model's default)."""
    json_schema: dict[str, Any] | None
    """Ask for a JSON object of this schema as ``content`` (structured output; used by the
    expander/classifier and Q/A generation)."""
    on_text: TextCallback | None
    """Receives the text deltas as they arrive (the provider streams when it is given)."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model with tool calling. Thread-safe: one instance serves concurrent turns."""

    @property
    def name(self) -> str:
        """``provider:model`` — what ``ask --json`` reports as ``model``."""
        ...

    def chat(self, messages: Sequence[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        """One completion of ``messages`` with the :class:`ChatOptions` given (tools, structured
        output, streaming …). Raises :class:`ModelError` subclasses, never a provider SDK's own
        exception."""
        ...


class CallbackFailed(Exception):
    """``on_text`` raised: its exception (the cause) is the caller's, not the provider's, and
    ``chat`` re-raises it as it was."""


@dataclass(frozen=True)
class ChatCall:
    """One :meth:`ChatModel.chat` request, as :meth:`BaseChatModel.complete` receives it: the
    messages and the :class:`ChatOptions` (``tools`` kept as a tuple)."""

    messages: tuple[Message, ...]
    tools: Sequence[ToolSpec] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    json_schema: dict[str, Any] | None = None
    on_text: TextCallback | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))


class BaseChatModel(ABC):
    """The base of every :class:`ChatModel`: :meth:`chat`'s signature and its error contract
    written once. A model implements :meth:`complete` (and ``name``); :meth:`failure` turns what
    the provider's SDK raised into a :class:`ModelError` (a model overrides it to name its
    endpoint), an ``on_text`` failure is re-raised as the caller's own exception."""

    @property
    def name(self) -> str:
        """``provider:model`` — what ``ask --json`` reports as ``model``."""
        return type(self).__name__

    def chat(self, messages: Sequence[Message], **options: Unpack[ChatOptions]) -> ChatResponse:
        """See :meth:`ChatModel.chat`."""
        call = ChatCall(tuple(messages), **options)
        try:
            return self.complete(call)
        except ModelError:
            raise
        except CallbackFailed as failed:
            raise failed.__cause__ from None  # type: ignore[misc]
        except Exception as exc:
            raise self.failure(exc, call) from None

    @abstractmethod
    def complete(self, call: ChatCall) -> ChatResponse:
        """One completion of ``call`` (may raise anything: :meth:`chat` translates it)."""

    def failure(self, exc: Exception, call: ChatCall) -> Exception:
        """What :meth:`chat` raises for ``exc`` (by default a :class:`ModelError` naming it)."""
        return ModelError(f"チャットモデル {self.name} が失敗しました: {type(exc).__name__}: {exc}")
