"""``tansaku ask`` (an answer with its sources) and ``tansaku unanswered``."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from tansaku.cli import render
from tansaku.cli.common import HomeOpt, JsonOpt, TeamOpt, emit_json, err, fail, out
from tansaku.errors import TansakuError
from tansaku.workspace import DEFAULT_TEAM, Workspace


def _tables(home: Path | None) -> Any:
    """The workspace's registered tables, or None (no tables.toml, or no tables extra)."""
    path = Workspace.from_env(home).tables_file
    if not path.is_file():
        return None
    try:
        from tansaku.tables import open_tables

        return open_tables(path)
    except (ImportError, TansakuError):
        return None


def ask(
    question: Annotated[str, typer.Argument(help="質問(日本語)")],
    team: TeamOpt = DEFAULT_TEAM,
    show_thoughts: Annotated[
        bool, typer.Option("--show-thoughts", help="判断・ツールの呼び出しも表示する")
    ] = False,
    now: Annotated[
        str | None, typer.Option("--now", help="「昨日」などの基準日時 YYYY-MM-DD[THH:MM]")
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """質問に出典つきで答える(言語モデルなし: 分類 → 検索・集計 → 記録からの抜き出し)。"""
    import tansaku
    from tansaku.agent import ask as run
    from tansaku.text.dates import parse_now

    if not question.strip():
        raise fail("質問が空です", 2)
    try:
        clock = parse_now(now) if now else None
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    tables = _tables(home)
    try:
        with tansaku.connect(home, create=False) as ts, tables or contextlib.nullcontext():
            answer = run(ts, question, team=team, now=clock, tables=tables)
    except TansakuError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json(answer.to_dict())
        return
    if show_thoughts:
        for event in answer.events[:-1]:
            label = {"thought": "考え", "tool_call": "ツール", "tool_result": "結果"}.get(
                event.type, event.type
            )
            detail = event.text or json.dumps(event.arguments or {}, ensure_ascii=False)
            name = f"{event.tool} " if event.tool else ""
            err.print(f"[dim]{label}: {render.inline(name + detail)[:200]}[/]")
    out.print(render.safe(answer.text))
    for c in answer.citations:
        parts = [c.title, *(p for p in (c.date, c.store) if p not in c.title), c.section]
        out.print(f"[dim]出典: {render.inline(' '.join(p for p in parts if p))} ({c.doc_id})[/]")


def unanswered(
    team: TeamOpt = DEFAULT_TEAM, as_json: JsonOpt = False, home: HomeOpt = None
) -> None:
    """答えられなかった質問の一覧(新しい順)。"""
    import tansaku
    from tansaku.agent import unanswered_log

    try:
        with tansaku.connect(home, create=False) as ts:
            items = unanswered_log(ts).list(team=team)
    except TansakuError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json({"unanswered": [u.to_dict() for u in items]})
        return
    if not items:
        out.print("答えられなかった質問はありません")
    for u in items:
        out.print(f"{u.asked_at}  {render.inline(u.question)}  [dim]({render.inline(u.reason)})[/]")


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
    app.command("unanswered")(unanswered)
