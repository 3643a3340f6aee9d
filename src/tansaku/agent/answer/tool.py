"""The offline answer as a tool (``answer_question``): for MCP clients and LangChain agents
that want tansaku's grounded answer rather than search results. Bound to the same scope as the
other tools — the team and the collections come from whoever built the toolset."""

from __future__ import annotations

from typing import Annotated, Any

from tansaku.tools.spec import ToolScope, ToolSpec, tool

ANSWER = (
    "このチームのコレクション(と登録された表)を検索し、質問に出典つきで答えます"
    "(言語モデルを使わず、記録の文をそのまま引用する回答)。答える記録がなければ"
    "「見つかりませんでした」と返し、未回答の質問として記録します。\n"
    "使う場面: 社内の記録・マニュアル・FAQ・ノート・表にある事実を聞かれたとき。\n"
    "使わない場面: 記録の一覧や件数そのものが欲しいとき(検索・集計のツール)。\n"
    "引数: question(質問の文)。\n"
    '例: {"question": "有給休暇の申請方法は？"} / {"question": "先月のクレーム傾向を教えて"} / '
    '{"question": "日曜日に開いている店舗は?"}'
)


@tool("answer_question", ANSWER)
def answer_question(scope: ToolScope, question: Annotated[str, "質問(日本語)"]) -> dict[str, Any]:
    from tansaku.agent import check_question, unanswered_log
    from tansaku.agent.offline import answer_offline
    from tansaku.tools import toolset

    check_question(question)
    tools = toolset(
        scope.client,
        team=scope.team,
        collections=scope.collections,
        now=scope.now,
        tables=scope.tables,
        store=scope.store,
    )
    answer = answer_offline(question, tools, unanswered=unanswered_log(scope.client))
    return {
        "answer": answer.text,
        "citations": [c.to_dict() for c in answer.citations],
        "unanswered": answer.unanswered,
    }


def with_answer_tool(specs: list[ToolSpec]) -> list[ToolSpec]:
    """``specs`` and ``answer_question``."""
    return [*specs, answer_question]
