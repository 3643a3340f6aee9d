"""appdb's domain errors; front ends map them (HTTP 404 / 429 / 400, CLI exit codes)."""

from __future__ import annotations

from tansaku.errors import InvalidRequest, TansakuError


class AppDBError(TansakuError):
    """The application database cannot be opened or migrated."""


class NotFound(TansakuError):
    """No row of the caller's team has this id (another team's row is not found either)."""

    def __init__(self, what: str, ident: str) -> None:
        self.what = what
        self.ident = ident
        super().__init__(f"{what}「{ident}」が見つかりません")


class RateLimited(TansakuError):
    """Too many writes from one client; ``retry_after`` seconds until the next is accepted."""

    def __init__(self, limit: int, window: str, retry_after: int) -> None:
        self.limit = limit
        self.window = window
        self.retry_after = retry_after
        super().__init__(
            f"送信が多すぎます({window}あたり {limit} 件まで)。"
            f"{retry_after} 秒ほど待ってからもう一度送ってください"
        )


class InvalidInput(InvalidRequest):
    """A value sent to appdb is invalid (the caller's mistake); the message says which."""


class InvalidTransition(TansakuError):
    """A job was asked to move to a state it cannot reach from its current one."""
