"""Browser sessions of the web UI: a random token in an ``HttpOnly``, ``SameSite=Lax`` cookie,
kept server-side (in memory, by its SHA-256) with the team and a CSRF token.

A session is opened by logging in with an API key (the key itself is never kept: only its
display prefix, to notice a revocation) or, on the keyless loopback demo, automatically
for the default team. It ends after ``IDLE_S`` without use, ``MAX_AGE_S`` after login, on
logout, when its key is revoked, and — for a keyless demo session — when keyless access is
turned off (the first key created does that). Sessions live in the process: a restart asks
the user to log in again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

COOKIE = "tansaku_session"
LOGIN_COOKIE = "tansaku_login_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
IDLE_S = 8 * 3600
MAX_AGE_S = 24 * 3600
RECHECK_S = 30.0  # how often a session's key is checked for revocation
MAX_SESSIONS = 10_000


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def same_token(sent: str | None, expected: str) -> bool:
    """Constant-time comparison of a submitted token with the expected one."""
    return bool(sent) and hmac.compare_digest(str(sent).encode(), expected.encode())


@dataclass
class Session:
    team: str
    csrf: str
    key_prefix: str | None
    """The display prefix of the key that logged in (None: a keyless demo session)."""
    created: float
    seen: float
    checked: float


class Sessions:
    """The open sessions of one server process (thread-safe)."""

    def __init__(self, keys: Any = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.keys = keys  # the server's KeyStore (None: no keys at all)
        self.clock = clock
        self._by_digest: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, team: str, key_prefix: str | None) -> tuple[str, Session]:
        """A new session: ``(cookie token, session)``."""
        token = secrets.token_urlsafe(32)
        now = self.clock()
        session = Session(team, secrets.token_urlsafe(32), key_prefix, now, now, now)
        with self._lock:
            self._expire(now)
            if len(self._by_digest) >= MAX_SESSIONS:  # drop the least recently used
                oldest = min(self._by_digest, key=lambda d: self._by_digest[d].seen)
                del self._by_digest[oldest]
            self._by_digest[_digest(token)] = session
        return token, session

    def get(self, token: str | None) -> Session | None:
        """The live session of ``token`` (touched), or None. Sessions whose key was revoked end,
        and keyless demo sessions end once keyless access is off."""
        if not token:
            return None
        digest = _digest(token)
        now = self.clock()
        with self._lock:
            session = self._by_digest.get(digest)
            if session is None:
                return None
            if now - session.seen > IDLE_S or now - session.created > MAX_AGE_S:
                del self._by_digest[digest]
                return None
        if not _still_allowed(session, self.keys, now):
            self.close(token)
            return None
        session.seen = now
        return session

    def close(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._by_digest.pop(_digest(token), None)

    def _expire(self, now: float) -> None:
        dead = [
            d
            for d, s in self._by_digest.items()
            if now - s.seen > IDLE_S or now - s.created > MAX_AGE_S
        ]
        for d in dead:
            del self._by_digest[d]


def _still_allowed(session: Session, keys: Any, now: float) -> bool:
    if keys is None:
        return session.key_prefix is None
    if session.key_prefix is None:
        return bool(keys.keyless())
    repo = getattr(keys, "repo", None)  # appdb's keys: revocation is visible by prefix
    if repo is None or now - session.checked < RECHECK_S:
        return True
    active = repo.list_keys(session.team, include_revoked=False)
    session.checked = now
    return any(k.prefix == session.key_prefix for k in active)


def key_prefix(key: str) -> str:
    """The display prefix of an API key (``tsk_`` + 8 characters), as appdb stores it."""
    return key[:12]
