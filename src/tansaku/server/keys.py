"""API keys as the server asks for them, over appdb's key repository (stored hashed).

Every request asks who its key belongs to and whether keyless access is on (the host guard and
the team dependency), so the answers are kept for ``ttl`` seconds (half a second): a key revoked
or created, or keyless access switched, by ``tansaku keys`` in another process is honoured
within that time, and a busy server reads the key table a couple of times a second instead of
on every request. Only keys that were found are kept (a flood of wrong keys cannot grow the
cache; a new key works at once), under their SHA-256, never the key itself.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

TTL_S = 0.5
MAX_KEYS = 4096
T = TypeVar("T")


class AppdbKeys:
    """:class:`~tansaku.server.auth.KeyStore` over ``appdb.keys``, its answers kept for
    ``ttl`` seconds (0: asked every time)."""

    def __init__(
        self, appdb: Any, *, ttl: float = TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.repo = appdb.keys
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._teams: dict[str, tuple[float, str]] = {}
        self._flags: dict[str, tuple[float, bool]] = {}

    def verify(self, key: str) -> str | None:
        digest, now = _digest(key), self._clock()
        kept = _fresh(self._teams.get(digest), now)
        if kept is not None:
            return kept
        found = self.repo.verify(key)
        team = str(found) if found else None
        with self._lock:
            if team is None:
                self._teams.pop(digest, None)
            elif self.ttl > 0:
                if len(self._teams) >= MAX_KEYS:
                    self._teams.clear()
                self._teams[digest] = (now + self.ttl, team)
        return team

    def known(self, key: str) -> str | None:
        """The team of ``key`` when a check less than ``ttl`` ago found it, else None — without
        reading appdb (the server answers such a request on its event loop)."""
        return _fresh(self._teams.get(_digest(key)), self._clock())

    def keyless_known(self) -> bool | None:
        """Whether keyless access is on, when asked less than ``ttl`` ago, else None."""
        return _fresh(self._flags.get("keyless"), self._clock())

    def _flag(self, name: str, read: Callable[[], Any]) -> bool:
        now = self._clock()
        kept = _fresh(self._flags.get(name), now)
        if kept is not None:
            return kept
        value = bool(read())
        if self.ttl > 0:
            with self._lock:
                self._flags[name] = (now + self.ttl, value)
        return value

    def any(self) -> bool:
        return self._flag("any", self.repo.any)

    def keyless(self) -> bool:
        return self._flag("keyless", self.repo.keyless)


def _digest(key: str) -> str:
    """What a key is kept under (never the key itself)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _fresh(entry: tuple[float, T] | None, now: float) -> T | None:
    """A kept ``(expires, value)``'s value while it has not expired."""
    return entry[1] if entry is not None and now < entry[0] else None
