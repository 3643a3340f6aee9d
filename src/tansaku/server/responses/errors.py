"""The error body every error status shares (``tansaku.server.errors``) and the helper that
declares a route's success body and error statuses (``responses=`` of a route)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Responses = dict[int | str, dict[str, Any]]


class DateLimits(BaseModel):
    min: str
    max: str


class ErrorDetail(BaseModel):
    """エラーの内容。code は安定した英語の識別子、message は日本語の説明。"""

    model_config = ConfigDict(extra="allow")

    code: str = Field(examples=["collection_not_found"])
    message: str
    parameter: str | None = Field(
        default=None, description="範囲外の日付を指定したパラメータ(date_out_of_range のとき)"
    )
    range: DateLimits | None = Field(
        default=None, description="受け付ける日付の範囲(date_out_of_range のとき)"
    )


class ErrorBody(BaseModel):
    """すべてのエラーに共通の形: `{"error": {"code", "message"}}`。"""

    error: ErrorDetail


ERRORS: dict[int, str] = {
    400: "リクエストが正しくない(invalid_request, invalid_config, sql_rejected, sql_failed, "
    "invalid_filename, invalid_url, invalid_content_length, invalid_http_request, bad_request …)",
    401: "API キーがない・正しくない(unauthorized, invalid_key, invalid_authorization)",
    403: "キーなしのサーバーへの別サイトからの書き込み(cross_site_request)、"
    "Web 画面の CSRF トークンがない(csrf_failed)、管理用でないキー(admin_only)、"
    "URL の取り込みで許可されていないホスト・内部のアドレス(fetch_host_refused)",
    404: "見つからない・チームから見えない(collection_not_found, not_found, no_tables …)",
    409: "状態が合わない(collection_exists, name_unavailable, collection_busy, "
    "embedder_mismatch, model_not_configured, conflict)",
    413: "本文・ファイルが大きすぎる(payload_too_large, file_too_large, too_many_files)",
    415: "URL から取り込むファイルの形式に対応していない(unsupported_type)",
    421: "キーなしのサーバーに許可されていないホスト名で接続した(host_not_allowed)",
    422: "本文・パラメータの形が正しくない(validation_error)、日付が範囲外(date_out_of_range)、"
    "ファイルや割り当てを読めない(invalid_file, invalid_mapping, invalid_question)、"
    "URL から取得できない(fetch_unreachable)",
    429: "送信が多すぎる(rate_limited、Retry-After ヘッダー付き)",
    501: "必要な追加パッケージがない(missing_extra)",
    503: "ワークスペース・アプリDBが使えない(workspace_not_found, storage_error, appdb_error)",
}

COMMON: tuple[int, ...] = (401, 421, 503)
"""What any route with a key can answer: no or wrong key, a host name a keyless server refuses,
the workspace or appdb unavailable."""

WRITE: tuple[int, ...] = (400, 403, 413, 422)
"""What a write with a body can answer besides: an unreadable body, a cross-site write to a
keyless server, a body over the limit, a body that does not match its schema."""


def _error(status: int) -> dict[str, Any]:
    return {"model": ErrorBody, "description": ERRORS[status]}


def documented(
    body: type[BaseModel], *errors: int, status: int = 200, description: str = "成功"
) -> Responses:
    """``responses=`` of a route: ``body`` under ``status`` and the error body under each of
    ``errors`` and :data:`COMMON`."""
    out: Responses = {status: {"model": body, "description": description}}
    for code in sorted({*COMMON, *errors}):
        out[code] = _error(code)
    return out


ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}


def plain_text(*errors: int, description: str) -> Responses:
    """``responses=`` of a route whose success body is text (``response_class`` a text class):
    its ``errors`` (only those) are JSON, declared by reference since the route's media type is
    not JSON."""
    out: Responses = {200: {"description": description}}
    for code in sorted(errors):
        out[code] = {
            "description": ERRORS[code],
            "content": {"application/json": {"schema": ERROR_REF}},
        }
    return out
