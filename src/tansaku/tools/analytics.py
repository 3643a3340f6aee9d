"""Statistics over the daily-report table and the SQL tools of the registered tables, as agent
tools (``000_…txt``, ``002_…txt``). The store a user may see comes from the scope (their
credentials), never from the model; dates may be given as a relative period (先月, 先週 …)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from tansaku.tools.spec import ToolError, ToolScope, ToolSpec, tool

PERIOD_HELP = "相対的な期間(先月・先週・今月・今週・昨日・過去N日)。date_from/date_to の代わり"


def _db(scope: ToolScope) -> Any:
    if scope.tables is None:
        raise ToolError("表データ(日報の集計表)が登録されていません")
    return scope.tables


def _period(
    scope: ToolScope, period: str | None, date_from: str | None, date_to: str | None
) -> tuple[str | None, str | None]:
    from tansaku.tables.period import period_of

    if period:
        if date_from or date_to:
            raise ToolError("period と date_from/date_to は同時に指定できません")
        p = period_of(period, scope.now)
        return p.start.isoformat(), p.end.isoformat()
    if not date_to and scope.now is not None:
        return date_from, scope.now.date().isoformat()
    return date_from, date_to


def _stats(
    compute: Callable[..., Any],
    scope: ToolScope,
    period: str | None,
    date_from: str | None,
    date_to: str | None,
    days: int,
) -> dict[str, Any]:
    from tansaku.tables.period import StoreScope

    start, end = _period(scope, period, date_from, date_to)
    stores = StoreScope.only(scope.store) if scope.store else StoreScope.all_stores()
    result: dict[str, Any] = compute(_db(scope), start, end, days, scope=stores).to_dict()
    if period:
        result["period_expression"] = period
    return result


def _doc(what: str, use: str, example: str) -> str:
    return (
        f"{what}\n"
        f"使う場面: {use}\n"
        "使わない場面: 個々の出来事の内容(search_past_cases)、手順(search_manual)。\n"
        f"引数: period({PERIOD_HELP}), date_from・date_to(YYYY-MM-DD), "
        "days(開始日か終了日の一方だけのときの日数、既定30)。店舗は利用者の権限で決まります。\n"
        f'例: {{"period": "先月"}} / '
        f'{{"date_from": "2025-12-01", "date_to": "2025-12-10"}} / {example}'
    )


def _stat_tool(name: str, compute: str, what: str, use: str, example: str) -> ToolSpec:
    """One statistics tool: the same arguments, a different function of ``tansaku.tables``."""

    def run(
        scope: ToolScope,
        period: Annotated[str | None, PERIOD_HELP] = None,
        date_from: Annotated[str | None, "開始日 YYYY-MM-DD"] = None,
        date_to: Annotated[str | None, "終了日 YYYY-MM-DD"] = None,
        days: Annotated[int, "日数"] = 30,
    ) -> dict[str, Any]:
        import tansaku.tables

        return _stats(getattr(tansaku.tables, compute), scope, period, date_from, date_to, days)

    return tool(name, _doc(what, use, example))(run)


get_claim_statistics = _stat_tool(
    "get_claim_statistics",
    "get_claim_statistics",
    "指定期間のクレーム件数・発生率・日別件数・最近のクレーム内容を返します。",
    "「先月のクレーム傾向」「今週クレームは何件?」のような件数・率・傾向の質問。",
    '{"period": "過去7日"}',
)
get_claim_breakdown = _stat_tool(
    "get_claim_breakdown",
    "get_claim_breakdown",
    "クレームの内訳(店舗別・週別の件数、内容に多い語、直前の同じ長さの期間との比較、例の日報)を返します。",
    "「先月のクレーム傾向」「クレームの内訳」「どの店舗でクレームが多い」のように、傾向・内訳・比較を聞く質問。",
    '{"period": "先月"}',
)
get_sales_trend = _stat_tool(
    "get_sales_trend",
    "get_sales_trend",
    "指定期間の売上合計・平均・日別売上・週平均を返します。",
    "「先月の売上は?」「売上の推移」のような売上の質問。",
    '{"period": "今月"}',
)
get_cash_difference_analysis = _stat_tool(
    "get_cash_difference_analysis",
    "get_cash_difference_analysis",
    "指定期間の現金過不足(件数・率・合計・過剰と不足の内訳・最近の発生)を返します。",
    "「レジの現金が合わないことはどれくらいある?」のような現金過不足の質問。",
    '{"period": "先週"}',
)


COMPARE = (
    "2つの期間で指標(sales: 売上 / claim_count: クレーム件数 / cash_diff: 現金過不足)を比較し、"
    "差・変化率・増加/減少/横ばいを返します。\n"
    "使う場面: 「先月と比べて今月の売上は?」のような期間の比較。\n"
    "使わない場面: 1つの期間の集計(get_sales_trend など)。\n"
    "引数: metric, current_start・current_end(今期), previous_start・previous_end(前期)、"
    "すべて YYYY-MM-DD。\n"
    '例: {"metric": "sales", "current_start": "2025-12-01", "current_end": "2025-12-10", '
    '"previous_start": "2025-11-01", "previous_end": "2025-11-10"} / '
    '{"metric": "claim_count", …} / {"metric": "cash_diff", …}'
)


@tool("compare_periods", COMPARE)
def compare_periods(
    scope: ToolScope,
    metric: Annotated[Literal["sales", "claim_count", "cash_diff"], "比較する指標"],
    current_start: Annotated[str, "今期の開始日 YYYY-MM-DD"],
    current_end: Annotated[str, "今期の終了日 YYYY-MM-DD"],
    previous_start: Annotated[str, "前期の開始日 YYYY-MM-DD"],
    previous_end: Annotated[str, "前期の終了日 YYYY-MM-DD"],
) -> dict[str, Any]:
    from tansaku.tables import compare_periods as compute
    from tansaku.tables.period import StoreScope

    stores = StoreScope.only(scope.store) if scope.store else StoreScope.all_stores()
    result: dict[str, Any] = compute(
        _db(scope), metric, current_start, current_end, previous_start, previous_end, scope=stores
    ).to_dict()
    return result


ANALYTICS_TOOLS = (
    get_claim_statistics,
    get_claim_breakdown,
    get_sales_trend,
    get_cash_difference_analysis,
    compare_periods,
)


def sql_tool_specs(db: Any) -> tuple[ToolSpec, ...]:
    """The registry's SQL tools (``search_stores`` …) as tool specs: their description and
    schema come from the registry; each reads only its own tables."""
    from tansaku.tables import sql_tools

    def bound(sql: Any) -> Callable[..., Any]:
        def call(scope: ToolScope, sql_query: str) -> dict[str, Any]:
            out: dict[str, Any] = sql(sql_query)
            return out

        return call

    return tuple(
        ToolSpec(name=t.name, description=t.description, parameters=t.parameters, fn=bound(t))
        for t in sql_tools(db)
    )
