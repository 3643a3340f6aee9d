"""Write an :class:`~tansaku.eval.runner.EvalReport` as Markdown, CSV and a PNG bar chart.

The chart needs matplotlib; without it the Markdown and CSV are still written and
:func:`write_report` says why the PNG is missing.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from tansaku.eval.metrics import METRIC_KEYS
from tansaku.eval.runner import EvalReport

HEADERS = {
    "ndcg@10": "nDCG@10",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr@10": "MRR@10",
    "p@10": "P@10",
    "r@1": "R@1",
    "zero_hit_rate": "0件率",
    "latency_ms_p50": "p50 ms",
    "latency_ms_p95": "p95 ms",
}
CHART_METRICS = ("ndcg@10", "recall@10", "mrr@10", "p@10", "r@1")


def _fmt(key: str, value: float) -> str:
    return f"{value:.1f}" if key.startswith("latency") else f"{value:.4f}"


def markdown_table(report: EvalReport) -> str:
    """The metrics table, one row per configuration (Markdown)."""
    lines = [
        "| 設定 | " + " | ".join(HEADERS[k] for k in METRIC_KEYS) + " |",
        "|---|" + "---|" * len(METRIC_KEYS),
    ]
    for c in report.configs:
        cells = " | ".join(_fmt(k, c.metrics[k]) for k in METRIC_KEYS)
        lines.append(f"| {c.name} | {cells} |")
    return "\n".join(lines) + "\n"


def summary_lines(report: EvalReport) -> list[str]:
    """Where the numbers come from (in Japanese): dataset, sizes, ingest, embedding, machine,
    date."""
    ds = report.dataset
    judged = sum(len(r) for r in ds.qrels.values())
    out = [
        f"データセット: {ds.name}({ds.kind.value}、{ds.path})。クエリ {len(ds.queries)} 件、"
        f"正解の判定 {judged} 件、記録 {report.points} 件",
    ]
    for name, ing in report.ingest.items():
        out.append(
            f"コレクション {name}: 追加 {ing.inserted}、更新 {ing.updated}、変更なし "
            f"{ing.unchanged}、削除 {ing.deleted}、埋め込み {ing.embedded}"
        )
    if report.query_embed_ms:
        p50, p95 = report.query_embed_ms
        out.append(f"クエリの埋め込みだけ(キャッシュなし): p50 {p50:.1f} ms、p95 {p95:.1f} ms")
    out.append(
        "レイテンシ = 上位 100 件を求める検索 1 回(クエリのベクトルはキャッシュ済み。"
        "新しいクエリでは上の埋め込みの時間が加わる)"
    )
    out.append(f"実行日 {report.date}、マシン {report.machine}")
    return out


def markdown_report(report: EvalReport) -> str:
    lines = [f"# tansaku eval: {report.dataset.name}", ""]
    lines += [f"- {s}" for s in summary_lines(report)]
    lines += ["", markdown_table(report)]
    return "\n".join(lines)


def csv_text(report: EvalReport) -> str:
    """The metrics for tools: the configuration's name and the metric keys of ``--json``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["config", *METRIC_KEYS])
    for c in report.configs:
        writer.writerow([c.name, *(f"{c.metrics[k]:.6f}" for k in METRIC_KEYS)])
    return buf.getvalue()


def write_chart(report: EvalReport, path: Path) -> None:
    """Grouped bars: one group per metric, one bar per configuration. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(report.configs)
    width = 0.8 / max(n, 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(CHART_METRICS) + 0.3 * n), 4.0))
    for i, c in enumerate(report.configs):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(CHART_METRICS))]
        ax.bar(xs, [c.metrics[k] for k in CHART_METRICS], width, label=c.name)
    ax.set_xticks(range(len(CHART_METRICS)), [HEADERS[k] for k in CHART_METRICS])
    ax.set_ylim(0, 1.0)
    ax.set_title(f"tansaku eval: {report.dataset.name} (n={len(report.dataset.queries)})")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@dataclass(frozen=True)
class Written:
    files: tuple[Path, ...]
    warnings: tuple[str, ...] = ()


def write_report(report: EvalReport, out_dir: str | Path) -> Written:
    """``results.md``, ``results.csv`` and ``results.png`` (when matplotlib is installed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, csv_path, png = out / "results.md", out / "results.csv", out / "results.png"
    md.write_text(markdown_report(report), encoding="utf-8")
    csv_path.write_text(csv_text(report), encoding="utf-8")
    try:
        write_chart(report, png)
    except ImportError:
        return Written(
            (md, csv_path),
            (
                "グラフ(PNG)は作りませんでした: matplotlib がありません。"
                "`pip install matplotlib` で入れると results.png も書き出します",
            ),
        )
    return Written((md, csv_path, png))


__all__ = ["Written", "csv_text", "markdown_report", "markdown_table", "write_report"]
