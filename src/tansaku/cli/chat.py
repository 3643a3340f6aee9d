"""``tansaku chat``: questions in a loop, one conversation kept (follow-ups understood).

``/new`` starts a new conversation, ``/quit`` (or Ctrl-D / Ctrl-C) ends the session. A failed
question prints its error and the session goes on.
"""

from __future__ import annotations

import sys

import typer

from tansaku.cli import render
from tansaku.cli.ask import ASKING_OPTIONS, Asking, print_answer, session
from tansaku.cli.common import HomeOpt, err, grouped_options, library_error
from tansaku.errors import TansakuError

PROMPT = "質問> "
QUIT = ("/quit", "/exit", "/q")
HELP = "質問を入力してください。/new で新しい会話、/quit(または Ctrl-D)で終了します。"


def _read(interactive: bool) -> str | None:
    """The next line, None at the end of input."""
    if interactive:
        try:
            return input(PROMPT)
        except EOFError:
            return None
    err.print(PROMPT, end="", highlight=False)
    line = sys.stdin.readline()
    return line.rstrip("\n") if line else None


@grouped_options
def chat(asking: Asking = ASKING_OPTIONS, home: HomeOpt = None) -> None:
    """対話しながら質問する(会話の流れを覚えて答える)。"""
    from tansaku.agent import conversations

    interactive = sys.stdin.isatty()
    cid = asking.conversation
    try:
        with session(home) as (ts, tables):
            if cid is not None:
                conversations(ts).history(cid, asking.team, 1)  # another team's: not found
            err.print(f"[bold]探索 チャット[/] — {HELP}", highlight=False)
            while True:
                line = _read(interactive)
                if line is None or line.strip() in QUIT:
                    break
                question = line.strip()
                if not question:
                    continue
                if question == "/new":
                    cid = None
                    err.print("新しい会話を始めます", highlight=False)
                    continue
                if question.startswith("/"):
                    err.print(
                        f"コマンド {render.inline(question)} はありません。{HELP}", highlight=False
                    )
                    continue
                try:
                    answer = asking.answer(ts, tables, question, cid)
                except TansakuError as exc:
                    err.print(f"[red]エラー:[/] {render.safe(exc)}", highlight=False)
                    continue
                cid = answer.conversation_id
                print_answer(answer)
                sys.stdout.flush()
    except KeyboardInterrupt:
        err.print("", highlight=False)
    except TansakuError as exc:
        raise library_error(exc) from None
    err.print(f"終了します(会話 ID: {cid})" if cid else "終了します", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
