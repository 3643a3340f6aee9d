"""Resetting a team: every record it has in every collection removed in one call.

>>> reset_team(ts, "shinjuku")            # the team's records gone from each collection

Each collection where the team has records loses them in a new generation of its own (the
same deletion as ``tansaku collections delete NAME --team TEAM``); other teams' records stay.
A collection left without any record of any team is removed too, unless ``drop_empty=False``
(the server decides that itself: a collection another team created stays).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tansaku.errors import CollectionNotFound
from tansaku.workspace import validate_name

if TYPE_CHECKING:
    from tansaku.client import Tansaku


@dataclass(frozen=True)
class ResetReport:
    team: str
    collections: dict[str, int]  # collection -> the team's records removed from it
    emptied: tuple[str, ...]  # collections left without any record
    removed: tuple[str, ...]  # of those, the collections removed

    @property
    def records(self) -> int:
        return sum(self.collections.values())

    def to_dict(self) -> dict[str, object]:
        return {
            "team": self.team,
            "collections": self.collections,
            "records": self.records,
            "emptied": list(self.emptied),
            "removed": list(self.removed),
        }


def reset_team(
    ts: Tansaku,
    team: str,
    *,
    drop_empty: bool = True,
    lock: Callable[[str], AbstractContextManager[object]] | None = None,
) -> ResetReport:
    """Remove every record of ``team`` from every collection; a collection left empty is
    removed when ``drop_empty``. ``lock(name)``: held while a collection is changed (a server
    keeps its own jobs out meanwhile)."""
    validate_name(team, "チーム名")
    counts: dict[str, int] = {}
    emptied: list[str] = []
    removed: list[str] = []
    for info in ts.collections():
        if team not in info.teams:
            continue
        with nullcontext() if lock is None else lock(info.name):
            try:
                with ts.reading(info.name) as col:
                    counts[info.name] = col.store.count(team) if col.handles is not None else 0
                ts.delete_collection(info.name, team=team)
                with ts.reading(info.name) as col:
                    empty = col.handles is None or col.store.total() == 0
            except CollectionNotFound:  # removed by another process meanwhile
                counts.pop(info.name, None)
                continue
            if empty:
                emptied.append(info.name)
                if drop_empty:
                    ts.delete_collection(info.name)
                    removed.append(info.name)
    return ResetReport(team, counts, tuple(emptied), tuple(removed))


__all__ = ["ResetReport", "reset_team"]
