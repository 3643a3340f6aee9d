"""Which teams see which collections.

A team sees a collection when it has records in it, or when it created the collection through
the API (an empty collection has no records yet). Creations are remembered in
``<workspace>/server/collection_owners.json``, written atomically.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tansaku.client import CollectionInfo, Tansaku
from tansaku.files import atomic_write


class Owners:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return {str(k): [str(t) for t in v] for k, v in data.items() if isinstance(v, list)}

    def teams(self, collection: str) -> set[str]:
        with self._lock:
            return set(self._read().get(collection, []))

    def add(self, collection: str, team: str) -> None:
        with self._lock:
            data = self._read()
            teams = data.setdefault(collection, [])
            if team not in teams:
                teams.append(team)
                atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1))

    def remove(self, collection: str, team: str | None = None) -> None:
        """Forget ``team``'s creation of ``collection`` (every team's when None)."""
        with self._lock:
            data = self._read()
            if collection not in data:
                return
            if team is None:
                del data[collection]
            else:
                data[collection] = [t for t in data[collection] if t != team]
                if not data[collection]:
                    del data[collection]
            atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1))


def visible(client: Tansaku, owners: Owners, team: str) -> list[CollectionInfo]:
    """The collections ``team`` may see, with their point counts and teams."""
    return _seen(client.collections(), owners, team)


def find_visible(client: Tansaku, owners: Owners, team: str, name: str) -> CollectionInfo | None:
    """Collection ``name`` if ``team`` may see it (every search asks: one collection read)."""
    return next(iter(_seen(client.collections(only=name), owners, team)), None)


def _seen(infos: list[CollectionInfo], owners: Owners, team: str) -> list[CollectionInfo]:
    """Those of ``infos`` that hold ``team``'s records or that ``team`` created."""
    return [i for i in infos if team in i.teams or team in owners.teams(i.name)]
