"""``POST /api/ask``: an agent turn for the caller's team.

JSON by default; with ``Accept: text/event-stream`` the agent's typed events (thought,
tool_call, tool_result, draft, critique, answer …) are streamed as server-sent events as they
happen, then one ``final`` event carrying the whole answer. The turn runs in a thread of its
own: a client that disconnects stops the stream, not the turn (its conversation and unanswered
log are still written).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from tansaku.errors import TansakuError, public_message
from tansaku.server.errors import ApiError, error_body, library_status
from tansaku.server.owners import visible
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, Responses, documented
from tansaku.server.responses.agent import AskResponse
from tansaku.server.schemas import AskBody, now_of
from tansaku.server.state import AppState, StateDep, TeamDep

log = logging.getLogger("tansaku.server")
router = APIRouter(tags=["エージェント"])
_END = object()
SSE = (
    "`Accept: text/event-stream` のとき: 各イベントが `event: <type>` / `data: <json>`、"
    "最後に `event: final`(回答)か `event: error`"
)
RESPONSES: Responses = documented(AskResponse, *WRITE, 404, 409, 501)
RESPONSES[200]["content"] = {"text/event-stream": {"schema": {"type": "string"}}}
RESPONSES[200]["description"] = f"回答(JSON)。{SSE}"


def _collections(
    state: AppState, team: str, asked: Mapping[str, str] | Sequence[str] | None
) -> list[str] | dict[str, str]:
    """The collections of the answer's scope, only collections the team may see (a named one it
    cannot: 404). None: every collection the team sees. A list of names, or a mapping whose
    keys are its values (what the chat page sends), is a plain scope — each collection's role
    read from its config; a mapping naming roles keeps them."""
    names = {i.name for i in visible(state.client, state.owners, team)}
    if asked is None:
        return sorted(names)
    wanted = list(asked.values()) if isinstance(asked, Mapping) else list(asked)
    for name in wanted:
        if name not in names:
            raise ApiError(404, "collection_not_found", f"コレクション「{name}」が見つかりません")
    if isinstance(asked, Mapping) and any(k != v for k, v in asked.items()):
        return dict(asked)
    return list(dict.fromkeys(wanted))


def record_answer(state: AppState, team: str, answer: Any) -> str:
    """An ANSWER_EVENT in appdb for the turn — built here, from the answer — so that 👍/👎 on an
    answer goes through ``POST /api/feedback`` like a search's: its meta (question, cited
    titles, unanswered as zero-hit) comes from this row, never from the client."""
    query_id = uuid.uuid4().hex
    if state.appdb is None:
        return query_id
    cites = list(answer.citations)
    event = {
        "event": "ANSWER_EVENT",
        "query_id": query_id,
        "tenant": team,
        "collection": cites[0].collection if cites else "",
        "query": answer.question,
        "normalized_query": answer.question,
        "query_type": "ask",
        "namespaces": sorted({c.collection for c in cites}),
        "top5_doc_ids": [c.doc_id for c in cites[:5]],
        "hit_count": len(cites),
        "zero_hit": bool(answer.unanswered),
        "model": answer.model,
        "conversation_id": answer.conversation_id,
    }
    state.appdb.events.record(team, event, titles=[c.title or c.doc_id for c in cites[:5]])
    if answer.conversation_id:  # the stored turn keeps it: a reopened answer can be rated
        from tansaku.agent import conversations

        conversations(state.client).attach_query_id(
            answer.conversation_id, team, query_id, text=answer.text
        )
    return query_id


def _team_tables(state: AppState, team: str) -> Any:
    """The tables as ``team`` uses them (its name in the SQL audit log), or None."""
    tables = state.tables_if_any()
    return tables.for_team(team) if tables is not None else None


def _outcome(answer: Any) -> str:
    return "unanswered" if answer.unanswered else "answered"


def _turn(
    state: AppState,
    team: str,
    body: AskBody,
    collections: list[str] | dict[str, str],
    on_event: Any = None,
) -> Any:
    from tansaku.agent import ConversationNotFound, ask

    try:
        answer = ask(
            state.client,
            body.question,
            team=team,
            collections=collections,
            now=now_of(body.now),
            tables=_team_tables(state, team),
            store=body.store,
            user=body.user,
            conversation_id=body.conversation_id,
            on_event=on_event,
        )
    except ConversationNotFound:
        raise ApiError(
            404,
            "conversation_not_found",
            f"会話「{body.conversation_id}」が見つかりません。"
            "conversation_id を付けずに送ると新しい会話が始まります",
        ) from None
    except Exception:
        state.metrics.ask_total.labels(outcome="error").inc()
        raise
    state.metrics.ask_total.labels(outcome=_outcome(answer)).inc()
    return answer


def _check(body: AskBody) -> None:
    """A blank, over-long or control-character question: 422, before anything is logged."""
    from tansaku.agent import check_question
    from tansaku.errors import InvalidRequest

    try:
        check_question(body.question)
    except InvalidRequest as exc:
        raise ApiError(422, "invalid_question", str(exc)) from None


@router.post(
    "/api/ask",
    summary="質問に出典つきで答える",
    responses=RESPONSES,
)
def ask_route(body: AskBody, request: Request, state: StateDep, team: TeamDep) -> Response:
    """例: `{"question": "昨日の問題を教えて"}`。続きの質問は `conversation_id` を付ける。
    `Accept: text/event-stream` で考え・ツール呼び出しを逐次受け取れる(SSE)。"""
    _check(body)
    collections = _collections(state, team, body.collections)
    if "text/event-stream" in request.headers.get("accept", ""):
        return StreamingResponse(
            _stream(state, team, body, collections),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    answer = _turn(state, team, body, collections)
    return json_response(answer.to_dict() | {"query_id": record_answer(state, team, answer)})


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def _stream(
    state: AppState, team: str, body: AskBody, collections: list[str] | dict[str, str]
) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(item: Any) -> None:
        # the loop may be gone (server shutting down): nobody is listening then
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(queue.put_nowait, item)

    home = state.client.workspace.home  # error messages leave without the server's paths

    def work() -> None:
        try:
            answer = _turn(
                state, team, body, collections, on_event=lambda e: put(("event", e.to_dict()))
            )
            put(("final", answer.to_dict() | {"query_id": record_answer(state, team, answer)}))
        except ApiError as exc:
            put(("error", error_body(exc.code, public_message(exc.message, home=home))))
        except TansakuError as exc:
            _, code = library_status(exc)
            put(("error", error_body(code, public_message(str(exc), home=home))))
        except Exception:
            log.exception("ask turn failed")
            put(("error", error_body("internal_error", "回答の作成中にエラーが発生しました")))
        finally:
            put(_END)

    threading.Thread(target=work, name="ask-turn", daemon=True).start()
    while True:
        item = await queue.get()
        if item is _END:
            return
        kind, data = item
        yield _sse(data.get("type", "event") if kind == "event" else kind, data)
