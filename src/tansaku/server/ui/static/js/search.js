// 検索テスト: POST /api/search with axis weights and fusion from the controls; per hit its
// rank and score on every axis, then the plan and the timings — in Japanese, the engine's own
// names (axes, modes, metadata keys, the plan's JSON) inside collapsed 「詳細」. 「AIで回答」
// asks the answer engine (POST /api/ask) over the collection just searched. Each axis's mode
// (キーワード一致 / 意味の近さ / 文字の並び) can be changed for the search.
import { api, citationList, clear, dateTime, el, loadCollections, num, recordHref, showError } from "./api.js";
import {
  FUSION_LABELS, MODE_LABELS, NORMALIZATION_LABELS, TIMING_LABELS, axisLabels, metaLabel,
  metaValue, queryTypeLabel,
} from "./labels.js";

const $ = (id) => document.getElementById(id);
const collection = $("collection");
const weights = $("weights");
const aiButton = $("ai-answer");
const aiResult = $("ai-result");
let axes = [];
let labels = {};
let searched = null; // {query, collection, now} of the results shown

const labelOf = (name, mode) => labels[name] || MODE_LABELS[mode] || "検索軸";

function details(...children) {
  return el("details", { class: "small more" }, el("summary", {}, "詳細"), ...children);
}

async function loadAxes() {
  clear(weights);
  axes = [];
  labels = {};
  if (!collection.value) return;
  try {
    const data = await api(`/api/collections/${encodeURIComponent(collection.value)}/config`);
    axes = data.config.axes || [];
    labels = axisLabels(axes);
    const fusion = data.config.fusion || {};
    $("rrf-k").value = fusion.k || 60;
    $("normalization").value = fusion.normalization || "max";
    $("dense-gate").value = fusion.dense_gate || 0;
    $("dense-length").value = fusion.dense_length || 0;
    if (data.config.search && data.config.search.top_k) $("top-k").value = data.config.search.top_k;
    for (const axis of axes) {
      const label = labelOf(axis.name, axis.mode);
      const on = el("input", { type: "checkbox", "data-axis": axis.name });
      on.checked = true;
      const value = el("output", {}, axis.weight.toFixed(2));
      const range = el("input", { type: "range", min: "0", max: "1", step: "0.01", value: axis.weight, "data-weight": axis.name, "aria-label": `${label} の重み` });
      range.addEventListener("input", () => { value.textContent = Number(range.value).toFixed(2); });
      const fields = axis.fields && axis.fields.length ? axis.fields.join("、") : "すべての項目";
      const mode = el("select", { "data-mode": axis.name, "aria-label": `${label} の検索方式` },
        Object.entries(MODE_LABELS).map(([m, text]) => el("option", { value: m, selected: m === axis.mode }, text)));
      weights.append(el("div", { class: "card axis" },
        el("label", { class: "inline" }, on, el("strong", {}, label)),
        el("div", { class: "row" }, range, value),
        el("label", { class: "small" }, "検索方式", mode),
        details(el("dl", { class: "axis-detail" },
          el("dt", {}, "軸の名前"), el("dd", {}, axis.name),
          el("dt", {}, "方式"), el("dd", {}, axis.mode),
          el("dt", {}, "対象の項目"), el("dd", { class: "fields" }, fields)))));
    }
  } catch (err) {
    showError(weights, err);
  }
}

function body() {
  const chosen = axes.filter((a) => weights.querySelector(`input[data-axis="${CSS.escape(a.name)}"]`).checked)
    .map((a) => ({ name: a.name, mode: weights.querySelector(`select[data-mode="${CSS.escape(a.name)}"]`).value, fields: a.fields || [],
      weight: Number(weights.querySelector(`input[data-weight="${CSS.escape(a.name)}"]`).value) }));
  const req = {
    query: $("query").value, collection: collection.value, top_k: Number($("top-k").value || 10),
    synonyms: $("synonyms").checked, dates: $("dates").checked, expand: $("expand").checked,
    retry: $("retry").checked, group_by_doc: $("group").checked,
  };
  if (chosen.length) req.axes = chosen;
  if ($("fusion").value) {
    req.fusion = { method: $("fusion").value, k: Number($("rrf-k").value || 60), normalization: $("normalization").value,
      dense_gate: Number($("dense-gate").value || 0), dense_length: Number($("dense-length").value || 0) };
  }
  if ($("min-score").value !== "") req.min_score = Number($("min-score").value);
  if ($("now").value.trim()) req.now = $("now").value.trim();
  return req;
}

function axisTable(hit, maxScores) {
  const names = axes.length ? axes.map((a) => a.name) : Object.keys(hit.axes || {});
  return el("div", { class: "scroll" }, el("table", { class: "axes" },
    el("thead", {}, el("tr", {}, ["検索軸", "順位", "スコア", ""].map((h) => el("th", {}, h)))),
    el("tbody", {}, names.map((name) => {
      const a = (hit.axes || {})[name];
      const label = el("td", {}, labelOf(name));
      if (!a) return el("tr", { "data-axis": name }, label, el("td", { class: "num muted" }, "—"), el("td", { class: "num muted" }, "圏外"), el("td", {}));
      const width = maxScores[name] ? Math.max(1, Math.round((a.score / maxScores[name]) * 100)) : 0;
      const bar = el("div", { class: "bar" });
      bar.style.width = `${width}%`;
      return el("tr", { "data-axis": name }, label, el("td", { class: "num rank" }, `${a.rank} 位`),
        el("td", { class: "num" }, a.score.toFixed(4)), el("td", { class: "small" }, bar));
    }))));
}

const TAGGED = ["date", "store", "section", "chapter", "category"];
const UNSHOWN = new Set([...TAGGED, "title", "source", "chunk_index"]);
const MORE_SHOWN = 12;

const clip = (t) => (t.length > 80 ? `${t.slice(0, 80)}…` : t);
const kvNode = (k, name, v) =>
  el("span", { class: "kv", "data-key": k }, el("span", { class: "muted" }, `${name}: `), clip(v));

/** The hit's other metadata: keys with a Japanese name as `名前: 値`; the rest (a CSV's mapped
 * columns named in English, ids) with the record's field and id inside 詳細. */
function metaLine(hit) {
  const rest = Object.entries(hit.metadata || {}).filter(([k, v]) => !UNSHOWN.has(k) && v !== null && v !== "");
  const named = rest.filter(([k]) => metaLabel(k));
  const other = rest.filter(([k]) => !metaLabel(k));
  const shown = named.slice(0, MORE_SHOWN);
  const raw = (v) => (Array.isArray(v) ? v.join("、") : typeof v === "object" ? JSON.stringify(v) : String(v));
  return el("div", { class: "small meta" },
    shown.map(([k, v]) => kvNode(k, metaLabel(k), metaValue(v))),
    named.length > MORE_SHOWN ? el("span", { class: "muted" }, `ほか ${named.length - MORE_SHOWN} 項目`) : null,
    details(el("div", { class: "meta" },
      el("span", { class: "kv" }, el("span", { class: "muted" }, "記録の項目: "), hit.field),
      el("span", { class: "kv" }, el("span", { class: "muted" }, "文書 ID: "), hit.doc_id),
      other.map(([k, v]) => kvNode(k, k, raw(v))))));
}

/** 「正しい結果はこれ」: the hit named as the result the search should put first — a 👎 on a
 * lower hit, a 👍 on the first — stored with the feedback, it becomes a judgement
 * (`tansaku feedback judgements`). */
function correctButton(queryId, hit, first) {
  const button = el("button", { type: "button", class: "small correct", "data-doc": hit.doc_id }, "正しい結果はこれ");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const rating = first ? 1 : -1;
      await api("/api/feedback", { method: "POST", json: { query_id: queryId, rating, correct_doc_id: hit.doc_id } });
      button.replaceWith(el("span", { class: "small ok" }, "正しい結果として記録しました(調整の判定に使われます)"));
    } catch (err) {
      button.disabled = false;
      showError($("error"), err);
    }
  });
  return button;
}

function hitNode(hit, i, maxScores, col, queryId) {
  const title = (hit.metadata && hit.metadata.title) || hit.doc_id;
  const meta = TAGGED.map((k) => hit.metadata && hit.metadata[k]).filter(Boolean);
  const text = hit.text.length > 260 ? `${hit.text.slice(0, 260)}…` : hit.text;
  return el("article", { class: "hit" },
    el("div", { class: "head" }, el("span", { class: "rank" }, `${i + 1}.`),
      el("a", { href: recordHref(col, hit.doc_id) }, title), el("span", {}, `スコア ${hit.score.toFixed(4)}`),
      meta.map((m) => el("span", { class: "tag" }, String(m))),
      hit.rerank_score !== undefined ? el("span", { class: "tag" }, `再ランク ${hit.rerank_score.toFixed(3)}`) : null),
    el("div", { class: "text" }, text),
    metaLine(hit),
    hit.matched_queries ? el("p", { class: "small muted" }, `一致したクエリ: ${hit.matched_queries.join(" / ")}`) : null,
    axisTable(hit, maxScores),
    queryId ? correctButton(queryId, hit, i === 0) : null);
}

function kv(label, value) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return null;
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return el("tr", {}, el("th", {}, label), el("td", {}, text));
}

const span = (r) => (r ? (r.from === r.to ? r.from : `${r.from || ""}〜${r.to || ""}`) : null);
const RETRY = ["なし(最初の条件で検索)", "1 段目(条件を広げて再検索)", "2 段目(さらに広げて再検索)"];
const MERGE = { hits: "一致したクエリの数と最高スコア", rrf: "順位の逆数和" };
const UNUSED = { filter: "指定した期間を優先", no_dates: "日付のある記録がありません" };

function dateText(f) {
  if (!f) return null;
  const from = f.source === "query" && f.expression ? `「${f.expression}」から` : "指定した期間";
  return `${span(f)}(${from})`;
}

function fusionText(f) {
  if (!f || !f.method) return null;
  if (f.method === "rrf") return `${FUSION_LABELS.rrf}(定数 ${f.k})`;
  const base = `${FUSION_LABELS[f.method] || "統合"}(${NORMALIZATION_LABELS[f.normalization] || "正規化"})`;
  const length = f.dense_length ? `、${f.dense_length} 語より短い記録ほど意味の軸を重く` : "";
  if (f.lexical_coverage === undefined || f.lexical_coverage === null) return base + length;
  const boost = 1 + (f.dense_gate || 0) * (1 - f.lexical_coverage);
  return `${base}、質問の語の ${Math.round(f.lexical_coverage * 100)}% が最上位の記録にあり、意味の軸を ${boost.toFixed(2)} 倍${length}`;
}

function planNode(plan, queryId) {
  const synonyms = Object.entries(plan.synonyms || {}).map(([k, v]) => `${k} → ${v.join("、")}`).join(" / ");
  const axesText = (plan.axes || []).map((a) => `${labelOf(a.name, a.mode)}(${a.query ? `「${a.query}」で、` : ""}重み ${a.weight}、候補 ${num(a.candidates)} 件)`).join("、");
  const expanded = plan.expanded_queries || [];
  const c = plan.classification;
  const unused = plan.date_unused ? `${span(plan.date_unused)}「${plan.date_unused.expression || ""}」(${UNUSED[plan.date_unused.reason] || "使いませんでした"})` : null;
  const rerank = plan.rerank ? (plan.rerank.applied ? "適用しました" : plan.rerank.reason) : null;
  const rows = [
    kv("正規化したクエリ", plan.normalized_query),
    kv("質問の種類", c ? `${queryTypeLabel(c.label)}(確信度 ${num(c.confidence * 100)}%)` : null),
    kv("展開したクエリ", expanded.length > 1 ? expanded.join(" / ") : null),
    kv("複数クエリのまとめ方", expanded.length > 1 ? MERGE[plan.merge] : null),
    kv("日付の絞り込み", dateText(plan.date_filter)), kv("使わなかった日付", unused),
    kv("基準日時", plan.now ? dateTime(plan.now) : null), kv("同義語", synonyms),
    kv("検索軸", axesText), kv("統合", fusionText(plan.fusion)), kv("最低スコア", plan.min_score),
    kv("0件時の再試行", RETRY[plan.retry_stage] || `${plan.retry_stage} 段目`), kv("件数", plan.top_k),
    kv("再ランク", rerank),
  ];
  const inner = [
    kv("検索語(形態素解析の結果)", (plan.query_terms || []).join(" ")),
    kv("検索 ID(query_id)", queryId),
  ];
  return [el("div", { class: "scroll" }, el("table", { class: "plan" }, el("tbody", {}, rows))),
    details(el("div", { class: "scroll" }, el("table", { class: "plan" }, el("tbody", {}, inner))),
      el("pre", { class: "light" }, JSON.stringify(plan, null, 2)))];
}

function timingsNode(timings) {
  const entries = Object.entries(timings || {});
  return el("table", {}, el("tbody", {}, entries.map(([k, v]) =>
    el("tr", { "data-stage": k }, el("th", {}, TIMING_LABELS[k] || "その他"), el("td", { class: "num" }, `${num(v, 2)} ms`)))));
}

function answerNode(data) {
  return [
    el("div", { class: "answer" }, data.answer || ""),
    data.unanswered ? el("p", { class: "small warn" }, "裏付けが見つからなかったため、未回答ログに記録しました。") : null,
    citationList(data.citations),
  ].filter(Boolean);
}

aiButton.addEventListener("click", async () => {
  if (!searched) return;
  const ask = { question: searched.query, collections: [searched.collection] };
  if (searched.now) ask.now = searched.now;
  aiButton.disabled = true;
  aiResult.setAttribute("aria-busy", "true");
  clear(aiResult).append(el("p", { class: "pending muted" }, "回答を作成しています"));
  try {
    const data = await api("/api/ask", { method: "POST", json: ask });
    clear(aiResult).append(...answerNode(data));
  } catch (err) {
    showError(aiResult, new Error(`回答を作成できませんでした。${err.message}`));
  } finally {
    aiButton.disabled = false;
    aiResult.removeAttribute("aria-busy");
  }
});

/** The zero-hit suggestion: its message, each rewording as a button that searches it, what
 * to change and (folded) what the search already tried. */
function suggestionNode(s) {
  if (!s) return el("p", { class: "note" }, "ヒットがありません(0件)。軸の重みや最低スコアを変えて試してください。");
  const retry = (q) => {
    const b = el("button", { type: "button", class: "suggested" }, q);
    b.addEventListener("click", () => { $("query").value = q; $("search-form").requestSubmit(); });
    return b;
  };
  return el("div", { class: "note suggestion" },
    el("p", {}, s.message),
    s.queries.length ? el("div", { class: "row" }, el("span", { class: "small" }, "言い換えて検索:"), s.queries.map(retry)) : null,
    s.tips.length ? el("ul", { class: "small" }, s.tips.map((t) => el("li", {}, t))) : null,
    s.tried.length ? el("details", {}, el("summary", { class: "small" }, "この検索で試したこと"),
      el("ul", { class: "small" }, s.tried.map((t) => el("li", {}, t)))) : null);
}

$("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clear($("error"));
  $("run").disabled = true;
  const req = body();
  try {
    const data = await api("/api/search", { method: "POST", json: req });
    searched = { query: req.query, collection: req.collection, now: req.now };
    $("result").classList.remove("hidden");
    $("result-summary").textContent = `${num(data.hits.length)} 件`;
    const maxScores = {};
    for (const h of data.hits) for (const [n, a] of Object.entries(h.axes || {})) maxScores[n] = Math.max(maxScores[n] || 0, a.score);
    clear($("hits"));
    if (!data.hits.length) $("hits").append(suggestionNode(data.suggestion));
    data.hits.forEach((h, i) => $("hits").append(hitNode(h, i, maxScores, req.collection, data.query_id)));
    clear(aiResult);
    clear($("plan")).append(...planNode(data.plan || {}, data.query_id));
    clear($("timings")).append(timingsNode(data.timings_ms));
  } catch (err) {
    showError($("error"), err);
  } finally {
    $("run").disabled = false;
  }
});

collection.addEventListener("change", loadAxes);
const params = new URLSearchParams(location.search);
await loadCollections(collection).catch((err) => showError($("error"), err));
if (params.get("collection")) collection.value = params.get("collection");
if (params.get("q")) $("query").value = params.get("q");
await loadAxes();
