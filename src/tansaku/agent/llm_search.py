"""The LLM query expander and classifier of the restaurant design (``000_…txt``) behind the search
engine's :class:`~tansaku.search.expand.Expander` and :class:`~tansaku.search.classify.Classifier`
seams, with the rule-based ones as fallback.

>>> use_model_for_search(ts, model)          # every search of ``ts`` now asks the model
>>> ts.search("昨日の問題", collection="reports").plan.stage.expanded_queries

A search never fails because of the model: an error, a timeout (``timeout`` seconds per call,
enforced here even if a provider hangs), a refusal or malformed output falls back to the rules
for that call, and after ``failures_before_pause`` failures in a row the model is skipped for
``pause_s`` seconds (:class:`~tansaku.agent.model_guard.PauseOptions`: a dead server must not add
its timeout to every search). Answers are bounded: at most ``max_queries`` queries of at most 200
characters each, control characters removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Unpack

from tansaku.agent.model_guard import MalformedOutput, ModelGuard, PauseOptions
from tansaku.agent.models.base import ChatModel
from tansaku.search.classify import Classification, Classifier, QueryLabel, RuleClassifier
from tansaku.search.expand import ExpandContext, Expander, RuleExpander, date_label
from tansaku.text.dates import now_tokyo, resolve_dates

if TYPE_CHECKING:
    from tansaku.client import Tansaku

MAX_QUERY_CHARS = 200
DEFAULT_ROLE = "社内の業務アシスタント"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

EXPAND_PROMPT = (
    (
        "あなたは{role}です。"
        "ユーザーからの曖昧なクエリを、より具体的な3-{n}個のクエリに展開してください。\n"
    )
    + """
# コンテキスト情報
- 現在日時: {today} ({weekday})
{extra}
# 相対日付参照
- 昨日: {yesterday}
- 先週: {last_week}
- 先月: {last_month}
{query_date}
# ユーザークエリ
{query}

# 展開ルール
1. 曖昧な時間表現を具体的な日付に変換
2. 抽象的な用語を具体的な同義語に展開
3. 検索観点を多様化
4. 3-{n}個の具体的なクエリを生成

# 出力フォーマット
JSON形式で返してください。

例: {{"queries": ["具体的なクエリ1", "具体的なクエリ2", "具体的なクエリ3"]}}"""
)

CLASSIFY_PROMPT = """あなたは{role}です。ユーザーのクエリを次のどれか1つに分類してください。

- clear: 何を探すかがはっきりした検索(例: 2025年12月9日のクレーム内容、冷蔵庫の故障の記録)
- vague: 曖昧で、具体的なクエリへの展開が必要な検索(例: 昨日の問題、最近どう?)
- manual: 手順・規則・方法を知りたい(例: 食中毒の予防方法、クレーム対応の手順)
- statistics: 件数・推移・傾向・合計などの集計(例: 先月のクレーム傾向、今月の売上推移)
- table: 店舗やイベントの一覧・条件検索(例: ファミリー向けの店舗、喫煙できる店舗は?)
- greeting: 挨拶や雑談(例: こんにちは、ありがとう)

# ユーザークエリ
{query}

# 出力フォーマット
JSON形式で返してください。confidence は 0〜1 の確からしさ、reason は短い日本語の理由です。

例: {{"label": "vague", "confidence": 0.8, "reason": "「問題」が具体的でない"}}"""

EXPAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10}
    },
    "required": ["queries"],
    "additionalProperties": False,
}
CLASSIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [label.value for label in QueryLabel]},
        "confidence": {"type": "number"},
        "reason": {"type": "string"},
    },
    "required": ["label", "confidence", "reason"],
    "additionalProperties": False,
}


class LLMExpander:
    """Expands a query into concrete ones with ``model`` (the prompt of ``000_…txt``); the rule
    expander answers whenever the model does not."""

    def __init__(
        self,
        model: ChatModel,
        *,
        fallback: Expander | None = None,
        timeout: float = 10.0,
        max_queries: int = 5,
        clock: Callable[[], datetime] | None = None,
        role: str = DEFAULT_ROLE,
        context: dict[str, str] | None = None,
        **pause: Unpack[PauseOptions],
    ) -> None:
        if not 1 <= max_queries <= 10:
            raise ValueError(f"max_queries must be 1..10, got {max_queries}")
        self.fallback = fallback or RuleExpander()
        self.max_queries = max_queries
        self.clock = clock or now_tokyo
        self.role = role
        self.context = dict(context or {})  # e.g. {"店舗": "新宿店", "ユーザー": "田中太郎"}
        self.last_source = ""  # "model" or "rules(<why>)": what answered the last call
        self._guard = ModelGuard(model, timeout=timeout, cache_size=256, **pause)

    @property
    def name(self) -> str:
        return f"llm:{self._guard.model.name}"

    def prompt(self, query: str, ctx: ExpandContext) -> str:
        now = ctx.now or self.clock()  # the search's own "now" (--now) first
        n = min(self.max_queries, ctx.max_queries)
        extra = "".join(f"- {k}: {v}\n" for k, v in self.context.items())
        week = resolve_dates("先週", now).range
        month = resolve_dates("先月", now).range
        query_date = f"- クエリの日付: {date_label(ctx.date_range)}\n" if ctx.date_range else ""
        return EXPAND_PROMPT.format(
            role=self.role,
            n=max(n, 3),
            today=now.date().isoformat(),
            weekday="月火水木金土日"[now.weekday()] + "曜日",
            extra=extra,
            yesterday=(now.date() - timedelta(days=1)).isoformat(),
            last_week=date_label(week) if week else "",
            last_month=date_label(month) if month else "",
            query_date=query_date,
            query=query,
        )

    def expand(self, query: str, ctx: ExpandContext) -> list[str]:
        n = min(self.max_queries, ctx.max_queries)
        prompt = self.prompt(query, ctx)
        queries, self.last_source = self._guard.answer(
            "expansion",
            ("expand", prompt, n),
            prompt,
            EXPAND_SCHEMA,
            lambda v: _queries(v, n),
            lambda: self.fallback.expand(query, ctx),
        )
        return queries


def _queries(value: Any, n: int) -> list[str]:
    items = value.get("queries") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise MalformedOutput("no list of queries")
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            text = " ".join(_CONTROL.sub(" ", item).split())[:MAX_QUERY_CHARS]
            if text and text not in out:
                out.append(text)
    if not out:
        raise MalformedOutput("no usable query")
    return out[:n]


class LLMClassifier:
    """Labels a query (clear / vague / manual / statistics / table / greeting) with ``model``;
    the rule classifier answers whenever the model does not."""

    def __init__(
        self,
        model: ChatModel,
        *,
        fallback: Classifier | None = None,
        timeout: float = 5.0,
        role: str = DEFAULT_ROLE,
        **pause: Unpack[PauseOptions],
    ) -> None:
        self.fallback = fallback or RuleClassifier()
        self.role = role
        self.last_source = ""
        self._guard = ModelGuard(model, timeout=timeout, cache_size=1024, **pause)

    def classify(self, query: str) -> Classification:
        prompt = CLASSIFY_PROMPT.format(role=self.role, query=query)
        result, self.last_source = self._guard.answer(
            "classification",
            ("classify", query),
            prompt,
            CLASSIFY_SCHEMA,
            _classification,
            lambda: self.fallback.classify(query),
        )
        return result


def _classification(value: Any) -> Classification:
    if not isinstance(value, dict):
        raise MalformedOutput("not an object")
    try:
        label = QueryLabel(str(value.get("label", "")).strip().lower())
    except ValueError:
        raise MalformedOutput(f"unknown label {value.get('label')!r}") from None
    raw = value.get("confidence", 0.7)
    confidence = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0.7
    reason = _CONTROL.sub(" ", str(value.get("reason") or ""))[:MAX_QUERY_CHARS]
    reasons = ("llm", reason) if reason else ("llm",)
    return Classification(label, min(max(confidence, 0.0), 1.0), reasons)


def use_model_for_search(
    client: Tansaku,
    model: ChatModel,
    *,
    expand: bool = True,
    classify: bool = True,
    timeout: float = 10.0,
    clock: Callable[[], datetime] | None = None,
    role: str = DEFAULT_ROLE,
    context: dict[str, str] | None = None,
) -> tuple[LLMExpander | None, LLMClassifier | None]:
    """Plug the LLM expander and/or classifier into every search of ``client``; the parts they
    replace become their fallbacks (an LLM part installed before is replaced, not wrapped).
    Returns what was installed."""
    services = client.services
    changes: dict[str, Any] = {}
    expander = classifier = None
    if expand:
        current = services.expander
        base = current.fallback if isinstance(current, LLMExpander) else current
        expander = LLMExpander(
            model, fallback=base, timeout=timeout, clock=clock, role=role, context=context
        )
        changes["expander"] = expander
    if classify:
        current_c = services.classifier
        base_c = current_c.fallback if isinstance(current_c, LLMClassifier) else current_c
        classifier = LLMClassifier(model, fallback=base_c, timeout=min(timeout, 5.0), role=role)
        changes["classifier"] = classifier
    swap = getattr(client, "with_services", None)
    if swap is not None:  # services replaced whole, atomically
        swap(**changes)
    else:
        for key, value in changes.items():
            setattr(services, key, value)
    return expander, classifier
