"""``create_app``: the FastAPI application over one workspace.

    from tansaku.server import create_app, ServerSettings
    app = create_app("./.tansaku", settings=ServerSettings(host="127.0.0.1"))

One client (``tansaku.connect``) serves every request; appdb (search events, feedback, keys,
jobs, unanswered) is opened beside it. The web UI, when its package ``tansaku.server.ui`` is
present, adds its pages and static files through ``ui.register(app)`` on the same app.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse

import tansaku
from tansaku import heap
from tansaku.client import Tansaku
from tansaku.server import errors
from tansaku.server.apidocs import render_docs
from tansaku.server.auth import KeyStore, ServerNotSecured
from tansaku.server.compute import ComputePool, pool_size
from tansaku.server.event_writer import EventWriter, flush_interval
from tansaku.server.events import RecordingEventLog
from tansaku.server.hostguard import KeylessGuard
from tansaku.server.job_limits import job_limits
from tansaku.server.jobs import JobRunner
from tansaku.server.metrics import Metrics
from tansaku.server.middleware import BodyLimit, RequestMetrics, SecurityHeaders
from tansaku.server.owners import Owners
from tansaku.server.respond import JsonResponse
from tansaku.server.routes import (
    ask,
    collections,
    conversations,
    feedback,
    fetch,
    health,
    ingest,
    qa,
    search,
    table_upload,
    tables,
    unanswered,
)
from tansaku.server.search_processes import SearchProcesses, process_count
from tansaku.server.settings import ServerSettings
from tansaku.server.state import AppState

log = logging.getLogger("tansaku.server")
UPLOAD_PATHS = ("/api/ingest",)
ROUTERS = (
    health,
    search,
    collections,
    tables,
    ask,
    conversations,
    ingest,
    table_upload,
    fetch,
    qa,
    feedback,
    unanswered,
)


def _appdb_keys(appdb: Any) -> KeyStore | None:
    if appdb is None:
        return None
    from tansaku.server.keys import AppdbKeys

    return AppdbKeys(appdb)


def _open_appdb(client: Tansaku) -> Any:
    from tansaku.appdb.db import open_appdb

    return open_appdb(client.workspace.home)


def _connect(source: str | Path | None) -> Tansaku:
    """The workspace with its configured embedder (``[embedder]`` of its ``tansaku.toml`` or
    ``TANSAKU_EMBED*``, as ``tansaku ingest`` uses; the bundled model when none is set), so
    that queries are embedded by the model the collections were built with."""
    from tansaku.backends import workspace_home
    from tansaku.embed import load_embedder

    return tansaku.connect(source, embedder=load_embedder(workspace_home(source)))


def _start_searchers(state: AppState, searchers: SearchProcesses) -> bool:
    """Start the search processes (each loads the model); if none can start, searches run in
    this process again (False)."""
    if searchers.start():
        state.model = searchers.model
        return True
    log.error("no search process started (%s): searching in the server's process", searchers.error)
    state.client.run_searches_with(None)
    state.searchers = None
    searchers.close()
    return False


def _warm_up(state: AppState, freeze: bool) -> None:
    """Load the embedder before the first search needs it (``/healthz`` reports it): the
    search processes' when there are any, else this process's own; then (``freeze``) freeze
    what the loaded server holds (:func:`tansaku.heap.freeze_loaded`)."""
    if state.searchers is None or not _start_searchers(state, state.searchers):
        _load_embedder(state)
    if freeze:
        heap.freeze_loaded()


def _load_embedder(state: AppState) -> None:
    try:
        embedder = state.client.embedder
        settle = getattr(embedder.inner, "settle", None)  # the default: its faster engine now
        if settle is not None:
            # searches already run side by side in the pool: one core each embeds a question
            # in about the time two take (q8: 6.0 against 5.5 ms) for three quarters of the CPU
            side_by_side = state.compute is not None and state.compute.workers > 1
            settle(threads=1 if side_by_side else None)
        embedder.embed_queries(["準備"])
        state.model = embedder.name
    except Exception as exc:
        log.exception("embedder warm-up failed")
        state.model_error = f"埋め込みモデルを読み込めません({type(exc).__name__})"


def _recover_jobs(db: Any) -> None:
    """Jobs a killed server left ``running`` become ``failed: interrupted`` (appdb's rule:
    only those whose worker process is gone)."""
    try:
        done = db.jobs.recover()
    except Exception:  # housekeeping must not keep the server from starting
        log.exception("could not recover the jobs of an earlier server")
        return
    if done.interrupted or done.requeued:
        log.info(
            "jobs of an earlier server: %d interrupted, %d queued again",
            len(done.interrupted),
            len(done.requeued),
        )


def _sweep_uploads(home: Path) -> None:
    """Upload folders of jobs that no longer run (a server killed mid-job) are removed."""
    from tansaku.server.uploads import sweep

    try:
        sweep(home)
    except Exception:  # housekeeping must not keep the server from starting
        log.exception("could not remove the upload folders of an earlier server")


def create_app(
    source: Tansaku | str | Path | None = None,
    *,
    settings: ServerSettings | None = None,
    appdb: Any = None,
    keys: KeyStore | None = None,
    warm_up: bool = True,
    ui: bool = True,
    freeze_heap: bool = False,
) -> FastAPI:
    """The app over ``source`` (a client, or a workspace folder; None: ``$TANSAKU_HOME``,
    opened with the workspace's configured embedder).

    ``appdb``: an opened ``tansaku.appdb.AppDB`` (default: the workspace's); ``keys``: the API
    keys (default: appdb's); ``ui``: add the web UI when ``tansaku.server.ui`` is installed;
    ``freeze_heap``: once warmed up, keep what the loaded server holds out of the cyclic
    collector's walks (:func:`tansaku.heap.freeze_loaded`) — for a process that serves this
    app and nothing else, as ``tansaku serve`` does.
    Raises :class:`ServerNotSecured` when ``settings.host`` is not
    loopback and no API key exists."""
    settings = settings or ServerSettings()
    owns = not isinstance(source, Tansaku)
    client = source if isinstance(source, Tansaku) else _connect(source)
    try:
        db = appdb if appdb is not None else _open_appdb(client)
        keystore = keys if keys is not None else _appdb_keys(db)
        if not settings.loopback and (keystore is None or not keystore.any()):
            raise ServerNotSecured(settings.host)
    except BaseException:
        if owns:
            client.close()
        raise
    state = AppState(
        client=client,
        settings=settings,
        metrics=Metrics(),
        jobs=JobRunner(
            settings.ingest_workers,
            store=db.jobs if db is not None else None,
            limits=job_limits(settings.job_memory_mb, settings.job_timeout_s),
        ),
        owners=Owners(client.workspace.home / "server" / "collection_owners.json"),
        keys=keystore,
        appdb=db,
        owns_client=owns,
    )
    processes = process_count(settings.search_processes) if owns else 0
    if processes > 0:
        state.searchers = SearchProcesses(client.workspace.home, processes)
        client.run_searches_with(state.searchers.run)
    if (workers := pool_size(settings.search_workers, processes=processes)) > 0:
        state.compute = ComputePool(workers)
    interval = flush_interval(settings.event_flush_s)
    if db is not None and interval > 0:
        state.events = EventWriter(db.events, interval=interval)

    previous_events = client.services.events
    recording = RecordingEventLog(
        client.events.path,
        appdb=db,
        metrics=state.metrics,
        writer=state.events,
    )
    client.with_services(events=recording)

    def restore() -> None:
        if client.services.events is recording:
            client.with_services(events=previous_events)
        recording.close()
        if state.events is not None:
            state.events.close()  # every row still waiting is written before appdb closes

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if db is not None:
            _recover_jobs(db)
        _sweep_uploads(client.workspace.home)
        if warm_up or state.searchers is not None:
            freeze = freeze_heap and warm_up
            threading.Thread(target=_warm_up, args=(state, freeze), daemon=True).start()
        try:
            yield
        finally:
            restore()
            state.close()
            if appdb is None and db is not None:
                db.close()

    app = FastAPI(
        title="tansaku",
        version=tansaku.__version__,
        description="日本語の業務ナレッジを検索し、出典つきで答える API",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=JsonResponse,
    )
    app.state.tansaku = state
    errors.install(app)
    for module in ROUTERS:
        app.include_router(module.router)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(render_docs(app.openapi()))

    if ui:
        _install_ui(app)
    _install_middleware(app, state)
    return app


def _install_ui(app: FastAPI) -> None:
    try:
        ui = importlib.import_module("tansaku.server.ui")
    except ModuleNotFoundError as exc:
        if exc.name != "tansaku.server.ui":
            raise
        return
    ui.register(app)


def _install_middleware(app: FastAPI, state: AppState) -> None:
    """Outermost last: metrics see every response, headers go on every response, a keyless
    server's host and origin guard answers before CORS or anything else, the body limit
    applies before anything reads a body."""
    settings = state.settings

    def limit_for(path: str) -> int:
        if path.startswith(UPLOAD_PATHS):
            return settings.max_upload_bytes
        return settings.max_json_bytes

    app.add_middleware(BodyLimit, limit_for=limit_for)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    app.add_middleware(
        KeylessGuard,
        keyless=state.keyless,
        allowed_hosts=settings.allowed_hosts,
        cors_origins=settings.cors_origins,
    )
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestMetrics, metrics=state.metrics)
