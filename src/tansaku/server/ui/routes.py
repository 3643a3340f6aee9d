"""The pages of the web UI and its two forms (login, logout).

Each page is rendered for the caller's session (the keyless loopback demo opens one on the
first visit; otherwise ``/login`` asks for an API key) and carries the session's CSRF token in
a ``<meta>`` tag, which the page's script sends with every state-changing ``fetch``. The data
comes from the JSON API (the page is a client of it), except the overview and the record page,
rendered here from the same library calls.
"""

from __future__ import annotations

import csv
import io
import re
import secrets
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from tansaku.appdb.rows import Page
from tansaku.server.routes.unanswered import UnansweredFilter
from tansaku.server.state import StateDep, TeamDep
from tansaku.server.ui.overview import document_records, overview, record_view
from tansaku.server.ui.sessions import (
    COOKIE,
    IDLE_S,
    LOGIN_COOKIE,
    Session,
    key_prefix,
    same_token,
)
from tansaku.server.ui.state import keyless, page_session, ui_of
from tansaku.text.dates import TOKYO

router = APIRouter(include_in_schema=False)

PAGES: tuple[tuple[str, str, str], ...] = (
    ("/", "overview", "説明"),
    ("/chat", "chat", "エージェント対話"),
    ("/unanswered", "unanswered", "未回答ログ"),
    ("/ingest", "ingest", "データ取り込み"),
    ("/qa", "qa", "Q/A生成"),
    ("/collections", "collections", "コレクション管理"),
    ("/search", "search", "検索テスト"),
    ("/dashboard", "dashboard", "ダッシュボード"),
    ("/sql", "sql", "SQL・表"),
)
TITLES = {name: title for _, name, title in PAGES}


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _set_session_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        COOKIE,
        token,
        max_age=IDLE_S,
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request),
    )


_LOCAL_PATH = re.compile(r"/(?![/\\])[^\s\x00-\x1f\x7f\\]*")


def local_target(target: str | None) -> str:
    """Where to go after login: a path of this server only — not ``//host``, a backslash, a
    scheme, or a path with whitespace or control characters (browsers drop tabs and newlines,
    turning ``/<TAB>/host`` into ``//host``)."""
    if not target or not _LOCAL_PATH.fullmatch(target):
        return "/"
    return target


def _render(
    request: Request,
    template: str,
    session: Session | None,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    ui = ui_of(request)
    state = request.app.state.tansaku
    response = ui.templates.TemplateResponse(
        request,
        template,
        {
            "pages": PAGES,
            "team": session.team if session else None,
            "csrf": session.csrf if session else "",
            "keyless": keyless(state),
            **context,
        },
        status_code=status,
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _to_login(request: Request) -> Response:
    target = quote(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return RedirectResponse(f"/login?next={target}", status_code=303)


def _respond(
    request: Request,
    template: str,
    session: Session,
    token: str | None,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    response = _render(request, template, session, status=status, **context)
    if token is not None:
        _set_session_cookie(response, request, token)
    return response


def _page(request: Request, state: Any, name: str) -> Response:
    session, token = page_session(request, state)
    if session is None:
        return _to_login(request)
    return _respond(request, f"{name}.html", session, token, page=name, title=TITLES[name])


@router.get("/")
def overview_page(request: Request, state: StateDep) -> Response:
    session, token = page_session(request, state)
    if session is None:
        return _to_login(request)
    info = overview(state, session.team)
    return _respond(
        request, "overview.html", session, token, page="overview", title="説明", info=info
    )


def _simple(name: str) -> Any:
    def view(request: Request, state: StateDep) -> Response:
        return _page(request, state, name)

    view.__name__ = f"{name}_page"
    return view


for _path, _name, _ in PAGES[1:]:
    router.add_api_route(_path, _simple(_name), methods=["GET"])


@router.get("/records/{collection}/{doc_id:path}")
def record_page(collection: str, doc_id: str, request: Request, state: StateDep) -> Response:
    session, token = page_session(request, state)
    if session is None:
        return _to_login(request)
    found = document_records(state, session.team, collection, doc_id)
    title = next((str(r.metadata["title"]) for r in found if r.metadata.get("title")), "")
    return _respond(
        request,
        "record.html",
        session,
        token,
        status=200 if found else 404,
        page="record",
        title="出典の記録",
        collection=collection,
        doc_id=doc_id,
        records=[record_view(r) for r in found],
        doc_title=title,
    )


@router.get("/login")
def login_page(request: Request, state: StateDep, next: str | None = None) -> Response:
    if keyless(state):
        return RedirectResponse(local_target(next), status_code=303)
    token = secrets.token_urlsafe(24)
    response = _render(
        request,
        "login.html",
        None,
        page="login",
        title="ログイン",
        login_csrf=token,
        next=local_target(next),
        error=None,
    )
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=3600,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    return response


@router.post("/login")
def login(
    request: Request,
    state: StateDep,
    key: Annotated[str, Form(max_length=200)] = "",
    csrf_token: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2_000)] = "/",
) -> Response:
    target = local_target(next)
    if not same_token(csrf_token, request.cookies.get(LOGIN_COOKIE) or "\0"):
        return RedirectResponse(f"/login?next={quote(target)}", status_code=303)
    team = state.keys.verify(key.strip()) if state.keys is not None and key.strip() else None
    if team is None:
        response = _render(
            request,
            "login.html",
            None,
            status=401,
            page="login",
            title="ログイン",
            login_csrf=csrf_token,
            next=target,
            error="API キーが正しくありません",
        )
        return response
    cookie, _ = ui_of(request).sessions.open(team, key_prefix(key.strip()))
    response = RedirectResponse(target, status_code=303)
    _set_session_cookie(response, request, cookie)
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


@router.post("/logout")
def logout(request: Request, csrf_token: Annotated[str, Form(max_length=200)] = "") -> Response:
    sessions = ui_of(request).sessions
    token = request.cookies.get(COOKIE)
    session = sessions.get(token)
    if session is not None and same_token(csrf_token, session.csrf):
        sessions.close(token)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def _csv_cell(value: Any) -> str:
    """A cell that a spreadsheet shows as text (no formula from ``=``, ``+``, ``-``, ``@``)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@router.get("/unanswered.csv")
def unanswered_csv(
    state: StateDep, team: TeamDep, query: Annotated[UnansweredFilter, Query()]
) -> Response:
    """The unanswered questions of the filter as CSV (UTF-8 with BOM, for Excel); times in
    Asia/Tokyo with their offset (``2025-12-11T09:00:00+09:00``), as the page shows them."""
    # the page's form sends an empty collection field
    where = replace(query.where(), collection=query.collection or None)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["id", "日時", "コレクション", "質問", "理由", "ツール", "解決済み", "対応"])
    repo = state.appdb.unanswered
    offset = 0
    while True:
        items = repo.find(team, where, Page(200, offset))
        for i in items:
            d = i.to_dict()
            writer.writerow(
                [
                    _csv_cell(v)
                    for v in (
                        d["id"],
                        i.asked_at.astimezone(TOKYO).isoformat(timespec="seconds"),
                        d["collection"],
                        d["question"],
                        d["reason"],
                        " ".join(d.get("tools") or []),
                        "はい" if d["resolved"] else "いいえ",
                        d.get("resolution") or "",
                    )
                ]
            )
        if len(items) < 200 or offset > 100_000:
            break
        offset += 200
    return Response(
        "\ufeff" + buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={
            "Content-Disposition": 'attachment; filename="unanswered.csv"',
            "Cache-Control": "no-store",
        },
    )
