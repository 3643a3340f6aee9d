// Japanese words for what the engine names in English (tool names, axis modes, query types,
// timing stages, metadata keys). The pages show these; the English names stay in the data and
// appear only inside a collapsed 「詳細」. TOOL_LABELS mirrors tansaku.agent.result_text
// (tests/ui/test_labels.py keeps the two lists in step).

export const TOOL_LABELS = {
  search_collections: "コレクションを検索",
  search_past_cases: "日報・掲示板を検索",
  expand_and_search_cases: "言い換えて日報・掲示板を検索",
  search_manual: "マニュアルを検索",
  search_rag_knowledge_base: "ナレッジを検索",
  search_lab_notes: "実験ノートを検索",
  search_card_effects: "カードを検索",
  list_rag_collections: "コレクションの一覧",
  get_current_time: "現在の日時",
  get_claim_statistics: "クレームの集計",
  get_claim_breakdown: "クレームの内訳",
  get_sales_trend: "売上の推移",
  get_cash_difference_analysis: "現金過不足の集計",
  compare_periods: "期間の比較",
  search_stores: "店舗の表を検索",
  search_events: "イベントの表を検索",
  answer_question: "質問に回答",
  statistics: "日報の集計",
};

/** A tool's name for a person; an unknown tool is 「ツール」 (its name stays in 詳細). */
export const toolLabel = (name) => TOOL_LABELS[name] || "ツール";

export const MODE_LABELS = { bm25: "キーワード一致", dense: "意味の近さ", bigram: "文字の並び" };

/** Each axis's label: its mode in Japanese, numbered when several axes share a mode
 * (意味の近さ 1, 意味の近さ 2). Returns {axisName: label}. */
export function axisLabels(axes) {
  const total = {};
  for (const a of axes) total[a.mode] = (total[a.mode] || 0) + 1;
  const seen = {};
  const out = {};
  for (const a of axes) {
    seen[a.mode] = (seen[a.mode] || 0) + 1;
    const base = MODE_LABELS[a.mode] || "検索軸";
    out[a.name] = total[a.mode] > 1 ? `${base} ${seen[a.mode]}` : base;
  }
  return out;
}

export const QUERY_TYPE_LABELS = {
  clear: "具体的な質問",
  vague: "あいまいな質問",
  manual: "手順・決まりの質問",
  statistics: "集計の質問",
  table: "表の質問",
  greeting: "あいさつ",
  ask: "エージェント対話の回答",
};

export const queryTypeLabel = (type) => (type ? QUERY_TYPE_LABELS[type] || "その他" : "不明");

export const FUSION_LABELS = { linear: "重みつきスコア和", rrf: "順位の逆数和" };
export const NORMALIZATION_LABELS = { max: "最大値で割る", minmax: "最小〜最大を 0〜1 に", zscore: "平均からの隔たり" };

export const TIMING_LABELS = {
  analyze: "形態素解析", embed: "ベクトル化", retrieve: "候補の検索", fuse: "統合",
  merge: "クエリごとの結果の統合", read: "記録の読み出し", rerank: "再ランク", total: "合計",
};

/** Metadata keys with a Japanese name. A key written in Japanese is the user's own word and
 * shown as it is; other keys are shown only inside 詳細. */
export const META_LABELS = {
  source_type: "種類", author: "記入者", claim: "クレーム", sales: "売上", customers: "客数",
  cash_difference: "現金過不足", weather: "天気", class: "クラス", type: "タイプ", cost: "コスト",
  rarity: "レアリティ", attack: "攻撃力", life: "体力", tags: "タグ", role: "役割",
  store_id: "店舗番号", comments: "コメント数", likes: "いいね", page: "ページ",
  name: "名前", status: "状態", priority: "優先度", department: "部署", updated: "更新日",
  created: "作成日",
};

const META_VALUES = {
  daily_report: "日報", bbs_post: "掲示板の投稿", bbs_comment: "掲示板のコメント",
  manual: "マニュアル", note: "実験ノート", card: "カード", faq: "よくある質問",
};

/** A metadata value as a person reads it: true/false as あり/なし, numbers with separators,
 * known type codes in Japanese, lists joined with 、. */
export function metaValue(value) {
  if (value === true) return "あり";
  if (value === false) return "なし";
  if (typeof value === "number") return value.toLocaleString("ja-JP");
  if (Array.isArray(value)) return value.map(metaValue).join("、");
  if (value && typeof value === "object") return JSON.stringify(value);
  const text = String(value);
  return META_VALUES[text] || text;
}

const JAPANESE = /[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/;

/** The label of a metadata key, or null when it has none (shown only inside 詳細). */
export const metaLabel = (key) => META_LABELS[key] || (JAPANESE.test(key) ? key : null);
