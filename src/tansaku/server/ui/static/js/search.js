// 検索テスト: POST /api/search with axis weights and fusion from the controls; per hit its
// rank and score on every axis, then the plan and the timings.
import { api, clear, el, loadCollections, num, recordHref, showError } from "./api.js";

const $ = (id) => document.getElementById(id);
const collection = $("collection");
const weights = $("weights");
let axes = [];

async function loadAxes() {
  clear(weights);
  axes = [];
  if (!collection.value) return;
  try {
    const data = await api(`/api/collections/${encodeURIComponent(collection.value)}/config`);
    axes = data.config.axes || [];
    const fusion = data.config.fusion || {};
    $("rrf-k").value = fusion.k || 60;
    $("normalization").value = fusion.normalization || "max";
    if (data.config.search && data.config.search.top_k) $("top-k").value = data.config.search.top_k;
    for (const axis of axes) {
      const on = el("input", { type: "checkbox", "data-axis": axis.name });
      on.checked = true;
      const value = el("output", {}, axis.weight.toFixed(2));
      const range = el("input", { type: "range", min: "0", max: "1", step: "0.01", value: axis.weight, "data-weight": axis.name, "aria-label": `${axis.name} の重み` });
      range.addEventListener("input", () => { value.textContent = Number(range.value).toFixed(2); });
      const fields = axis.fields && axis.fields.length ? `(${axis.fields.join(", ")})` : "";
      weights.append(el("div", { class: "card" },
        el("label", { class: "inline" }, on, el("strong", {}, axis.name), el("span", { class: "tag" }, axis.mode), fields),
        el("div", { class: "row" }, range, value)));
    }
  } catch (err) {
    showError(weights, err);
  }
}

function body() {
  const chosen = axes.filter((a) => weights.querySelector(`input[data-axis="${CSS.escape(a.name)}"]`).checked)
    .map((a) => ({ name: a.name, mode: a.mode, fields: a.fields || [],
      weight: Number(weights.querySelector(`input[data-weight="${CSS.escape(a.name)}"]`).value) }));
  const req = {
    query: $("query").value, collection: collection.value, top_k: Number($("top-k").value || 10),
    synonyms: $("synonyms").checked, dates: $("dates").checked, expand: $("expand").checked,
    retry: $("retry").checked, group_by_doc: $("group").checked,
  };
  if (chosen.length) req.axes = chosen;
  if ($("fusion").value) {
    req.fusion = { method: $("fusion").value, k: Number($("rrf-k").value || 60), normalization: $("normalization").value };
  }
  if ($("min-score").value !== "") req.min_score = Number($("min-score").value);
  if ($("now").value.trim()) req.now = $("now").value.trim();
  return req;
}

function axisTable(hit, maxScores) {
  const names = axes.length ? axes.map((a) => a.name) : Object.keys(hit.axes || {});
  return el("table", { class: "axes" },
    el("thead", {}, el("tr", {}, ["軸", "順位", "スコア", ""].map((h) => el("th", {}, h)))),
    el("tbody", {}, names.map((name) => {
      const a = (hit.axes || {})[name];
      if (!a) return el("tr", { "data-axis": name }, el("td", {}, name), el("td", { class: "num muted" }, "—"), el("td", { class: "num muted" }, "圏外"), el("td", {}));
      const width = maxScores[name] ? Math.max(1, Math.round((a.score / maxScores[name]) * 100)) : 0;
      const bar = el("div", { class: "bar" });
      bar.style.width = `${width}%`;
      return el("tr", { "data-axis": name }, el("td", {}, name), el("td", { class: "num rank" }, `${a.rank} 位`),
        el("td", { class: "num" }, a.score.toFixed(4)), el("td", { class: "small" }, bar));
    })));
}

const TAGGED = ["date", "store", "section", "chapter", "category"];
const UNSHOWN = new Set([...TAGGED, "title", "source", "chunk_index"]);
const MORE_SHOWN = 12;

/** The hit's other metadata (a CSV's mapped columns, a report's author …) as `key: value`. */
function metaLine(metadata) {
  const rest = Object.entries(metadata || {}).filter(([k, v]) => !UNSHOWN.has(k) && v !== null && v !== "");
  if (!rest.length) return null;
  const text = (v) => { const t = Array.isArray(v) ? v.join("、") : typeof v === "object" ? JSON.stringify(v) : String(v); return t.length > 80 ? `${t.slice(0, 80)}…` : t; };
  return el("p", { class: "small meta" }, rest.slice(0, MORE_SHOWN).map(([k, v]) =>
    el("span", { class: "kv", "data-key": k }, el("span", { class: "muted" }, `${k}: `), text(v))),
    rest.length > MORE_SHOWN ? el("span", { class: "muted" }, `ほか ${rest.length - MORE_SHOWN} 項目`) : null);
}

function hitNode(hit, i, maxScores, col) {
  const title = (hit.metadata && hit.metadata.title) || hit.doc_id;
  const meta = TAGGED.map((k) => hit.metadata && hit.metadata[k]).filter(Boolean);
  const text = hit.text.length > 260 ? `${hit.text.slice(0, 260)}…` : hit.text;
  return el("article", { class: "hit" },
    el("div", { class: "head" }, el("span", { class: "rank" }, `${i + 1}.`),
      el("a", { href: recordHref(col, hit.doc_id) }, title), el("span", {}, `スコア ${hit.score.toFixed(4)}`),
      el("span", { class: "tag" }, hit.field), meta.map((m) => el("span", { class: "tag" }, String(m))),
      hit.rerank_score !== undefined ? el("span", { class: "tag" }, `再ランク ${hit.rerank_score.toFixed(3)}`) : null),
    el("div", { class: "text" }, text),
    metaLine(hit.metadata),
    hit.matched_queries ? el("p", { class: "small muted" }, `一致したクエリ: ${hit.matched_queries.join(" / ")}`) : null,
    axisTable(hit, maxScores));
}

function kv(label, value) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return null;
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return el("tr", {}, el("th", {}, label), el("td", {}, text));
}

function planNode(plan) {
  const synonyms = Object.entries(plan.synonyms || {}).map(([k, v]) => `${k} → ${v.join("、")}`).join(" / ");
  const axesText = (plan.axes || []).map((a) => `${a.name}(${a.mode}, 重み ${a.weight}, 候補 ${a.candidates ?? "—"})`).join("、");
  const rows = [
    kv("正規化したクエリ", plan.normalized_query),
    kv("質問の種類", plan.classification ? `${plan.classification.label}(確信度 ${plan.classification.confidence})` : null),
    kv("展開したクエリ", (plan.expanded_queries || []).map((q) => (typeof q === "string" ? q : q.query || JSON.stringify(q))).join(" / ")),
    kv("日付の範囲", plan.date_range), kv("日付の絞り込み", plan.date_filter), kv("使わなかった日付", plan.date_unused),
    kv("基準日時", plan.now), kv("同義語", synonyms), kv("検索語(形態素)", (plan.query_terms || []).join(" ")),
    kv("検索軸", axesText), kv("統合", plan.fusion), kv("最低スコア", plan.min_score),
    kv("再試行の段階", plan.retry_stage), kv("件数", plan.top_k),
  ];
  return [el("table", {}, el("tbody", {}, rows)),
    el("details", {}, el("summary", { class: "small" }, "プランの JSON"), el("pre", { class: "light" }, JSON.stringify(plan, null, 2)))];
}

function timingsNode(timings) {
  const entries = Object.entries(timings || {});
  return el("table", {}, el("tbody", {}, entries.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", { class: "num" }, `${num(v, 2)} ms`)))));
}

$("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clear($("error"));
  $("run").disabled = true;
  const col = collection.value;
  try {
    const data = await api("/api/search", { method: "POST", json: body() });
    $("result").classList.remove("hidden");
    $("result-summary").textContent = `${data.hits.length} 件(query_id ${data.query_id.slice(0, 8)}…)`;
    const maxScores = {};
    for (const h of data.hits) for (const [n, a] of Object.entries(h.axes || {})) maxScores[n] = Math.max(maxScores[n] || 0, a.score);
    clear($("hits"));
    if (!data.hits.length) $("hits").append(el("p", { class: "note" }, "ヒットがありません(0件)。軸の重みや最低スコアを変えて試してください。"));
    data.hits.forEach((h, i) => $("hits").append(hitNode(h, i, maxScores, col)));
    clear($("plan")).append(...planNode(data.plan || {}));
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
