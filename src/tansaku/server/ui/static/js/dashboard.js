// ダッシュボード: GET /api/feedback/stats (totals, rates, daily series, top zero-hit queries,
// top negative terms) and GET /api/unanswered (still open); charts drawn as SVG elements.
// 0 件率 = searches that found nothing / searches (as /metrics); questions the agent could not
// answer are the 未回答率 (unanswered / questions), never counted as zero hits.
import { api, clear, el, num, pct, showError } from "./api.js";
import { queryTypeLabel } from "./labels.js";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

const tokyoDay = (date) => new Intl.DateTimeFormat("sv-SE", { timeZone: "Asia/Tokyo" }).format(date);

function daysBack(n) {
  const out = [];
  const now = Date.now();
  for (let i = n - 1; i >= 0; i -= 1) out.push(tokyoDay(new Date(now - i * 86400000)));
  return out;
}

/** Bars for `bars`, a line for `line` (same scale), one slot per day. */
function chart(days, bars, line, label) {
  const W = 720, H = 180, L = 34, B = 22, T = 10;
  const top = Math.max(1, ...bars, ...(line || []));
  const slot = (W - L - 6) / days.length;
  const y = (v) => H - B - ((H - B - T) * v) / top;
  const root = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
  root.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - 4, y2: H - B }));
  root.append(svg("text", { x: 2, y: T + 8 }, num(top)), svg("text", { x: 2, y: H - B }, "0"));
  days.forEach((d, i) => {
    const h = H - B - y(bars[i]);
    if (bars[i] > 0) {
      const bar = svg("rect", { class: "bar1", x: L + i * slot + slot * 0.15, y: y(bars[i]), width: Math.max(1, slot * 0.7), height: h });
      bar.append(svg("title", {}, `${d}: ${bars[i]}`));
      root.append(bar);
    }
    const every = Math.ceil(days.length / 8);
    if (i % every === 0) root.append(svg("text", { x: L + i * slot, y: H - 6 }, d.slice(5)));
  });
  if (line) {
    const points = line.map((v, i) => `${L + i * slot + slot / 2},${y(v)}`).join(" ");
    root.append(svg("polyline", { class: "l2", points }));
  }
  return root;
}

function card(value, label) {
  return el("div", { class: "card" }, el("div", { class: "num" }, value), el("div", { class: "label" }, label));
}

function rankTable(rows, head) {
  if (!rows.length) return el("p", { class: "muted small" }, "まだありません");
  return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c, i) => el("td", { class: i ? "num" : "" }, c))))));
}

async function load() {
  clear($("error"));
  const n = Number($("days").value);
  const days = daysBack(n);
  try {
    const [stats, open] = await Promise.all([
      api(`/api/feedback/stats?from=${days[0]}&to=${days[days.length - 1]}`),
      api("/api/unanswered?resolved=false&limit=1"),
    ]);
    const daily = Object.fromEntries((stats.daily || []).map((d) => [d.date, d]));
    const pick = (k) => days.map((d) => (daily[d] ? daily[d][k] : 0));
    clear($("cards")).append(
      card(num(stats.searches), "検索数"),
      card(pct(stats.zero_hit_rate), `0 件率(検索 ${num(stats.zero_hit)} 件がヒットなし)`),
      card(num(stats.questions), "質問数(エージェント対話)"),
      card(pct(stats.unanswered_rate), `未回答率(${num(stats.unanswered)} 問に答えられず)`),
      card(num(stats.feedback), `評価数(👍 ${num(stats.positive)} / 👎 ${num(stats.negative)})`),
      card(pct(stats.negative_rate), "👎 率"),
      card(num(open.total), "未解決の未回答(全期間)"));
    clear($("chart-searches")).append(chart(days, pick("searches"), pick("zero_hit"), "検索数と0件"));
    clear($("chart-feedback")).append(chart(days, pick("feedback"), pick("negative"), "評価数と👎"));
    clear($("chart-unanswered")).append(chart(days, pick("questions"), pick("unanswered"), "質問数と未回答"));
    clear($("zero")).append(rankTable((stats.top_zero_hit_queries || []).map((q) => [q.query, num(q.count)]), ["クエリ", "回数"]));
    clear($("terms")).append(rankTable((stats.top_negative_terms || []).map((t) => [t.term, num(t.count)]), ["語", "回数"]));
    clear($("types")).append(rankTable((stats.by_query_type || []).map((t) => [queryTypeLabel(t.query_type), num(t.searches), pct(t.zero_hit_rate), num(t.feedback), pct(t.negative_rate)]),
      ["種類", "検索数", "0 件率", "評価数", "👎 率"]));
  } catch (err) {
    showError($("error"), err);
  }
}

$("period").addEventListener("submit", (e) => { e.preventDefault(); load(); });
load();
