"""The team dependency answers on the event loop when the key store already knows the answer
(``AppdbKeys.known``, ``keyless_known``: kept less than ``ttl`` ago) and asks appdb in a thread
otherwise; the kept answers expire exactly as ``verify``'s do."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from starlette.requests import Request

from tansaku.server.errors import ApiError
from tansaku.server.keys import AppdbKeys
from tansaku.server.settings import ServerSettings
from tansaku.server.state import known_team

KEY = "tsk_live_7f3a9c2e"


class Repo:
    """appdb's key repository as AppdbKeys reads it, counting the reads."""

    def __init__(self) -> None:
        self.reads = 0
        self.teams = {KEY: "営業部"}
        self.keyless_on = True

    def verify(self, key: str) -> str | None:
        self.reads += 1
        return self.teams.get(key)

    def any(self) -> bool:
        self.reads += 1
        return bool(self.teams)

    def keyless(self) -> bool:
        self.reads += 1
        return self.keyless_on


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def keys():
    repo, clock = Repo(), Clock()
    return AppdbKeys(SimpleNamespace(keys=repo), ttl=0.5, clock=clock), repo, clock


def _request(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/api/search", "headers": raw})


def _state(keys, *, host: str = "127.0.0.1", session=None) -> SimpleNamespace:
    return SimpleNamespace(keys=keys, session=session, settings=ServerSettings(host=host))


def test_a_key_is_known_only_while_its_check_is_kept(keys) -> None:
    store, repo, clock = keys
    assert store.known(KEY) is None and repo.reads == 0  # never checked: not known
    assert store.verify(KEY) == "営業部" and repo.reads == 1
    assert store.known(KEY) == "営業部" and repo.reads == 1  # no read
    clock.now += 0.6
    assert store.known(KEY) is None  # expired as verify's answer does
    assert store.known("tsk_live_wrong") is None


def test_keyless_is_known_only_while_its_read_is_kept(keys) -> None:
    store, repo, clock = keys
    assert store.keyless_known() is None
    assert store.keyless() is True
    assert store.keyless_known() is True and repo.reads == 1
    clock.now += 0.6
    assert store.keyless_known() is None


def test_the_loop_answers_what_is_known_and_leaves_the_rest(keys) -> None:
    store, repo, clock = keys
    state = _state(store)
    bearer = _request({"Authorization": f"Bearer {KEY}"})
    assert known_team(bearer, state) is None  # not checked yet: get_team asks appdb
    store.verify(KEY)
    assert known_team(bearer, state) == "営業部"
    assert known_team(_request({"X-API-Key": KEY}), state) == "営業部"
    assert known_team(_request({"X-API-Key": "tsk_live_wrong"}), state) is None  # its 401 there
    with pytest.raises(ApiError) as err:  # a malformed header is refused on the loop as well
        known_team(_request({"Authorization": "Basic abc"}), state)
    assert err.value.status == 401

    anonymous = _request({})
    assert known_team(anonymous, state) is None  # the keyless setting not read yet
    store.keyless()
    assert known_team(anonymous, state) == ServerSettings().default_team
    repo.keyless_on = False
    clock.now += 0.6
    store.keyless()
    assert known_team(anonymous, state) is None  # off: get_team answers 401
    assert known_team(anonymous, _state(store, host="0.0.0.0")) is None  # never keyless there


def test_a_browser_session_is_left_to_get_team(keys) -> None:
    store, _, _ = keys
    store.keyless()
    state = _state(store, session=lambda request: "営業部")
    assert known_team(_request({"Cookie": "tansaku_session=abc"}), state) is None
    assert known_team(_request({}), state) == ServerSettings().default_team
