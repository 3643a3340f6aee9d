"""The part every chat model behind a provider's HTTP endpoint shares (OpenAI-compatible servers,
Gemini): its ``provider:model`` name, its repr, the time limit of one call and the deadline of a
streamed reply."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from tansaku.agent.models._errors import Endpoint
from tansaku.agent.models.base import BaseChatModel, ChatCall


class RemoteChatModel(BaseChatModel):
    """A :class:`BaseChatModel` with a ``model`` name, a default ``timeout`` and ``temperature``;
    its subclass sets the :class:`Endpoint` its messages name."""

    _endpoint: Endpoint

    def __init__(self, *, model: str, timeout: float, temperature: float | None) -> None:
        if not model:
            raise ValueError("model must be a non-empty model name")
        self.model = model
        self.timeout = timeout
        self.temperature = temperature

    @property
    def name(self) -> str:
        return f"{self._endpoint.provider}:{self.model}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={self._endpoint.url!r})"

    def _limit(self, call: ChatCall) -> float:
        """Seconds ``call`` may take: its own timeout, else the model's."""
        return call.timeout if call.timeout is not None else self.timeout

    def _stream(self, limit: float, start: Callable[[], Any], add: Callable[[Any], None]) -> None:
        """Hand every chunk of the stream ``start`` opens to ``add``, closing the stream at the
        end; a stream still running ``limit`` seconds after its start raises a timeout."""
        deadline = time.monotonic() + limit
        with contextlib.closing(start()) as chunks:
            for chunk in chunks:
                add(chunk)
                if time.monotonic() > deadline:
                    raise self._endpoint.timeout(limit)
