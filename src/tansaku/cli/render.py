"""Human-readable output for the CLI (rich). JSON output never goes through here."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tansaku.client import CollectionInfo
from tansaku.ingest.pipeline import IngestReport
from tansaku.search.merge import preview
from tansaku.search.types import SearchResult


def print_ingest(console: Console, report: IngestReport, collection: str, team: str) -> None:
    head = "[dry-run] " if report.dry_run else ""
    console.print(
        f"{head}コレクション [bold]{collection}[/] (チーム {team}): "
        f"追加 {report.inserted} / 更新 {report.updated} / 変更なし {report.unchanged} / "
        f"削除 {report.deleted} / 埋め込み {report.embedded} / スキップ {report.skipped}"
    )
    for f in report.failed:
        console.print(f"[red]失敗[/] {f.path}: {f.reason}")


def print_search(console: Console, result: SearchResult) -> None:
    plan = result.plan
    console.print(
        f"[bold]「{escape(result.query)}」[/] — {len(result.hits)}件 "
        f"({plan.get('collection')}, {result.timings_ms.get('total', 0):.1f} ms)"
    )
    if not result.hits:
        console.print(
            "[yellow]該当する結果がありません。言い換えるか、別のコレクションを試してください[/]"
        )
        return
    for i, hit in enumerate(result.hits, start=1):
        meta = hit.record.metadata
        title = escape(str(meta.get("title") or hit.doc_id))
        extra = " ".join(escape(str(meta[k])) for k in ("date", "store", "chapter") if meta.get(k))
        axes = " ".join(f"{name}#{a.rank}" for name, a in hit.axes.items())
        console.print(
            f"[bold cyan]{i:>2}.[/] [green]{hit.score:.3f}[/] [bold]{title}[/]"
            f" [dim]{escape(hit.record.id)}{'  ' + extra if extra else ''}  ({axes})[/]"
        )
        console.print(f"    {escape(preview(hit.record.text, 110))}")


def print_collections(console: Console, infos: list[CollectionInfo]) -> None:
    if not infos:
        console.print(
            "コレクションはまだありません。`tansaku ingest PATH --collection 名前` で作成できます"
        )
        return
    table = Table()
    table.add_column("コレクション")
    table.add_column("件数", justify="right")
    table.add_column("チーム")
    table.add_column("検索軸")
    table.add_column("説明", overflow="fold")
    for info in infos:
        table.add_row(
            info.name,
            str(info.points),
            ", ".join(info.teams) or "-",
            ", ".join(info.axes),
            info.description,
        )
    console.print(table)
