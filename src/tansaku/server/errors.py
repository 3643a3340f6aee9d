"""Errors as the API answers them: ``{"error": {"code", "message"}}`` with a Japanese message.

Library errors map to 4xx by type (an invalid request 400, an unknown collection 404, a busy
collection 409 …); FastAPI's validation errors (422) and Starlette's 404/405/413 get the same
shape; anything unexpected is logged and answered 500 with a message that leaks nothing.
"""

from __future__ import annotations

import json
import logging
from dataclasses import KW_ONLY, dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Send

from tansaku.appdb.errors import AppDBError, InvalidTransition, NotFound, RateLimited
from tansaku.errors import (
    CollectionBusy,
    CollectionNotFound,
    ConfigError,
    EmbedderMismatch,
    InvalidRequest,
    LoadError,
    MissingExtra,
    StorageError,
    TansakuError,
    WorkspaceNotFound,
    public_message,
)
from tansaku.server.search_processes import SearchProcessesFailed

log = logging.getLogger("tansaku.server")
DATE_OUT_OF_RANGE = "date_out_of_range"


@dataclass(eq=False, repr=False)
class ApiError(Exception):
    """An error a route raises on purpose: HTTP status, a stable code, a Japanese message."""

    status: int
    code: str
    message: str
    _: KW_ONLY
    headers: dict[str, str] | None = None
    extra: dict[str, Any] | None = None
    """More fields of the error object (e.g. the ``parameter`` and ``range`` of a date)."""

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def response(self, message: str | None = None) -> JSONResponse:
        """The error as the API answers it; ``message``: what the client is told instead (the
        message without the server's paths)."""
        body = error_body(self.code, self.message if message is None else message, self.extra)
        return JSONResponse(body, status_code=self.status, headers=self.headers)


class BodyTooLarge(StarletteHTTPException):
    """A request body past its limit (raised while it is being received)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"リクエストが大きすぎます(上限 {limit:,} バイト)")


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what}が見つかりません")


def error_body(code: str, message: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **(extra or {})}}


def error_bytes(code: str, message: str) -> bytes:
    """:func:`error_body` as UTF-8 JSON, for an answer written below the app (ASGI, socket)."""
    return json.dumps(error_body(code, message), ensure_ascii=False).encode("utf-8")


async def send_error(send: Send, status: int, code: str, message: str) -> None:
    """Answer the error at the ASGI level, before the app (a middleware's refusal), and close
    the connection."""
    body = error_bytes(code, message)
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# (type, status, code), most specific first
_LIBRARY: tuple[tuple[type[TansakuError], int, str], ...] = (
    (CollectionNotFound, 404, "collection_not_found"),
    (NotFound, 404, "not_found"),
    (RateLimited, 429, "rate_limited"),
    (InvalidTransition, 409, "conflict"),
    (AppDBError, 503, "appdb_error"),
    (InvalidRequest, 400, "invalid_request"),
    (CollectionBusy, 409, "collection_busy"),
    (EmbedderMismatch, 409, "embedder_mismatch"),
    (ConfigError, 400, "invalid_config"),
    (LoadError, 400, "load_failed"),
    (MissingExtra, 501, "missing_extra"),
    (WorkspaceNotFound, 503, "workspace_not_found"),
    (StorageError, 503, "storage_error"),
    (SearchProcessesFailed, 503, "search_unavailable"),
)


def library_status(exc: TansakuError) -> tuple[int, str]:
    for kind, status, code in _LIBRARY:
        if isinstance(exc, kind):
            return status, code
    return 400, "rejected"


def collection_missing(name: str) -> ApiError:
    """The 404 of a collection the caller's team cannot see (whether or not it exists)."""
    return ApiError(
        404,
        "collection_not_found",
        f"コレクション「{name}」が見つかりません。GET /api/collections で一覧を確かめてください",
    )


def name_unavailable(name: str) -> ApiError:
    """The 409 of a collection name the caller's team cannot take because of something it may
    not see (another team's collection): it says the name cannot be used, never why."""
    return ApiError(
        409,
        "name_unavailable",
        f"コレクション名「{name}」は使えません。別の名前にしてください",
    )


_HTTP_MESSAGES = {
    400: ("bad_request", "リクエストが正しくありません"),
    401: ("unauthorized", "認証が必要です"),
    403: ("forbidden", "この操作は許可されていません"),
    404: ("not_found", "指定された URL はありません"),
    405: ("method_not_allowed", "このメソッドは使えません"),
    413: ("payload_too_large", "リクエストが大きすぎます"),
}

_VALIDATION = {
    "missing": "必須です",
    "json_invalid": "JSON として読めません",
    "json_type": "JSON オブジェクトで送ってください",
    "model_attributes_type": "JSON オブジェクトで送ってください",
    "dict_type": "オブジェクトで指定してください",
    "extra_forbidden": "このフィールドはありません",
    "string_type": "文字列で指定してください",
    "int_type": "整数で指定してください",
    "int_parsing": "整数で指定してください",
    "int_from_float": "整数で指定してください",
    "float_type": "数値で指定してください",
    "float_parsing": "数値で指定してください",
    "finite_number": "有限の数で指定してください",
    "bool_type": "true か false で指定してください",
    "bool_parsing": "true か false で指定してください",
    "list_type": "配列で指定してください",
    "tuple_type": "配列で指定してください",
    "date_type": "日付 YYYY-MM-DD で指定してください",
    "date_parsing": "日付 YYYY-MM-DD で指定してください",
    "date_from_datetime_parsing": "日付 YYYY-MM-DD で指定してください",
    "datetime_type": "日時 YYYY-MM-DDTHH:MM で指定してください",
    "datetime_parsing": "日時 YYYY-MM-DDTHH:MM で指定してください",
    "datetime_from_date_parsing": "日時 YYYY-MM-DDTHH:MM で指定してください",
    "string_too_long": "長すぎます",
    "string_too_short": "短すぎます",
    "too_long": "要素が多すぎます",
    "too_short": "要素が足りません",
    "greater_than": "小さすぎます",
    "greater_than_equal": "小さすぎます",
    "less_than": "大きすぎます",
    "less_than_equal": "大きすぎます",
    "literal_error": "使えない値です",
    "enum": "使えない値です",
    "value_error": "値が正しくありません",
    "union_tag_invalid": "使えない値です",
}


def _where(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "本文"


def validation_message(errors: list[dict[str, Any]]) -> str:
    """FastAPI's validation errors as one Japanese sentence (at most five problems)."""
    items = []
    for e in errors[:5]:
        what = _VALIDATION.get(str(e.get("type")), "値が正しくありません")
        ctx = e.get("ctx") or {}
        limit = next((ctx[k] for k in ("max_length", "le", "lt", "ge", "gt") if k in ctx), None)
        if limit is not None:
            what = f"{what}(上限・下限: {limit})"
        if e.get("type") == "literal_error" and "expected" in ctx:
            what = f"{what}(使える値: {ctx['expected']})"
        items.append(f"{_where(tuple(e.get('loc', ())))}: {what}")
    more = f" ほか{len(errors) - 5}件" if len(errors) > 5 else ""
    return "リクエストの内容が正しくありません — " + " / ".join(items) + more


def client_message(request: Request, message: str) -> str:
    """``message`` without the server's absolute paths (workspace paths made relative)."""
    state = getattr(request.app.state, "tansaku", None)
    home = state.client.workspace.home if state is not None else None
    return public_message(message, home=home)


def install(app: FastAPI) -> None:
    """Register the handlers that give every error the same JSON shape."""

    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response(client_message(request, exc.message))

    @app.exception_handler(TansakuError)
    async def _library(request: Request, exc: TansakuError) -> JSONResponse:
        status, code = library_status(exc)
        headers = (
            {"Retry-After": str(max(1, exc.retry_after))} if isinstance(exc, RateLimited) else None
        )
        return ApiError(status, code, client_message(request, str(exc)), headers=headers).response()

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = list(exc.errors())
        dated = next((e for e in problems if e.get("type") == DATE_OUT_OF_RANGE), None)
        if dated is not None:
            from tansaku.server.dates import out_of_range

            value = (dated.get("ctx") or {}).get("value")
            err = out_of_range(_where(tuple(dated.get("loc", ()))), value)
            return err.response()
        return ApiError(422, "validation_error", validation_message(problems)).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code, message = _HTTP_MESSAGES.get(exc.status_code, ("http_error", "リクエストエラー"))
        if isinstance(exc, BodyTooLarge):
            message = str(exc.detail)
        elif exc.status_code == 400 and "parsing the body" in str(exc.detail):
            message = "リクエスト本文を読めません。UTF-8 の JSON(またはフォーム)で送ってください"
        headers = getattr(exc, "headers", None)
        return ApiError(exc.status_code, code, message, headers=headers).response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return ApiError(
            500, "internal_error", "サーバー内部でエラーが発生しました。管理者に連絡してください"
        ).response()
