"""API keys: shown once, stored hashed, verified to their team, revocable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from tansaku.appdb import InvalidInput, NotFound


def test_create_verify_and_the_key_is_never_stored(db) -> None:
    key, rec = db.keys.create_key("cards", "CI 用")
    assert key.startswith("tsk_") and len(key) == 47
    assert rec.prefix == key[:12] and rec.team == "cards" and rec.name == "CI 用"
    assert db.keys.verify(key) == "cards"
    with db.engine.connect() as c:
        rows = c.execute(text("SELECT * FROM api_keys")).all()
    assert key not in repr(rows) and key[12:] not in repr(rows)


def test_wrong_malformed_and_revoked_keys_do_not_verify(db) -> None:
    key, rec = db.keys.create_key("cards")
    other = key[:-1] + ("A" if key[-1] != "A" else "B")
    for bad in (other, key + "x", "", "tsk_", "bearer " + key, key.upper(), "鍵" * 47):
        assert db.keys.verify(bad) is None
    assert db.keys.any()
    revoked = db.keys.revoke(rec.prefix)
    assert revoked.revoked_at is not None and not revoked.active
    assert db.keys.verify(key) is None
    assert not db.keys.any()
    assert db.keys.revoke(rec.prefix).revoked_at == revoked.revoked_at


def test_each_key_maps_to_its_own_team(db) -> None:
    ka, _ = db.keys.create_key("cards")
    kb, _ = db.keys.create_key("restaurant")
    assert (db.keys.verify(ka), db.keys.verify(kb)) == ("cards", "restaurant")
    assert [k.team for k in db.keys.list_keys("cards")] == ["cards"]
    assert [k.team for k in db.keys.list_keys()] == ["cards", "restaurant"]
    with pytest.raises(NotFound):
        db.keys.revoke(db.keys.list_keys("cards")[0].prefix, team="restaurant")


def test_last_used_is_recorded_at_most_once_a_minute(db) -> None:
    key, _ = db.keys.create_key("cards")
    first = db.keys.authenticate(key)
    assert first is not None
    (rec,) = db.keys.list_keys()
    used = rec.last_used_at
    assert used is not None
    db.keys.authenticate(key, now=used + timedelta(seconds=30))
    assert db.keys.list_keys()[0].last_used_at == used
    db.keys.authenticate(key, now=used + timedelta(minutes=2))
    assert db.keys.list_keys()[0].last_used_at == used + timedelta(minutes=2)


def test_bad_team_or_name_and_unknown_prefix(db) -> None:
    with pytest.raises(InvalidInput, match="チーム名"):
        db.keys.create_key("../etc")
    with pytest.raises(InvalidInput, match="100 文字"):
        db.keys.create_key("cards", "名" * 101)
    with pytest.raises(NotFound, match="tsk_nothing"):
        db.keys.revoke("tsk_nothing")
    assert not db.keys.any() and db.keys.list_keys() == []


def test_keyless_access_is_an_explicit_setting_not_the_absence_of_keys(db) -> None:
    assert db.keys.keyless()  # a fresh workspace: no key ever created
    _, first = db.keys.create_key("cards")
    assert not db.keys.keyless()
    db.keys.revoke(first.prefix)
    assert not db.keys.any()
    assert not db.keys.keyless()  # revoking the last key does not open the server again
    db.keys.set_keyless(True)  # only the operator does
    assert db.keys.keyless()
    db.keys.create_key("cards")  # a new key requires keys again
    assert not db.keys.keyless()
    db.keys.set_keyless(True)
    db.keys.set_keyless(False)
    assert not db.keys.keyless()
