"""The registry of a Qdrant server backend: per tansaku collection, what the embedded backend
keeps in its folder (``config.toml``, ``state.json``, ``CURRENT``).

One payload-only Qdrant collection, ``{prefix}meta``, holds one point per tansaku collection
(point id: the first 8 bytes of blake2b(``"collection\\0" + name``), as ``tansaku.store.ids``
derives ids) with the payload::

    {"name": "reports",
     "config": {...},          # CollectionConfig.to_dict()
     "state": "{...}",         # CollectionState.to_json(): the BM25 statistics of the commit
     "version": 7,             # bumped by every commit: what a view depends on
     "dirty": false,           # a writer is (or was, if it died) writing since that commit
     "teams": []}              # the teams that writer touched (what a repair must rebuild)

A point is written whole (one upsert) by a commit, so a reader sees one commit's config and
state together, never a mix. ``dirty``/``teams`` are set by the writer before its first write
of a team (a payload update that leaves config, state and version alone). The writer holds the
collection's writer lock, so reading the version and writing the next one does not race.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tansaku.collection.stats import CollectionState
from tansaku.config import CollectionConfig, config_from_dict
from tansaku.errors import StorageError

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

META = "meta"
_PAGE = 256


def entry_id(name: str) -> int:
    """The registry point id of tansaku collection ``name`` (unsigned 64-bit)."""
    digest = hashlib.blake2b(f"collection\x00{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True)
class Entry:
    """One collection as the registry holds it."""

    name: str
    config: CollectionConfig
    state: CollectionState
    version: int
    """Commits so far (0: created by a writer that has not committed yet)."""
    dirty: bool
    """A writer has written since the last commit and not committed (yet, or ever)."""
    teams: tuple[str, ...]
    """The teams that writer touched (empty when not dirty)."""


class Registry:
    """The ``{prefix}meta`` collection of one server (see the module docstring)."""

    def __init__(self, client: QdrantClient, prefix: str) -> None:
        self.client = client
        self.collection = f"{prefix}{META}"
        self._ready = False

    # -- reading ------------------------------------------------------------------------
    def _exists(self) -> bool:
        if not self._ready:
            self._ready = bool(self.client.collection_exists(self.collection))
        return self._ready

    def _payload(self, name: str, keys: list[str] | bool = True) -> dict[str, Any] | None:
        if not self._exists():
            return None
        found = self.client.retrieve(self.collection, ids=[entry_id(name)], with_payload=keys)
        if not found or found[0].payload is None:
            return None
        payload = found[0].payload
        if payload.get("name") not in (name, None):  # a 64-bit id collision: not ours
            return None
        return payload

    def read(self, name: str) -> Entry | None:
        """The collection's entry, or None when it is not registered."""
        payload = self._payload(name)
        if payload is None:
            return None
        try:
            return Entry(
                name=name,
                config=config_from_dict(payload["config"], name=name),
                state=CollectionState.from_json(payload["state"]),
                version=int(payload["version"]),
                dirty=bool(payload.get("dirty", False)),
                teams=tuple(payload.get("teams") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StorageError(
                f"Qdrant の {self.collection} にあるコレクション「{name}」の登録情報を"
                f"読めません: {exc}"
            ) from None

    def fingerprint(self, name: str) -> tuple[int, str] | None:
        """(version, config as JSON): what a view of the collection depends on."""
        payload = self._payload(name, ["name", "version", "config"])
        if payload is None:
            return None
        config = json.dumps(payload.get("config"), ensure_ascii=False, sort_keys=True)
        return int(payload.get("version", 0)), config

    def names(self) -> list[str]:
        """Every registered collection, sorted."""
        if not self._exists():
            return []
        names: list[str] = []
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection, limit=_PAGE, offset=offset, with_payload=["name"]
            )
            names.extend(str(p.payload["name"]) for p in points if p.payload)
            if offset is None:
                return sorted(names)

    # -- writing (the collection's writer, under its lock) ------------------------------
    def _ensure(self) -> None:
        if self._exists():
            return
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(self.collection, vectors_config={})
        self._ready = True

    def commit(self, name: str, config: CollectionConfig, state: CollectionState) -> int:
        """Write a commit of the collection: config and state, ``dirty`` cleared, the version
        bumped (returned)."""
        self._ensure()
        before = self._payload(name, ["version"])
        version = int(before.get("version", 0)) + 1 if before else 1
        self._write(name, config, state, version=version, dirty=False, teams=())
        return version

    def mark_dirty(
        self, name: str, teams: tuple[str, ...], *, config: CollectionConfig | None = None
    ) -> None:
        """Before a writer's first write of a team: ``dirty`` set, ``teams`` recorded (a
        collection not registered yet is registered at version 0 with ``config``)."""
        self._ensure()
        if self._payload(name, ["version"]) is None:
            cfg = config or CollectionConfig(name=name)
            self._write(name, cfg, CollectionState(), version=0, dirty=True, teams=teams)
            return
        self.client.set_payload(
            self.collection,
            payload={"dirty": True, "teams": list(teams)},
            points=[entry_id(name)],
            wait=True,
        )

    def _write(
        self,
        name: str,
        config: CollectionConfig,
        state: CollectionState,
        *,
        version: int,
        dirty: bool,
        teams: tuple[str, ...],
    ) -> None:
        from qdrant_client import models

        payload = {
            "name": name,
            "config": config.to_dict(),
            "state": state.to_json(),
            "version": version,
            "dirty": dirty,
            "teams": sorted(teams),
        }
        point = models.PointStruct(id=entry_id(name), vector={}, payload=payload)
        self.client.upsert(self.collection, points=[point], wait=True)

    def remove(self, name: str) -> None:
        """Unregister the collection (its data collections are the caller's to drop)."""
        if not self._exists():
            return
        from qdrant_client import models

        self.client.delete(
            self.collection,
            points_selector=models.PointIdsList(points=[entry_id(name)]),
            wait=True,
        )
