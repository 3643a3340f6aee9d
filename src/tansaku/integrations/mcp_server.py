"""An MCP server (official ``mcp`` SDK, 2.x) over a :class:`~tansaku.tools.Toolset`.

Every tool the toolset holds is listed with its name, Japanese description and JSON schema; a
call goes through :meth:`Toolset.call`, so the result — and a failure's Japanese
``{"error": …}``, flagged ``isError`` — is the text tansaku's own agent sees. The scope (team,
collections, "now") is the toolset's, fixed when the server starts; a tool call's arguments
cannot widen it (an argument the schema does not name is refused by the toolset).

>>> with tansaku.connect() as ts:
...     anyio.run(serve_stdio, toolset(ts, team="shinjuku"))

Streamable HTTP binds to a loopback address unless the caller passes ``allow_remote=True``
together with a bearer token, which is then checked on every request (a token on a loopback
bind is checked too): a server that reads a team's data is never open by accident.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.errors import InvalidRequest, MissingExtra, public_message

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.types import CallToolResult, Tool

    from tansaku.tools.registry import Toolset

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
TOKEN_ENV = "TANSAKU_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
MIN_SDK = (2, 3)  # the version this adapter is tested with
MAX_CONCURRENT_CALLS = 4  # tool calls run in worker threads; searches are CPU-bound

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def require_sdk() -> None:
    """The ``mcp`` SDK at ``MIN_SDK`` or later (the 2.x server API differs from 1.x), or
    MissingExtra naming the pip command."""
    from importlib import metadata  # 30 ms of imports: only for the MCP commands

    try:
        version = metadata.version("mcp")
        import mcp.server  # noqa: F401
    except (ImportError, metadata.PackageNotFoundError):
        raise MissingExtra("mcp", "mcp", "MCP サーバー") from None
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < MIN_SDK:
        need = ".".join(map(str, MIN_SDK))
        raise MissingExtra(f"mcp {need} 以上(インストール済み: {version})", "mcp", "MCP サーバー")


def tool_definitions(toolset: Toolset) -> list[Tool]:
    """The MCP ``Tool`` entries of every tool in ``toolset``: name, description, schema."""
    require_sdk()
    from mcp.types import Tool

    return [
        Tool(name=s.name, description=s.description, input_schema=s.parameters)
        for s in toolset.specs
    ]


def tool_result(text: str, *, home: str | Path | None = None) -> CallToolResult:
    """A toolset's JSON text as an MCP tool result; ``{"error": …}`` sets ``isError`` so the
    client's model sees the Japanese message as a failed call it can correct. An error's
    message is sent without the server's absolute paths (those in the workspace ``home``
    relative to it)."""
    require_sdk()
    from mcp.types import CallToolResult, TextContent

    try:
        data = json.loads(text)
    except ValueError:  # a result cut to the context budget is not valid JSON any more
        data = None
    failed = isinstance(data, dict) and "error" in data
    if failed and isinstance(data, dict):
        data["error"] = public_message(str(data["error"]), home=home)
        text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=failed)


def server_instructions(toolset: Toolset) -> str:
    """What the client's model is told about this server (Japanese): the team and the
    collections that exist."""
    scope = toolset.scope
    existing = {c.name for c in scope.client.collections()}
    roles = "、".join(f"{r}={n}" for r, n in scope.collections.items() if n in existing)
    return (
        "探索(tansaku)の業務ナレッジ検索・集計ツールです。"
        f"対象はチーム「{scope.team}」のデータだけです"
        f"(コレクション: {roles or 'なし'})。"
        '結果は JSON の文字列です。失敗したときは {"error": "…"} に理由が書かれているので、'
        "引数を直して呼び直してください。各ツールの説明に使う場面・使わない場面・例があります。"
    )


def mcp_server(
    toolset: Toolset, *, name: str = "tansaku", max_concurrent_calls: int = MAX_CONCURRENT_CALLS
) -> Server[Any]:
    """A low-level MCP ``Server`` listing and calling the tools of ``toolset``.

    Calls run in worker threads (at most ``max_concurrent_calls`` at once) so that a long search
    does not stall the connection."""
    require_sdk()
    import anyio
    import anyio.to_thread
    from mcp.server import Server
    from mcp.types import CallToolRequestParams, ListToolsResult, PaginatedRequestParams

    import tansaku

    if max_concurrent_calls < 1:
        raise ValueError(f"max_concurrent_calls must be at least 1, got {max_concurrent_calls}")
    tools = tool_definitions(toolset)
    schemas = {s.name: s.parameters for s in toolset.specs}
    client = toolset.scope.client
    home = client.workspace.home if client is not None else None
    limiter: list[anyio.CapacityLimiter] = []  # made inside the server's event loop

    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        if not limiter:
            limiter.append(anyio.CapacityLimiter(max_concurrent_calls))
        arguments = dict(params.arguments or {})
        log.info("tool call %s %s", params.name, sorted(arguments))
        text = await anyio.to_thread.run_sync(
            toolset.call, params.name, arguments, limiter=limiter[0]
        )
        return tool_result(text, home=home)

    return Server(
        name,
        version=tansaku.__version__,
        title="探索 tansaku",
        instructions=server_instructions(toolset),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(toolset: Toolset) -> None:
    """Serve ``toolset`` over this process's stdin/stdout until the client closes them."""
    require_sdk()
    from mcp.server.stdio import stdio_server

    server = mcp_server(toolset)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


# -- streamable HTTP -----------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # any other host name may resolve to a public address


def check_bind(host: str, *, allow_remote: bool = False, token: str | None = None) -> None:
    """Refuse a bind that would expose the tools by accident (InvalidRequest, Japanese).

    A non-loopback ``host`` needs ``allow_remote`` and a ``token``; a token, wherever given,
    must be at least ``MIN_TOKEN_CHARS`` characters."""
    if token is not None and len(token.strip()) < MIN_TOKEN_CHARS:
        raise InvalidRequest(
            f"トークンが短すぎます({MIN_TOKEN_CHARS}文字以上にしてください。"
            '例: python -c "import secrets; print(secrets.token_urlsafe(32))")'
        )
    if is_loopback(host):
        return
    if not allow_remote or not token:
        missing = "--allow-remote" if not allow_remote else f"--token(または {TOKEN_ENV})"
        raise InvalidRequest(
            f"{host} はこのマシンの外から接続できるアドレスです。チームのデータを公開しないよう、"
            f"ループバック以外で待ち受けるには --allow-remote とトークン(--token または "
            f"{TOKEN_ENV})の両方が必要です(不足: {missing})"
        )


def bearer_auth(app: AsgiApp, token: str) -> AsgiApp:
    """``app`` behind a bearer token checked on every HTTP request (401 otherwise)."""
    expected = token.strip().encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not _authorized(scope, expected):
            body = json.dumps(
                {"error": "認証が必要です。Authorization: Bearer <トークン> を付けてください"},
                ensure_ascii=False,
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json; charset=utf-8"),
                        (b"www-authenticate", b'Bearer realm="tansaku"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded


def _authorized(scope: Scope, expected: bytes) -> bool:
    values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
    if len(values) != 1:
        return False
    scheme, _, presented = values[0].partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(presented.strip(), expected)


def http_app(toolset: Toolset, *, host: str = DEFAULT_HOST, token: str | None = None) -> AsgiApp:
    """The streamable HTTP ASGI app (endpoint ``/mcp``), behind ``token`` when given.

    On a loopback ``host`` the SDK also refuses requests whose Host/Origin header is not a
    loopback one (DNS rebinding)."""
    server = mcp_server(toolset)
    app: AsgiApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return bearer_auth(app, token) if token else app


def _listen(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InvalidRequest(f"{host}:{port} で待ち受けられません({exc.strerror or exc})") from None
    return sock


async def serve_http(
    toolset: Toolset,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    allow_remote: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``toolset`` over streamable HTTP until interrupted.

    ``port=0`` picks a free port; ``on_ready`` gets the endpoint URL once the socket listens.
    Raises InvalidRequest for a bind :func:`check_bind` refuses or a port in use."""
    check_bind(host, allow_remote=allow_remote, token=token)
    import uvicorn

    host = host.strip().strip("[]")  # [::1] as written in a URL

    app = http_app(toolset, host=host, token=token)
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}{MCP_PATH}")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
