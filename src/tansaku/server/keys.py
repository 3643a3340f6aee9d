"""API keys as the server asks for them, over appdb's key repository (stored hashed)."""

from __future__ import annotations

from typing import Any


class AppdbKeys:
    """:class:`~tansaku.server.auth.KeyStore` over ``appdb.keys``."""

    def __init__(self, appdb: Any) -> None:
        self.repo = appdb.keys

    def verify(self, key: str) -> str | None:
        team = self.repo.verify(key)
        return str(team) if team else None

    def any(self) -> bool:
        return bool(self.repo.any())

    def keyless(self) -> bool:
        return bool(self.repo.keyless())
