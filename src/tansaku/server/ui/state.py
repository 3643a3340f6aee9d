"""What the UI's routes share: the sessions and the templates, and the session of a request."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from fastapi.templating import Jinja2Templates

from tansaku.server.state import AppState
from tansaku.server.ui.sessions import COOKIE, Session, Sessions


@dataclass(frozen=True)
class UiState:
    sessions: Sessions
    templates: Jinja2Templates


def ui_of(request: Request) -> UiState:
    ui: UiState = request.app.state.tansaku_ui
    return ui


def keyless(state: AppState) -> bool:
    """The keyless demo (``AppState.keyless``): pages open a session for the default team."""
    return state.keyless()


def session_team(ui: UiState, request: Request) -> str | None:
    """The team of the request's session cookie (the API's session resolver)."""
    session = ui.sessions.get(request.cookies.get(COOKIE))
    return session.team if session is not None else None


def page_session(request: Request, state: AppState) -> tuple[Session | None, str | None]:
    """The session of a page request, ``(session, new cookie token)``: the cookie's, else a new
    one on the keyless demo, else ``(None, None)`` (the page asks to log in)."""
    ui = ui_of(request)
    session = ui.sessions.get(request.cookies.get(COOKIE))
    if session is not None:
        return session, None
    if keyless(state):
        token, session = ui.sessions.open(state.settings.default_team, None)
        return session, token
    return None, None
