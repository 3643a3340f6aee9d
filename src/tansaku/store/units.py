"""Sentence units for the ``bigram`` axis: a second qdrant-edge shard beside the records.

Every record is cut into units (title + one sentence, ``tansaku.text.ngram``); each unit is a
point with a sparse ``bigram`` vector (the BM25 term-frequency part of its character bigrams)
and the filterable payload of its record (tenant, record id, document id, field, metadata,
date). A search returns each matching record once, scored by its best unit.

The IDF is ours, not the engine's: ``df.sqlite`` beside the shard counts, per (tenant, field),
the units and the units containing each bigram, and a query carries ``idf(term)`` as its weights,
so the engine's dot product is BM25 over the tenant's units (of the axis' fields). Asking the
engine for a filtered IDF instead (``IdfParams``) costs 5-10 ms a query at 300k units, and its
unfiltered IDF keeps counting deleted points; a lookup of ~30 terms costs well under 1 ms, and
the counts a search read are kept until the next write (a committed generation's never change).
Writes mark the table dirty before touching the shard and clean after committing the counts: a
crash in between is repaired by recounting from the shard when the store is next opened.

Units live in their own shard (``<collection>/units``) so they never enter the record shard's
counts, scans or IDF statistics. Unit point ids are UUIDv5 of (tenant, record id, unit number);
a record's units are replaced as a whole (delete by record id, then upsert).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord
from tansaku.store.candidates import CandidateIndex, Identity, identity, point_key
from tansaku.store.record_base import SearchScope
from tansaku.store.shard import (
    ON_DEMAND,
    ShardOwner,
    open_shard,
    search_filter,
    search_threads,
    sparse_vector,
    tenant_filter,
)
from tansaku.store.sparse import term_id
from tansaku.store.unit_base import BATCH, SPARSE, UnitSearch, record_units

MAX_INDEXED_UNITS = 600_000  # candidate index of the unit shard (~170 bytes a unit: ~100 MB)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS df (
    tenant TEXT NOT NULL, term INTEGER NOT NULL, field TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (tenant, term, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS units (
    tenant TEXT NOT NULL, field TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (tenant, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

Delta = Counter[tuple[str, int]]  # (field, term) -> change in df


def idf(n_units: int, df: int) -> float:
    """BM25 IDF as the engine computes it for records: ln(1 + (N - df + .5) / (df + .5))."""
    return math.log(1.0 + (n_units - df + 0.5) / (df + 0.5))


MAX_CACHED_TERMS = 200_000  # document frequencies kept between writes (~100 bytes each)
Scope = tuple[str, tuple[str, ...]]  # (team, the axis' fields; empty: all)


class _CountCache:
    """What searches read from ``df.sqlite``, kept until the holder's next write (:meth:`clear`):
    units per scope and each term's document frequency (0 for a term no unit holds). Bounded:
    past ``MAX_CACHED_TERMS`` terms it starts again empty."""

    def __init__(self) -> None:
        self._units: dict[Scope, int] = {}
        self._df: dict[Scope, dict[int, int]] = {}
        self._terms = 0

    def clear(self) -> None:
        self._units.clear()
        self._df.clear()
        self._terms = 0

    def units(self, scope: Scope, read: Callable[[], int]) -> int:
        """The scope's unit count; ``read()`` asks the table the first time."""
        n = self._units.get(scope)
        if n is None:
            n = self._units[scope] = read()
        return n

    def df(
        self, scope: Scope, terms: set[int], read: Callable[[list[int]], Iterable[tuple[int, int]]]
    ) -> dict[int, int]:
        """Each term's document frequency in the scope; ``read(missing)`` gives (term, df) of
        the terms not asked before that some unit holds."""
        if self._terms > MAX_CACHED_TERMS:
            self.clear()
        known = self._df.setdefault(scope, {})
        missing = sorted(terms.difference(known))
        if missing:
            known.update(dict.fromkeys(missing, 0))
            known.update(read(missing))
            self._terms += len(missing)
        return {t: known[t] for t in terms}


class UnitStore(ShardOwner, UnitSearch):
    """The unit shard of one collection, with its document-frequency table: the embedded
    :class:`~tansaku.store.protocols.UnitIndex`."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.RLock()
        cfg = qe.EdgeConfig(
            vectors={},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(memory=ON_DEMAND)},
            payload_memory=ON_DEMAND,
            id_tracker_memory=ON_DEMAND,
            wal_enabled=False,
            max_search_threads=search_threads(),
        )
        self._shard, fresh = open_shard(self.path, cfg, read_only=read_only)
        self.created = fresh  # a new, empty shard: whatever was built before is gone
        self._tenants: frozenset[str] | None = None  # teams with units; None after a write
        self._counts = _CountCache()  # the table's counts a search asked for; emptied by a write
        # unit point id -> (team, the record with id and document only): see candidates.py
        self._candidates = CandidateIndex(MAX_INDEXED_UNITS, bare=True)
        self._attach_ids(fresh)
        db = self.path / "df.sqlite"
        if read_only:  # a committed generation never changes: no locks, no journal
            self._db = sqlite3.connect(
                f"{db.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False
            )
            return
        self._db = sqlite3.connect(str(db), check_same_thread=False)
        self._db.executescript(_SCHEMA)
        if fresh:  # a table left from an earlier shard of the same folder counts nothing now
            with self._db:
                self._db.execute("DELETE FROM df")
                self._db.execute("DELETE FROM units")
        if self._dirty():
            self.recount()

    # -- document frequencies -----------------------------------------------------------
    def _dirty(self) -> bool:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'dirty'").fetchone()
        return bool(row and row[0])

    def _set_dirty(self, value: bool) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('dirty', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (int(value),),
            )

    def _apply(self, tenant: str, terms: Delta, units: Counter[str]) -> None:
        """Add the changes to the counts and clear the dirty mark, in one transaction."""
        self._tenants = None
        self._counts.clear()
        with self._db:
            self._db.executemany(
                "INSERT INTO df (tenant, term, field, n) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, term, field) DO UPDATE SET n = n + excluded.n",
                [(tenant, t, f, d) for (f, t), d in terms.items() if d],
            )
            self._db.executemany(
                "INSERT INTO units (tenant, field, n) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant, field) DO UPDATE SET n = n + excluded.n",
                [(tenant, f, d) for f, d in units.items() if d],
            )
            self._db.execute("DELETE FROM df WHERE n <= 0")
            self._db.execute("DELETE FROM units WHERE n <= 0")
            self._db.execute("UPDATE meta SET value = 0 WHERE key = 'dirty'")

    def _scroll(self, flt: qe.Filter | None) -> Iterable[tuple[int, str, str, tuple[int, ...]]]:
        """(tenant, field, bigram ids) of every unit matching ``flt``."""
        offset = None
        while True:
            points, offset = self._shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=1000,
                    filter=flt,
                    with_payload=qe.PayloadSelector.Include(["tenant", "field"]),
                    with_vector=[SPARSE],
                )
            )
            for p in points:
                vectors = p.vector if isinstance(p.vector, dict) else {}
                vec = vectors.get(SPARSE)
                payload = p.payload or {}
                indices = tuple(vec.indices) if isinstance(vec, qe.SparseVector) else ()
                tenant, field = str(payload.get("tenant", "")), str(payload.get("field", ""))
                yield point_key(p), tenant, field, indices
            if offset is None or not points:
                break

    def unit_counts(self, *, from_shard: bool) -> dict[tuple[str, str], int]:
        """Units per (team, field): as the count table says, or counted in the shard."""
        with self._lock:
            if not from_shard:
                rows = self._db.execute("SELECT tenant, field, n FROM units WHERE n > 0")
                return {(t, f): int(n) for t, f, n in rows.fetchall()}
            counts: Counter[tuple[str, str]] = Counter()
            for _, tenant, field, _terms in self._scroll(None):
                counts[(tenant, field)] += 1
            return dict(counts)

    def recount(self) -> None:
        """Rebuild the document-frequency table from the shard (after an interrupted write)."""
        with self._lock:
            self._set_dirty(True)
            self._tenants = None
            self._counts.clear()
            self._candidates.clear()
            with self._db:
                self._db.execute("DELETE FROM df")
                self._db.execute("DELETE FROM units")
            per_tenant: dict[str, tuple[Delta, Counter[str]]] = {}
            for _, tenant, field, indices in self._scroll(None):
                terms, units = per_tenant.setdefault(tenant, (Counter(), Counter()))
                units[field] += 1
                terms.update(zip(repeat(field), indices))
            for tenant, (terms, units) in per_tenant.items():
                self._apply(tenant, terms, units)
            self._set_dirty(False)

    # -- writes -------------------------------------------------------------------------
    def replace(self, tenant: str, records: Sequence[Record]) -> int:
        """(Re)write the units of ``records``: old units of the same ids go first. Returns the
        number of units written."""
        if not records:
            return 0
        points: list[Any] = []
        known: list[tuple[int, Identity]] = []
        terms: Delta = Counter()
        units: Counter[str] = Counter()
        for rec in records:
            ident = identity(tenant, rec, bare=True)  # shared by the record's units
            for uid, vec, payload in record_units(tenant, rec):
                units[rec.field] += 1
                terms.update(zip(repeat(rec.field), vec.indices))
                known.append((uid, ident))
                points.append(qe.Point(uid, {SPARSE: sparse_vector(vec)}, payload))
        with self._lock:
            self._set_dirty(True)
            old_terms, old_units = self._remove(tenant, [r.id for r in records])
            for i in range(0, len(points), BATCH):
                self._shard.update(qe.UpdateOperation.upsert_points(points[i : i + BATCH]))
            self._candidates.wrote(known)
            terms.subtract(old_terms)
            units.subtract(old_units)
            self._apply(tenant, terms, units)
        return len(points)

    def delete(self, tenant: str, rids: Sequence[str]) -> None:
        """Remove every unit of the given records."""
        if not rids:
            return
        with self._lock:
            self._set_dirty(True)
            old_terms, old_units = self._remove(tenant, rids)
            old_terms = Counter({k: -v for k, v in old_terms.items()})
            old_units = Counter({k: -v for k, v in old_units.items()})
            self._apply(tenant, old_terms, old_units)

    def delete_tenant(self, tenant: str) -> None:
        """Remove every unit of the team and its counts."""
        with self._lock:
            self._set_dirty(True)
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(tenant_filter(tenant)))
            self._candidates.team_deleted(tenant)
            self._tenants = None
            self._counts.clear()
            with self._db:
                self._db.execute("DELETE FROM df WHERE tenant = ?", (tenant,))
                self._db.execute("DELETE FROM units WHERE tenant = ?", (tenant,))
                self._db.execute("UPDATE meta SET value = 0 WHERE key = 'dirty'")

    def _remove(self, tenant: str, rids: Sequence[str]) -> tuple[Delta, Counter[str]]:
        """Delete the units of ``rids``; returns what they counted."""
        terms: Delta = Counter()
        units: Counter[str] = Counter()
        for i in range(0, len(rids), BATCH):
            flt = qe.Filter(
                must=[
                    qe.FieldCondition("tenant", match=qe.MatchValue(tenant)),
                    qe.FieldCondition("rid", match=qe.MatchAny(list(rids[i : i + BATCH]))),
                ]
            )
            gone: list[int] = []
            for point_id, _, field, indices in self._scroll(flt):
                gone.append(point_id)
                units[field] += 1
                terms.update(zip(repeat(field), indices))
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(flt))
            self._candidates.deleted(gone)
        return terms, units

    # -- reads --------------------------------------------------------------------------
    def _sole(self, tenant: str) -> bool:
        """Whether every unit is the tenant's (from the count table, cached until a write)."""
        with self._lock:
            if self._tenants is None:
                rows = self._db.execute("SELECT DISTINCT tenant FROM units WHERE n > 0")
                self._tenants = frozenset(t for (t,) in rows.fetchall())
            return self._tenants == {tenant}

    def count(self, tenant: str, filter: Filter | None = None) -> int:
        with self._lock:
            return int(
                self._shard.count(qe.CountRequest(filter=tenant_filter(tenant, filter), exact=True))
            )

    def idf_weights(
        self, tenant: str, terms: Iterable[int], fields: Sequence[str] = ()
    ) -> dict[int, float]:
        """``idf`` of each term over the tenant's units (of ``fields``; empty: all); terms no
        unit contains are left out. Counts come from ``df.sqlite`` once and are then kept until
        the next write (a committed generation's table never changes)."""
        wanted = set(terms)
        if not wanted:
            return {}
        field_sql = f" AND field IN ({','.join('?' * len(fields))})" if fields else ""

        def read_units() -> int:
            sql = f"SELECT COALESCE(SUM(n), 0) FROM units WHERE tenant = ?{field_sql}"
            return int(self._db.execute(sql, (tenant, *fields)).fetchone()[0])

        def read_df(missing: list[int]) -> Iterable[tuple[int, int]]:
            rows = self._db.execute(
                f"SELECT term, SUM(n) FROM df WHERE tenant = ? "
                f"AND term IN ({','.join('?' * len(missing))}){field_sql} GROUP BY term",
                (tenant, *missing, *fields),
            ).fetchall()
            return ((int(t), int(n)) for t, n in rows)

        scope = (tenant, tuple(fields))
        with self._lock:
            n_units = self._counts.units(scope, read_units)
            df_of = self._counts.df(scope, wanted, read_df)
        return {t: idf(n_units, df) for t, df in sorted(df_of.items()) if df > 0}

    def _unit_hits(
        self, grams: list[str], scale: Mapping[int, float], scope: SearchScope
    ) -> list[ScoredRecord]:
        """The BM25 of the units: our IDF of each term (``df.sqlite``) times its weight as the
        query's values, the engine's dot product with the units' term frequencies."""
        idf = self.idf_weights(scope.tenant, (term_id(b) for b in grams), scope.fields)
        if not idf:
            return []
        idx = sorted(idf)
        values = [idf[i] * scale.get(i, 1.0) for i in idx]
        req = qe.QueryRequest(
            limit=scope.limit,
            query=qe.Query.Nearest(qe.SparseVector(idx, values), using=SPARSE),
            filter=search_filter(scope.tenant, scope.filter, sole=self._sole(scope.tenant)),
            with_payload=False,  # what a unit names comes from the candidate index
        )
        with self._lock:
            return self._candidates.resolve(self._shard, self._shard.query(req), scope.tenant)

    def forget_cached(self) -> None:
        """The candidate index read from the engine shard (the count tables stay)."""
        with self._lock:
            self._candidates.clear()

    def close(self) -> None:
        with self._lock:
            super().close()
            self._db.close()
