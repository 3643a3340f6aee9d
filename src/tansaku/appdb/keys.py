"""API keys: each maps to one team. The key is shown once at creation and never stored.

A key looks like ``tsk_`` + 43 URL-safe characters (256 random bits). The database keeps its
SHA-256 hash and a short display prefix (``tsk_`` + 8 characters) used to find the row, list and
revoke it; :meth:`KeyRepo.verify` compares the hash in constant time (``hmac.compare_digest``),
and spends the same work on an unknown prefix as on a known one.

Keys are the operator's concern, not a team's: listing, revoking and ``any()`` span teams.

**Keyless access** (a request without a key served as the default team, on loopback) is an
explicit setting of the workspace, never a consequence of which keys happen to be active:
:meth:`KeyRepo.keyless` is on for a workspace where no key was ever created, off from the first
key on — revoking every key does not turn it back on — and :meth:`KeyRepo.set_keyless` (``tansaku
keys keyless on``) is the only way back. Creating a key turns it off again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import exists, select

from tansaku.appdb.errors import InvalidInput
from tansaku.appdb.models import ApiKey, Setting, utcnow
from tansaku.appdb.rows import Repo, found, record_of
from tansaku.errors import ConfigError
from tansaku.workspace import validate_name

if TYPE_CHECKING:
    pass

KEY_SCHEME = "tsk_"
PREFIX_CHARS = len(KEY_SCHEME) + 8
KEY_CHARS = len(KEY_SCHEME) + 43
MAX_NAME_CHARS = 100
#: ``last_used_at`` is written at most this often per key (a busy key is not a write per call).
TOUCH_EVERY = timedelta(minutes=1)
_DUMMY_HASH = hashlib.sha256(b"tansaku: no such key").hexdigest()
#: The ``appdb_settings`` row of keyless access: ``"on"`` or ``"off"`` (absent: on until a key
#: is first created).
KEYLESS_SETTING = "server.keyless"


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    id: int
    team: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        def iso(t: datetime | None) -> str | None:
            return t.isoformat() if t else None

        return {
            "id": self.id,
            "team": self.team,
            "name": self.name,
            "prefix": self.prefix,
            "active": self.active,
            "created_at": iso(self.created_at),
            "last_used_at": iso(self.last_used_at),
            "revoked_at": iso(self.revoked_at),
        }


def _record(row: ApiKey) -> ApiKeyRecord:
    return record_of(ApiKeyRecord, row)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _well_formed(key: str) -> bool:
    return (
        isinstance(key, str)
        and len(key) == KEY_CHARS
        and key.startswith(KEY_SCHEME)
        and key.isascii()
    )


class KeyRepo(Repo):
    """API keys (``db.keys``)."""

    def create_key(self, team: str, name: str = "") -> tuple[str, ApiKeyRecord]:
        """A new key for ``team``: ``(key_text, record)``. Show ``key_text`` once; it cannot be
        recovered afterwards."""
        try:
            validate_name(team, "チーム名")
        except ConfigError as exc:
            raise InvalidInput(str(exc)) from None
        name = (name or "").strip()
        if len(name) > MAX_NAME_CHARS:
            raise InvalidInput(f"キーの名前は {MAX_NAME_CHARS} 文字以内にしてください")
        with self.db.write() as s:
            while True:
                key = KEY_SCHEME + secrets.token_urlsafe(32)
                prefix = key[:PREFIX_CHARS]
                taken = s.scalar(select(exists().where(ApiKey.prefix == prefix)))
                if not taken:  # 48 random bits: a clash is all but impossible, still checked
                    break
            row = ApiKey(team=team, name=name, prefix=prefix, key_hash=hash_key(key))
            s.add(row)
            _write_keyless(s, False)  # a key means keys are required, until set otherwise
            s.flush()
            return key, _record(row)

    def authenticate(self, key: str, *, now: datetime | None = None) -> ApiKeyRecord | None:
        """The active key record matching ``key``, or ``None``."""
        if not _well_formed(key):
            hmac.compare_digest(_DUMMY_HASH, hash_key(str(key)))
            return None
        digest = hash_key(key)
        with self.db.read() as s:
            row = s.scalars(select(ApiKey).where(ApiKey.prefix == key[:PREFIX_CHARS])).first()
            stored = row.key_hash if row is not None else _DUMMY_HASH
            match = hmac.compare_digest(stored, digest)
            if row is None or not match or row.revoked_at is not None:
                return None
            record = _record(row)
        now = now or utcnow()
        if record.last_used_at is None or now - record.last_used_at >= TOUCH_EVERY:
            with self.db.write() as s:
                found = s.get(ApiKey, record.id)
                if found is not None:
                    found.last_used_at = now
        return record

    def verify(self, key: str) -> str | None:
        """The team of ``key``, or ``None`` for an unknown, malformed or revoked key."""
        record = self.authenticate(key)
        return record.team if record else None

    def revoke(self, prefix: str, *, team: str | None = None) -> ApiKeyRecord:
        """Revoke the key shown as ``prefix`` (optionally only if it belongs to ``team``);
        revoking a revoked key keeps its first revocation time."""
        stmt = select(ApiKey).where(ApiKey.prefix == prefix.strip())
        if team is not None:
            stmt = stmt.where(ApiKey.team == team)
        with self.db.write() as s:
            row = found(s, stmt, "API キー", prefix)
            if row.revoked_at is None:
                row.revoked_at = utcnow()
            s.flush()
            return _record(row)

    def list_keys(
        self, team: str | None = None, *, include_revoked: bool = True
    ) -> list[ApiKeyRecord]:
        """Keys (of ``team``, or of every team for the operator), oldest first."""
        stmt = select(ApiKey)
        if team is not None:
            stmt = stmt.where(ApiKey.team == team)
        if not include_revoked:
            stmt = stmt.where(ApiKey.revoked_at.is_(None))
        with self.db.read() as s:
            return [_record(r) for r in s.scalars(stmt.order_by(ApiKey.id))]

    def any(self) -> bool:
        """Whether any active key exists (none: the loopback demo may run without keys)."""
        with self.db.read() as s:
            return bool(s.scalar(select(exists().where(ApiKey.revoked_at.is_(None)))))

    def keyless(self) -> bool:
        """Whether keyless access is on: the explicit setting, else (no setting written) whether
        no key — active or revoked — was ever created."""
        with self.db.read() as s:
            setting = s.get(Setting, KEYLESS_SETTING)
            if setting is not None:
                return setting.value == "on"
            return not s.scalar(select(exists().where(ApiKey.id.is_not(None))))

    def set_keyless(self, on: bool) -> None:
        """Turn keyless access on or off (the operator's explicit decision)."""
        with self.db.write() as s:
            _write_keyless(s, on)


def _write_keyless(s: Any, on: bool) -> None:
    value = "on" if on else "off"
    row = s.get(Setting, KEYLESS_SETTING)
    if row is None:
        s.add(Setting(key=KEYLESS_SETTING, value=value))
    else:
        row.value = value
