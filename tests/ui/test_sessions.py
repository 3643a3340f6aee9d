"""Sessions and CSRF rules without a browser: expiry, revocation, keyless sessions ending when
a key appears, what counts as another site, and where a login may send the browser."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tansaku.server.ui.csrf import cookie_value, from_other_site
from tansaku.server.ui.routes import local_target
from tansaku.server.ui.sessions import IDLE_S, MAX_AGE_S, RECHECK_S, Sessions, same_token


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Key:
    prefix: str


class Repo:
    def __init__(self, prefixes: list[str]) -> None:
        self.prefixes = prefixes

    def list_keys(self, team: str, *, include_revoked: bool = True) -> list[Key]:
        return [Key(p) for p in self.prefixes]


class Keys:
    """A key store with appdb's shape (``repo.list_keys``)."""

    def __init__(self, prefixes: list[str]) -> None:
        self.repo = Repo(prefixes)
        self.keyless_on = not prefixes

    def create(self, prefix: str) -> None:
        self.repo.prefixes.append(prefix)
        self.keyless_on = False  # as appdb's create_key

    def verify(self, key: str) -> str | None:
        return "alpha" if key[:12] in self.repo.prefixes else None

    def any(self) -> bool:
        return bool(self.repo.prefixes)

    def keyless(self) -> bool:
        return self.keyless_on


def test_a_session_lives_while_used_and_ends_idle_or_old():
    clock = Clock()
    sessions = Sessions(Keys(["tsk_abcdefgh"]), clock=clock)
    token, session = sessions.open("alpha", "tsk_abcdefgh")
    assert sessions.get(token) is session and session.team == "alpha"
    assert sessions.get("someone-else's-token") is None
    clock.now += IDLE_S - 1
    assert sessions.get(token) is session  # used: the idle timer restarts
    clock.now += IDLE_S + 1
    assert sessions.get(token) is None
    token, _ = sessions.open("alpha", "tsk_abcdefgh")
    for _ in range(int(MAX_AGE_S // (IDLE_S / 2)) + 1):
        clock.now += IDLE_S / 2
        sessions.get(token)
    assert sessions.get(token) is None  # at most MAX_AGE_S, however busy


def test_logout_and_revocation_end_a_session():
    clock = Clock()
    keys = Keys(["tsk_abcdefgh"])
    sessions = Sessions(keys, clock=clock)
    token, _ = sessions.open("alpha", "tsk_abcdefgh")
    sessions.close(token)
    assert sessions.get(token) is None
    token, _ = sessions.open("alpha", "tsk_abcdefgh")
    keys.repo.prefixes.clear()  # the key is revoked
    assert sessions.get(token) is not None  # checked again only after RECHECK_S
    clock.now += RECHECK_S + 1
    assert sessions.get(token) is None


def test_keyless_sessions_end_when_the_first_key_is_created():
    keys = Keys([])
    sessions = Sessions(keys)
    token, _ = sessions.open("default", None)
    assert sessions.get(token) is not None
    keys.create("tsk_abcdefgh")
    assert sessions.get(token) is None
    keys.repo.prefixes.clear()  # every key revoked: keyless access stays off
    assert sessions.get(sessions.open("default", None)[0]) is None


def test_tokens_are_compared_whole():
    assert same_token("abc", "abc")
    assert not same_token("ab", "abc")
    assert not same_token("", "abc")
    assert not same_token(None, "abc")


@pytest.mark.parametrize(
    ("headers", "other"),
    [
        ({"sec-fetch-site": "same-origin", "origin": "null", "host": "127.0.0.1:8000"}, False),
        ({"sec-fetch-site": "cross-site", "host": "127.0.0.1:8000"}, True),
        ({"sec-fetch-site": "same-site", "host": "localhost:8000"}, True),
        ({"origin": "http://127.0.0.1:8000", "host": "127.0.0.1:8000"}, False),
        ({"origin": "http://evil.example", "host": "127.0.0.1:8000"}, True),
        ({"origin": "null", "host": "127.0.0.1:8000"}, True),
        ({"host": "127.0.0.1:8000"}, False),  # curl: no browser headers at all
    ],
)
def test_what_counts_as_another_site(headers, other):
    assert from_other_site(headers) is other


def test_cookie_value_reads_one_cookie_and_survives_garbage():
    assert cookie_value("a=1; tansaku_session=tok-en_1", "tansaku_session") == "tok-en_1"
    assert cookie_value("a=1", "tansaku_session") is None
    assert cookie_value(None, "tansaku_session") is None
    assert cookie_value('tansaku_session="unterminated', "tansaku_session") is None


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/dashboard", "/dashboard"),
        ("/search?collection=reports&q=冷蔵庫", "/search?collection=reports&q=冷蔵庫"),
        (None, "/"),
        ("", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("/\t/evil.example", "/"),
        ("https://evil.example/", "/"),
        ("javascript:alert(1)", "/"),
        ("dashboard", "/"),
    ],
)
def test_login_only_redirects_within_the_server(target, expected):
    assert local_target(target) == expected
