"""``tansaku ask`` (an answer with its sources, in a conversation) and ``tansaku unanswered``.

The configured chat model answers through the ReAct agent; with none (or ``--no-llm``), the
offline router does. ``--show-thoughts`` prints each event on stderr as it happens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tansaku.cli import render
from tansaku.cli.common import (
    HomeOpt,
    JsonOpt,
    NowOpt,
    TeamOpt,
    connect,
    emit_json,
    err,
    fail,
    grouped_options,
    library_errors,
    option_group,
    out,
    parse_now,
)
from tansaku.errors import TansakuError
from tansaku.workspace import DEFAULT_TEAM, Workspace

if TYPE_CHECKING:
    from tansaku.agent import Answer, Event

CollectionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--collection",
        "-c",
        help="答えに使うコレクション(繰り返し指定可。既定: 日報・マニュアル・ノート・カード)。"
        "役割=名前 で役割つき(例: manuals=manuals_v2)",
    ),
]
ConversationOpt = Annotated[
    str | None,
    typer.Option("--conversation", help="続ける会話の ID(ask の回答のあと・chat の終了時に表示)"),
]
ThoughtsOpt = Annotated[
    bool, typer.Option("--show-thoughts", help="考え・ツールの呼び出し・推敲を起きた順に表示する")
]
NoLlmOpt = Annotated[
    bool, typer.Option("--no-llm", help="言語モデルを使わない(分類 → 検索・集計 → 抜き出し)")
]
_LABELS = {
    "thought": "考え",
    "tool_call": "ツール",
    "tool_result": "結果",
    "draft": "回答案",
    "critique": "推敲",
    "error": "注意",
}


def collections_of(values: list[str] | None) -> list[str] | dict[str, str] | None:
    """``--collection`` values: the names of the collections in scope (each one's role read
    from its config), or — when some are given as ``役割=名前`` — role → name (a plain name
    under its own name); None when not given (the default roles)."""
    if not values:
        return None
    from tansaku.workspace import validate_name

    pairs: list[tuple[str, str]] = []
    for value in values:
        role, sep, name = value.rpartition("=")
        try:
            name = validate_name(name.strip())
            pairs.append((validate_name(role.strip(), "役割") if sep else "", name))
        except TansakuError as exc:
            raise fail(f"--collection {value}: {exc}", 2) from None
    if not any(role for role, _ in pairs):
        return list(dict.fromkeys(name for _, name in pairs))
    return {role or name: name for role, name in pairs}


def open_tables(home: Path | None, *, note: bool = False) -> Any:
    """The workspace's registered tables (statistics and SQL tools; queries in the workspace's
    SQL audit log), or None (no tables.toml, or they cannot be opened: then, with ``note``, a
    line on stderr says why)."""
    ws = Workspace.from_env(home)
    if not ws.tables_file.is_file():
        return None
    try:
        from tansaku.tables import open_tables as open_db

        return open_db(ws.tables_file, audit_log=ws.sql_audit_file)
    except (ImportError, TansakuError) as exc:
        if note:
            err.print(f"[yellow]注意:[/] 表データのツールは使えません({render.inline(str(exc))})")
        return None


def team_tables(tables: Any, team: str) -> Any:
    """``tables`` as ``team`` uses them (its name in the SQL audit log), or None."""
    return tables.for_team(team) if tables is not None else None


def print_event(event: Event) -> None:
    """One event as a line on stderr (``--show-thoughts``)."""
    if event.type == "answer":
        return
    from tansaku.agent.result_text import call_text, tool_label

    detail = event.text or call_text(event.arguments)
    name = f"{tool_label(event.tool)} " if event.tool else ""
    style = "yellow" if event.type == "error" else "dim"
    line = render.inline(name + detail)
    err.print(f"[{style}]{_LABELS[event.type]}: {line[:300]}[/]", highlight=False)


def warn_errors(event: Event) -> None:
    """Without ``--show-thoughts``: only a model failure is worth a line."""
    if event.type == "error":
        print_event(event)


def print_answer(answer: Answer) -> None:
    out.print(render.safe(answer.text), highlight=False)
    for n, c in enumerate(answer.citations, 1):
        parts = [c.title, *(p for p in (c.date, c.store) if p not in c.title), c.section]
        where = render.inline(" ".join(p for p in parts if p))
        out.print(f"[dim]\\[{n}] {where} ({render.inline(c.doc_id)})[/]", highlight=False)


class LazyTables:
    """The workspace's tables, opened — DuckDB's worker process started — only when a tool
    queries them: a question the records answer costs no table start-up. ``config`` (the
    tools' names and tables) is read from ``tables.toml`` without opening anything."""

    def __init__(self, home: Path | None, *, team: str | None = None, root: Any = None) -> None:
        self._home = home
        self._root: LazyTables = root if root is not None else self
        self._team = team
        self._db: Any = None
        self._config: Any = None

    @property
    def config(self) -> Any:
        root = self._root
        if root._db is not None:
            return root._db.config
        if root._config is None:
            from tansaku.tables import load_tables_config

            root._config = load_tables_config(Workspace.from_env(root._home).tables_file)
        return root._config

    def for_team(self, team: str) -> LazyTables:
        return LazyTables(self._home, team=team, root=self._root)

    def _open(self) -> Any:
        root = self._root
        if root._db is None:
            root._db = open_tables(root._home, note=True)
            if root._db is None:
                raise TansakuError("表データを開けません")
        return root._db.for_team(self._team) if self._team else root._db

    def __getattr__(self, name: str) -> Any:
        return getattr(self._open(), name)

    def close(self) -> None:
        if self._root is self and self._db is not None:
            self._db.close()


@contextlib.contextmanager
def session(home: Path | None) -> Iterator[tuple[Any, Any]]:
    """The workspace client and its tables (None when none are registered), closed on exit;
    the tables open on first use (:class:`LazyTables`)."""
    registered = Workspace.from_env(home).tables_file.is_file()
    tables = LazyTables(home) if registered and find_spec("duckdb") is not None else None
    try:
        with connect(home, create=False) as ts:
            yield ts, tables
    finally:
        if tables is not None:
            tables.close()


@dataclass(frozen=True)
class Asking:
    """What ``ask`` and ``chat`` pass the agent with every question: the team, the collections
    in scope, the clock (``--now``), whether to answer offline (``--no-llm``) and whether to
    print its events as they happen (``--show-thoughts``); and the conversation to continue
    (``--conversation``)."""

    team: str
    collections: list[str] | dict[str, str] | None
    now: datetime | None
    offline: bool
    show_thoughts: bool
    conversation: str | None = None

    @classmethod
    def from_options(
        cls,
        collection: CollectionOpt = None,
        conversation: ConversationOpt = None,
        no_llm: NoLlmOpt = False,
        show_thoughts: ThoughtsOpt = False,
        now: NowOpt = None,
        team: TeamOpt = DEFAULT_TEAM,
    ) -> Asking:
        """The options ``ask`` and ``chat`` share, checked (a bad one ends the command before
        anything is opened)."""
        clock = parse_now(now)
        return cls(team, collections_of(collection), clock, no_llm, show_thoughts, conversation)

    def answer(self, ts: Any, tables: Any, question: str, conversation_id: str | None) -> Answer:
        """The agent's answer to ``question`` (in conversation ``conversation_id``, or a new
        one) over the workspace ``ts`` and its ``tables``."""
        from tansaku.agent import ask as run

        return run(
            ts,
            question,
            team=self.team,
            collections=self.collections,
            now=self.now,
            tables=team_tables(tables, self.team),
            conversation_id=conversation_id,
            offline=self.offline,
            on_event=print_event if self.show_thoughts else warn_errors,
        )


ASKING_OPTIONS = option_group(Asking.from_options)
"""The options of :class:`Asking` as a parameter of ``ask`` and ``chat``."""


def _checked(question: str) -> str:
    """``question`` as given, once the agent accepts it (checked while the command line is
    read, before the options are)."""
    from tansaku.agent import check_question

    with library_errors():
        check_question(question)
    return question


@grouped_options
def ask(
    question: Annotated[str, typer.Argument(help="質問(日本語)", callback=_checked)],
    asking: Asking = ASKING_OPTIONS,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """質問に出典つきで答える(言語モデルがあればエージェント、なければ記録からの抜き出し)。"""
    with library_errors(), session(home) as (ts, tables):
        answer = asking.answer(ts, tables, question, asking.conversation)
    if as_json:
        emit_json(answer.to_dict())
        return
    print_answer(answer)
    err.print(
        f"[dim]会話 ID: {answer.conversation_id}(続けて質問するには --conversation "
        f"{answer.conversation_id})[/]",
        highlight=False,
    )


def unanswered(
    team: TeamOpt = DEFAULT_TEAM, as_json: JsonOpt = False, home: HomeOpt = None
) -> None:
    """答えられなかった質問の一覧(新しい順)。"""
    from tansaku.agent import unanswered_log

    with library_errors(), connect(home, create=False) as ts:
        items = unanswered_log(ts).list(team=team)
    if as_json:
        emit_json({"unanswered": [u.to_dict() for u in items]})
        return
    if not items:
        out.print("答えられなかった質問はありません")
    for u in items:
        when = render.inline(_tokyo(u.asked_at))
        out.print(f"{when}  {render.inline(u.question)}  [dim]({render.inline(u.reason)})[/]")


def _tokyo(stamp: str) -> str:
    """A stored UTC time as people here read it (the web page and the CSV show JST too)."""
    from datetime import datetime

    from tansaku.text.dates import TOKYO

    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return str(stamp)
    if moment.tzinfo is None:
        return str(stamp)
    return moment.astimezone(TOKYO).strftime("%Y-%m-%d %H:%M JST")


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
    app.command("unanswered")(unanswered)
