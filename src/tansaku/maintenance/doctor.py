"""``tansaku doctor``: check every collection of a workspace against what it must hold, and
repair what can be repaired.

Generations make a crash leave either the last commit or the new one
(``tansaku.backends.embedded.generations``),
so on a workspace written by this version the checks find nothing; they exist for workspaces
written before generations, for folders edited or copied by hand, and as the proof that the
statistics really are what the records say. Checks per collection:

- ``legacy``: the layout before generations (repair: migrate, which recounts the statistics);
- ``current``: ``CURRENT`` missing or naming a missing generation (repair: publish the newest
  complete generation);
- ``bm25``: the BM25 length statistics differ from the sums over the records (repair: a new
  generation with the recounted statistics);
- ``units``: the unit count table differs from the unit shard (repair: recount it);
- ``ids``: a shard's id table is missing, unreadable or names other points than the shard holds
  (repair: a new generation whose writer builds the table from the shard);
- ``leftovers``: working generations of killed writers (repair: remove them).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tansaku.backends.embedded import generations as g
from tansaku.backends.embedded.writer import writing
from tansaku.backends.locks import WriterLock, try_exclusive
from tansaku.client import Tansaku
from tansaku.collection import Collection
from tansaku.collection.stats import STATE, recount_bm25
from tansaku.errors import TansakuError


@dataclass(frozen=True)
class Finding:
    collection: str
    check: str
    message: str
    repaired: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _bm25_mismatch(col: Collection) -> list[str]:
    lengths = col.store.lengths()
    out = []
    teams = set(lengths) | {
        t for t, f in col.state.bm25.items() if any(s.count for s in f.values())
    }
    for team in sorted(teams):
        fields = set(lengths.get(team, {})) | set(col.state.bm25.get(team, {}))
        for field in sorted(fields):
            want = lengths.get(team, {}).get(field, (0, 0))
            st = col.state.bm25.get(team, {}).get(field)
            have = (st.total_len, st.count) if st else (0, 0)
            if want != have:
                out.append(
                    f"チーム「{team}」のフィールド「{field}」: "
                    f"統計は {have[1]} 件・長さ {have[0]}、レコードは {want[1]} 件・長さ {want[0]}"
                )
    return out


def _units_mismatch(col: Collection) -> bool:
    h = col.handles
    if h is None or not h.has_unit_index():
        return False
    units = col.units
    return units.unit_counts(from_shard=False) != units.unit_counts(from_shard=True)


def _writing(col_dir: Path) -> bool:
    """Whether a writer holds the collection's write lock now (an ingest in progress)."""
    lock = col_dir / g.WRITE_LOCK
    if not lock.exists():
        return False
    fd = try_exclusive(lock)
    if fd is None:
        return True
    os.close(fd)
    return False


def _leftovers(gens_dir: Path, names: list[str], current: str, writing: bool) -> list[str]:
    """Generations neither current nor still read by a process (a reader's shared lock on
    ``.readers``: the rule the writer's clean-up follows) — a server holding the previous
    generation while an ingest commits is not something to repair — nor, while a writer holds
    the write lock (``writing``), newer than the current one: the ingest's own work."""
    out = []
    for name in names:
        if name == current or (writing and name > current):
            continue
        readers = gens_dir / name / g.READERS
        fd = try_exclusive(readers) if readers.exists() else -1
        if fd is None:  # still read: the next writer removes it once let go
            continue
        if fd >= 0:
            os.close(fd)
        out.append(name)
    return out


def _id_table_holders(col: Collection) -> dict[str, Any]:
    """The stores that keep an id table (the embedded backend's): ``shard`` the records,
    ``units`` the sentence units."""
    stores: dict[str, Any] = {"shard": col.store}
    h = col.handles
    if h is not None and h.has_unit_index():
        stores["units"] = col.units
    return {which: s for which, s in stores.items() if hasattr(s, "ids_problem")}


def _ids_problems(col: Collection) -> dict[str, str]:
    """Each shard's id table that does not name exactly its points, with what is wrong."""
    found = {which: s.ids_problem() for which, s in _id_table_holders(col).items()}
    return {which: message for which, message in found.items() if message}


def _inspect(ts: Tansaku, name: str) -> tuple[list[str], bool, dict[str, str], str]:
    """The read-only checks (in a function of their own: the view they hold is let go before
    a repair, so the repair can remove the generation it read)."""
    with ts.reading(name) as col:
        gen = col.gen.name if col.gen else ""
        return _bm25_mismatch(col), _units_mismatch(col), _ids_problems(col), gen


def _check_one(ts: Tansaku, name: str, fix: bool) -> list[Finding]:
    col_dir = ts.workspace.collection_dir(name)
    found: list[Finding] = []
    if g.is_legacy(col_dir):
        found.append(Finding(name, "legacy", "世代管理より前の形式です(移行で統計も数え直します)"))
        if fix:
            with writing(ts.workspace, name):
                pass
            found[-1] = Finding(name, "legacy", found[-1].message, True)
        else:
            return found
    cur = g.current(col_dir)
    if cur is None or not (cur / STATE).is_file():
        gens = sorted(
            p
            for p in (col_dir / g.GENS).glob("g*")
            if (p / g.READERS).exists() and (p / STATE).is_file()
        )
        found.append(Finding(name, "current", "確定した世代(CURRENT)が見つかりません"))
        if fix and gens:
            with WriterLock(col_dir / g.WRITE_LOCK, f"コレクション「{name}」"):
                g.publish(col_dir, gens[-1])
            found[-1] = Finding(name, "current", f"{gens[-1].name} を確定しました", True)
        else:
            return found
    bm25, units, ids, current = _inspect(ts, name)
    names = (
        sorted(p.name for p in (col_dir / g.GENS).iterdir()) if (col_dir / g.GENS).is_dir() else []
    )
    leftovers = _leftovers(col_dir / g.GENS, names, current, _writing(col_dir))
    for message in bm25:
        found.append(Finding(name, "bm25", message))
    if units:
        found.append(Finding(name, "units", "文単位の件数表が文単位のデータと一致しません"))
    for which, message in ids.items():
        found.append(Finding(name, "ids", f"候補の識別表({which}.ids): {message}"))
    if leftovers:
        found.append(Finding(name, "leftovers", f"使われていない世代: {', '.join(leftovers)}"))
    if fix and (bm25 or units or ids or leftovers):
        with ts.writing(name) as wcol:
            if bm25:
                wcol.state.bm25 = recount_bm25(wcol.store.lengths(), wcol.state)
            if units:
                wcol.units.recount()
            holders = _id_table_holders(wcol)
            for which in ids:  # built again from the shard when the writer closes it
                holders[which].rebuild_ids()
        found = [
            Finding(f.collection, f.check, f.message, True)
            if f.check in ("bm25", "units", "ids", "leftovers")
            else f
            for f in found
        ]
    return found


def check(ts: Tansaku, *, fix: bool = False) -> list[Finding]:
    """Findings of every collection (repaired ones marked ``repaired``)."""
    out: list[Finding] = []
    for name in ts.workspace.collection_names():
        try:
            out.extend(_check_one(ts, name, fix))
        except TansakuError as exc:
            out.append(Finding(name, "error", str(exc)))
    return out
