"""What every ``tansaku`` command shares: the consoles, the common options, the error and JSON
helpers and the workspace connection — so that each command module is a thin adapter.

Messages for people go to stderr in Japanese (``fail``); ``--json`` output goes to stdout as one
JSON object (``emit_json``), with the characters a terminal would interpret made visible.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tansaku.cli import render
from tansaku.errors import InvalidRequest, TansakuError

if TYPE_CHECKING:
    from tansaku.client import Tansaku

EXIT_OK, EXIT_ERROR, EXIT_REJECTED = 0, 1, 2

out = Console(soft_wrap=False)
err = Console(stderr=True)

TeamOpt = Annotated[str, typer.Option("--team", "-t", help="チーム(テナント)名")]
CollectionNameOpt = Annotated[str, typer.Option("--collection", "-c", help="コレクション名")]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON で出力する(機械向け)")]
NowOpt = Annotated[
    str | None, typer.Option("--now", help="「昨日」などの基準日時 YYYY-MM-DD[THH:MM]")
]
HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="ワークスペースのフォルダ(既定: $TANSAKU_HOME または ./.tansaku)"),
]


T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class _OptionGroup:
    build: Callable[..., Any]


def option_group(build: Callable[..., T]) -> T:
    """The default of a command parameter that stands for several options: ``build``'s
    parameters (Typer-annotated, with defaults). A command decorated with
    :func:`grouped_options` shows them in that parameter's place and receives what ``build``
    makes of them, so options that travel together are declared and checked in one place."""
    return cast(T, _OptionGroup(build))


def grouped_options(command: Callable[..., R]) -> Callable[..., R]:
    """``command`` with each :func:`option_group` parameter replaced by its options (the same
    order, names and help as ``build`` declares; built before the command runs)."""
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, tuple[Callable[..., Any], list[str]]] = {}
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if not isinstance(param.default, _OptionGroup):
            params.append(param)
            continue
        build = param.default.build
        options = inspect.signature(build, eval_str=True).parameters.values()
        groups[param.name] = (build, [o.name for o in options])
        params.extend(o.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for o in options)

    def run(**values: Any) -> R:
        for name, (build, options) in groups.items():
            values[name] = build(**{option: values.pop(option) for option in options})
        return command(**values)

    run.__name__, run.__qualname__ = command.__name__, command.__qualname__
    run.__doc__, run.__module__ = command.__doc__, command.__module__
    run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return run


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print ``message`` as an error on stderr; ``raise fail(...)`` ends the command."""
    err.print(f"[red]エラー:[/] {render.safe(message)}", soft_wrap=True, highlight=False)
    return typer.Exit(code)


def library_error(exc: TansakuError) -> typer.Exit:
    """A library error as a message and an exit code: 2 for an invalid request, else 1."""
    return fail(str(exc), EXIT_REJECTED if isinstance(exc, InvalidRequest) else EXIT_ERROR)


@contextmanager
def library_errors(code: int | None = None) -> Iterator[None]:
    """A library error raised inside ends the command with its message: exit ``code``, or
    when none is given the code :func:`library_error` picks for it."""
    try:
        yield
    except TansakuError as exc:
        raise (library_error(exc) if code is None else fail(str(exc), code)) from None


@contextmanager
def failing(code: int, *kinds: type[Exception]) -> Iterator[None]:
    """An exception of one of ``kinds`` raised inside ends the command with its message and
    exit ``code`` (nested inside another, the errors a command gives a code of their own)."""
    try:
        yield
    except kinds as exc:
        raise fail(str(exc), code) from None


def emit_json(obj: Any) -> None:
    """``obj`` as indented JSON on stdout (non-ASCII kept, terminal controls made visible)."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write(render.json_safe(text) + "\n")


def warn(messages: Iterable[str]) -> None:
    """Each message as a warning line on stderr."""
    for message in messages:
        err.print(f"[yellow]注意:[/] {escape(message)}", soft_wrap=True, highlight=False)


def print_team_counts(teams: Mapping[str, int]) -> None:
    """One indented line per team: its name and how many records."""
    for team, n in teams.items():
        out.print(f"  {escape(team)}: {n:,} 件", highlight=False)


class TeamReport(Protocol):
    """What a command that moves records reports: warnings, records per team, its JSON."""

    @property
    def warnings(self) -> list[str]: ...

    @property
    def teams(self) -> dict[str, int]: ...

    def to_dict(self) -> dict[str, object]: ...


def show_report(report: TeamReport, as_json: bool, summary: str) -> None:
    """``report``'s warnings on stderr, then the report as JSON (``--json``), or ``summary``
    and the records per team."""
    warn(report.warnings)
    if as_json:
        emit_json(report.to_dict())
        return
    out.print(summary, soft_wrap=True, highlight=False)
    print_team_counts(report.teams)


def confirm(question: str, refused: str, yes: bool) -> None:
    """Go on when ``yes``; else ask ``question`` on a terminal (no: exit 1), and with no
    terminal to ask, end with ``refused`` (exit 2)."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise fail(refused, EXIT_REJECTED)
    if not typer.confirm(question):
        raise typer.Exit(EXIT_ERROR)


def confirm_delete(what: str, yes: bool) -> None:
    """:func:`confirm` that ``what`` may be deleted for good."""
    confirm(
        f"{what}を削除します。元に戻せません。よろしいですか?",
        f"{what}を削除するには --yes を付けてください",
        yes,
    )


def connect(home: Path | None, *, create: bool = True) -> Tansaku:
    """The workspace; read commands pass ``create=False`` (a mistyped --home is an error, not a
    new empty workspace)."""
    import tansaku

    return tansaku.connect(home, create=create)


def parse_now(value: str | None) -> datetime | None:
    """``--now`` (YYYY-MM-DD[THH:MM]) as an aware Tokyo datetime, None when not given; a bad
    value ends the command with exit code 2."""
    if value is None:
        return None
    from tansaku.text.dates import parse_now as parse

    with failing(EXIT_REJECTED, ValueError):
        return parse(value)


def progress_bar() -> Progress:
    """A transient progress bar on stderr with rate and ETA (``rate`` field: a short text)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )
