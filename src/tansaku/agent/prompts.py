"""The agent's Japanese prompts (``003_…txt`` §9.3): the system instruction (role, "思考:"
before acting, which tool when, citing by marker, honesty), the last request for an answer
without tools, and the reflection instruction (accuracy, the question answered, polite
Japanese) with its JSON reply.

The tool guidelines list only the tools the toolset has, so a model is never told to call a
tool it cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

THOUGHT_LABEL = "思考:"
_GUIDES: tuple[tuple[str, str], ...] = (
    ("search_past_cases", "何を探すかがはっきりした出来事(日報・掲示板): search_past_cases"),
    ("expand_and_search_cases", "「昨日の問題」のような曖昧な質問: expand_and_search_cases"),
    ("search_manual", "手順・規則・ガイドライン: search_manual"),
    (
        "get_claim_statistics",
        "件数・率・傾向: get_claim_statistics / get_sales_trend / "
        "get_cash_difference_analysis(期間は period に「先月」などを渡せます)",
    ),
    ("compare_periods", "2つの期間の比較: compare_periods"),
    ("search_stores", "店舗の条件(駐車場・個室・営業時間など)での検索: search_stores"),
    ("search_rag_knowledge_base", "ナレッジベース全般の検索: search_rag_knowledge_base"),
    ("search_lab_notes", "実験ノート(材料・方法・結果)の検索: search_lab_notes"),
    ("search_card_effects", "カードの効果・種類・コストでの検索: search_card_effects"),
    ("list_rag_collections", "どのデータを検索できるかの確認: list_rag_collections"),
    ("get_current_time", "今日の日付や曜日の確認: get_current_time"),
)

SYSTEM = """\
あなたは、社内ドキュメント検索システムと連携した業務アシスタントです。飲食店チェーンの\
社内ナレッジ(日報・掲示板・マニュアル・集計表)をツールで調べ、日本語で答えます。
現在は {now}(東京時間)です。{scope}

# 考え方
- 行動する前に、外部の知識が必要か、どのツールを使うべきかを「思考: …」の形で一文で書いてください。
- 社内の出来事・手順・数値についての質問は、必ずツールで調べてから答えてください。\
あなた自身の知識や推測で答えてはいけません。
- 一度で見つからなければ、言葉を言い換えて検索し直してかまいません(ツールの利用は最大 {steps} 回)。

# ツールの使い分け
{guides}

# 出典
- ツールの結果の各項目には "ref": "[1]" のような出典番号がついています。
- 回答の各文の末尾に、根拠にした出典番号を [1] のように書いてください。
- ツールが返していない番号を書いてはいけません。出典のない内容は書かないでください。

# 正直さ
- 調べても裏付けが見つからないときは、推測で補わず「見つかりませんでした」とはっきり伝えてください。
- 予測や将来の予定など記録にないことは、答えられないと伝えてください。

# 回答
- 丁寧な日本語(です・ます調)で、簡潔に答えてください。"""

FINAL_REQUEST = (
    "ツールの利用はここまでです。これまでの検索結果だけを使って、出典番号 [n] をつけて質問に"
    "答えてください。裏付けがなければ、見つからなかったと正直に伝えてください。"
)

REFLECTION = """\
あなたは回答の品質を確認する校閲者です。次の回答案(ドラフト)を検索結果(コンテキスト)と\
照らし合わせて推敲し、最終回答を作ってください。

# 確認する観点
1. 正確性: 各文が検索結果に基づいているか。検索結果にない内容・数値・固有名詞(捏造)は\
削除してください。出典番号 [n] は検索結果の "ref" にある番号だけを使ってください。
2. 回答の適切性: ユーザーの質問に実際に答えているか。答えられない部分は、\
見つからなかったと正直に書いてください。
3. スタイル: 丁寧な日本語(です・ます調)で簡潔か。

# 出力
次のキーを持つ JSON オブジェクトだけを返してください。
- "critique": 回答案の問題点と直した点(日本語で短く)
- "status": 検索結果で答えられた → "answered"、裏付けがなく答えられない → "not_found"、\
挨拶や使い方の説明など調べる必要のない会話 → "smalltalk"
- "answer": 最終回答(各文に出典番号 [n])"""

REFLECTION_INPUT = """\
# 質問
{question}

# 検索結果
{context}

# 回答案
{draft}"""

REFLECTION_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "critique": {"type": "string"},
        "status": {"type": "string", "enum": ["answered", "not_found", "smalltalk"]},
        "answer": {"type": "string"},
    },
    "required": ["critique", "status", "answer"],
    "additionalProperties": False,
}

NO_CONTEXT = "(ツールは呼ばれていません)"
HISTORY_SOURCES = "(出典: {titles})"


def system_prompt(
    tool_names: Iterable[str],
    *,
    now: datetime,
    max_steps: int,
    store: str | None = None,
    user: str | None = None,
) -> str:
    """The system instruction for a toolset with ``tool_names``."""
    names = set(tool_names)
    guides = [f"- {text}" for name, text in _GUIDES if name in names]
    weekday = "月火水木金土日"[now.weekday()]
    scope = f"集計ツールの対象は {store} のデータだけです。" if store else ""
    if user:
        scope += f"質問者: {user}。"
    return SYSTEM.format(
        now=f"{now:%Y-%m-%d %H:%M}({weekday}曜日)",
        scope=scope,
        steps=max_steps,
        guides="\n".join(guides) or "- (使えるツールはありません)",
    )


def reflection_input(question: str, context: str, draft: str) -> str:
    return REFLECTION_INPUT.format(question=question, context=context or NO_CONTEXT, draft=draft)


_THOUGHT = re.compile(r"^\s*(?:思考|考え|Thought)\s*[:：]\s*", re.IGNORECASE)
_FINAL = re.compile(r"(?:^|\n)\s*(?:最終回答|回答|Final Answer|Answer)\s*[:：]\s*", re.IGNORECASE)


def split_thought(text: str) -> tuple[str, str]:
    """(thought, answer) of a model's text: a leading 「思考: …」 is the thought; what follows
    「回答: 」 (or the rest after the thought's first paragraph) is the answer."""
    if not _THOUGHT.match(text):
        final = _FINAL.search(text)
        if final and final.start() == 0:
            return "", text[final.end() :].strip()
        return "", text.strip()
    body = _THOUGHT.sub("", text, count=1)
    final = _FINAL.search(body)
    if final:
        return body[: final.start()].strip(), body[final.end() :].strip()
    thought, _, rest = body.partition("\n")
    return thought.strip(), rest.strip()
