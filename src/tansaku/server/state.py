"""What every route shares: one client, the settings, metrics, jobs, keys and appdb.

One ``tansaku.connect()`` client serves every request (engine handles are shared per process;
searches read committed generations, so they run while an ingest job writes). Routes reach it
through the ``state`` and ``team`` dependencies.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool

from tansaku.client import Tansaku
from tansaku.server.auth import KeyStore, SessionResolver, authenticate, presented_key
from tansaku.server.compute import ComputePool
from tansaku.server.errors import ApiError
from tansaku.server.event_writer import EventWriter
from tansaku.server.jobs import JobRunner
from tansaku.server.metrics import Metrics
from tansaku.server.owners import Owners
from tansaku.server.search_processes import SearchProcesses
from tansaku.server.settings import ServerSettings


@dataclass
class AppState:
    client: Tansaku
    settings: ServerSettings
    metrics: Metrics
    jobs: JobRunner
    owners: Owners
    keys: KeyStore | None = None
    appdb: Any = None
    session: SessionResolver | None = None
    owns_client: bool = False
    model: str | None = None
    """The embedder's name once loaded (warm-up at start-up)."""
    model_error: str | None = None
    compute: ComputePool | None = None
    """Where searches run (``tansaku.server.compute``); None: in the request's thread."""
    searchers: SearchProcesses | None = None
    """The processes the client's searches run in; None: in this process."""
    events: EventWriter | None = None
    """Writes the searches' appdb rows in batches; :meth:`flush_events` before reading them."""
    _tables: Any = field(default=None, repr=False)
    _tables_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def tables(self) -> Any:
        """The workspace's registered tables (a ``TableDatabase``), opened at first use, its
        SQL audit log in the workspace; a 404 :class:`ApiError` when none are registered,
        ``MissingExtra`` without duckdb. Routes hand ``.for_team(team)`` to the SQL tools."""
        with self._tables_lock:
            if self._tables is None:
                from tansaku.tables import open_tables

                if not self.client.workspace.tables_file.is_file():
                    raise ApiError(
                        404,
                        "no_tables",
                        "テーブルが登録されていません。`tansaku demo` でサンプルを登録するか、"
                        "tables.toml を作成してください",
                    )
                workspace = self.client.workspace
                self._tables = open_tables(
                    workspace.tables_file, audit_log=workspace.sql_audit_file
                )
            return self._tables

    def tables_if_any(self) -> Any:
        """The tables, or None (none registered, or the tables extra missing)."""
        if not self.client.workspace.tables_file.is_file():
            return None
        try:
            return self.tables()
        except ImportError:
            return None

    def keyless(self) -> bool:
        """Whether a request without a key is served (as the default team): bound to loopback
        while the workspace's keyless setting is on (``KeyStore.keyless``; revoking every key
        does not turn it on). Asked per request."""
        return self.settings.loopback and (self.keys is None or self.keys.keyless())

    def flush_events(self) -> None:
        """Every search answered so far has its row in appdb (a read of rows follows)."""
        if self.events is not None:
            self.events.flush()

    def close_tables(self) -> None:
        """Close the tables if they are open; the next use opens them again (with a table
        registered meanwhile)."""
        with self._tables_lock:
            if self._tables is not None:
                self._tables.close()
                self._tables = None

    def close(self) -> None:
        if self.compute is not None:
            self.compute.shutdown()
        if self.searchers is not None:
            self.client.run_searches_with(None)
            self.searchers.close()
        self.jobs.shutdown()
        self.close_tables()
        if self.owns_client:
            self.client.close()


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.tansaku
    return state


def get_team(request: Request) -> str:
    state = get_state(request)
    return authenticate(
        request,
        keys=state.keys,
        keyless=state.keyless(),
        default_team=state.settings.default_team,
        session=state.session,
    )


def known_team(request: Request, state: AppState) -> str | None:
    """The team :func:`get_team` would answer, when that needs no read of appdb: a key found
    by a check less than the key store's ``ttl`` ago, or a request with no key and no cookie
    on a keyless server whose setting was read as recently. None: ask :func:`get_team`."""
    key = presented_key(request)  # a malformed header is its 401 here already
    keys = state.keys
    if key is not None:
        known = getattr(keys, "known", None)
        return known(key) if known is not None and key else None
    if state.session is not None and "cookie" in request.headers:
        return None  # a browser's session: resolved (and checked for revocation) by get_team
    if not state.settings.loopback:
        return None
    if keys is None:
        return state.settings.default_team
    keyless_known = getattr(keys, "keyless_known", None)
    on = keyless_known() if keyless_known is not None else None
    return state.settings.default_team if on else None


async def _team(request: Request) -> str:
    """:func:`get_team` as a dependency: on the event loop when the answer is known
    (:func:`known_team`: most requests of a busy server), else in a thread, as it may read
    appdb (a FastAPI ``def`` dependency always went through the thread pool)."""
    team = known_team(request, get_state(request))
    if team is not None:
        return team
    return await run_in_threadpool(get_team, request)


async def _state(request: Request) -> AppState:
    """``get_state`` as a dependency run on the event loop (a plain attribute: no thread)."""
    return get_state(request)


StateDep = Annotated[AppState, Depends(_state)]
TeamDep = Annotated[str, Depends(_team)]
