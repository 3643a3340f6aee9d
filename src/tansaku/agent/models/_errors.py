"""Provider failures as :class:`~tansaku.agent.models.base.ModelError` subclasses with a
Japanese message that names the endpoint and the model — and never the API key."""

from __future__ import annotations

from dataclasses import dataclass

from tansaku.agent.models.base import (
    CallbackFailed,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    TextCallback,
)
from tansaku.embed.remote import redact_url

_DETAIL_CHARS = 200


def public_endpoint(url: str) -> str:
    """``url`` without credentials, query or fragment (what a message may show)."""
    try:
        return redact_url(url) or url
    except ValueError:
        return "(不正な URL)"


def forward_text(on_text: TextCallback | None, text: str) -> None:
    """Hand a piece of streamed text to ``on_text`` (its failure wrapped in
    :class:`CallbackFailed`, so that it is not mistaken for the provider's)."""
    if on_text is None:
        return
    try:
        on_text(text)
    except Exception as exc:
        raise CallbackFailed from exc


@dataclass(frozen=True)
class Endpoint:
    """Where a model lives, for messages: ``model`` at ``url``, retried ``retries`` times."""

    provider: str
    model: str
    url: str
    retries: int
    secret: str | None = None

    @property
    def where(self) -> str:
        return f"{self.provider} のモデル「{self.model}」({public_endpoint(self.url)})"

    def scrub(self, text: str) -> str:
        """``text`` with the API key masked, whitespace folded, cut to a readable length."""
        if self.secret and len(self.secret) >= 4:
            text = text.replace(self.secret, "***")
        text = " ".join(text.split())
        return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"

    # -- the errors -----------------------------------------------------------------------------

    def timeout(self, seconds: float | None) -> ModelTimeout:
        limit = f"{seconds:g} 秒以内に" if seconds else "時間内に"
        return ModelTimeout(
            f"{self.where}が{limit}応答しませんでした(最大 {self.retries} 回再試行)。"
            "サーバーの負荷を確かめるか、timeout を延ばしてください"
        )

    def unreachable(self, detail: str = "") -> ModelUnavailable:
        why = f"({self.scrub(detail)})" if detail else ""
        return ModelUnavailable(
            f"{self.where}に接続できません{why}。サーバーが起動しているか、"
            "base_url(TANSAKU_LLM_BASE_URL)を確かめてください"
        )

    def rate_limited(self, detail: str = "") -> ModelRateLimited:
        why = f": {self.scrub(detail)}" if detail else ""
        return ModelRateLimited(
            f"{self.where}の利用上限に達しました(429{why}、最大 {self.retries} 回再試行)。"
            "しばらく待ってから再度お試しください"
        )

    def status(self, code: int, detail: str = "") -> ModelError:
        """The error for an HTTP status the provider answered with (after its retries)."""
        why = f": {self.scrub(detail)}" if detail else ""
        if code == 429:
            return self.rate_limited(detail)
        if code in (401, 403):
            return ModelUnavailable(
                f"{self.where}が認証を拒否しました({code}{why})。API キー"
                "(TANSAKU_LLM_API_KEY や api_key_env で指定した環境変数)を確かめてください"
            )
        if code == 404:
            return ModelUnavailable(
                f"{self.where}が見つかりません(404{why})。モデル名と base_url を確かめてください"
            )
        if code in (408, 504):
            return ModelTimeout(f"{self.where}が時間内に応答しませんでした({code}{why})")
        if code >= 500:
            return ModelUnavailable(
                f"{self.where}がサーバーエラーを返しました({code}{why}、"
                f"最大 {self.retries} 回再試行)。しばらく待ってから再度お試しください"
            )
        return ModelError(f"{self.where}が要求を受け付けませんでした({code}{why})")

    def bad_response(self, detail: str) -> ModelError:
        return ModelError(f"{self.where}の応答を解釈できませんでした({self.scrub(detail)})")
