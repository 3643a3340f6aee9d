"""The web UI of ``tansaku serve``: server-rendered pages (Jinja2, autoescaped) and small
hand-written ES modules under ``static/`` that call the JSON API — no framework, no build step,
nothing fetched from elsewhere, so it installs with pip and works offline.

``register(app)`` (called by :func:`tansaku.server.create_app`) adds the pages, the static
files, the cookie session (the API's session resolver) and the CSRF guard.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from tansaku.server.ui.csrf import CsrfGuard
from tansaku.server.ui.sessions import Sessions
from tansaku.server.ui.state import UiState, session_team

HERE = Path(__file__).parent


def register(app: FastAPI) -> None:
    """Add the UI to ``app`` (whose ``state.tansaku`` is the server's ``AppState``)."""
    from tansaku.server.ui import routes

    state = app.state.tansaku
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    ui = UiState(sessions=Sessions(state.keys), templates=templates)
    app.state.tansaku_ui = ui
    state.session = lambda request: session_team(ui, request)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.include_router(routes.router)
    app.add_middleware(CsrfGuard, sessions=ui.sessions)


__all__ = ["register"]
