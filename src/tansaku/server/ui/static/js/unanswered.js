// 未回答ログ: GET /api/unanswered with filters, POST …/resolve, CSV from /unanswered.csv.
import { api, clear, dateTime, el, loadCollections, num, showError, toast } from "./api.js";
import { toolLabel } from "./labels.js";

const PAGE = 50;
const list = document.getElementById("list");
const summary = document.getElementById("summary");
const csv = document.getElementById("csv");
const fields = {
  collection: document.getElementById("f-collection"),
  from: document.getElementById("f-from"),
  to: document.getElementById("f-to"),
  resolved: document.getElementById("f-resolved"),
};
let offset = 0;
let total = 0;

function query() {
  const q = new URLSearchParams();
  for (const [name, input] of Object.entries(fields)) if (input.value) q.set(name, input.value);
  return q;
}

async function resolve(item, button, note) {
  button.disabled = true;
  try {
    await api(`/api/unanswered/${item.id}/resolve`, { method: "POST", json: { resolution: note } });
    toast("解決済みにしました");
    await load();
  } catch (err) {
    button.disabled = false;
    toast(err.message, true);
  }
}

/** The tools tried, as a person names them (each once: 「店舗の表を検索」 may run many times). */
const toolNames = (tools) => [...new Set(tools.map(toolLabel))].join("、");

function row(item) {
  let action;
  if (item.resolved) {
    action = el("span", { class: "ok small" }, `解決済み ${dateTime(item.resolved_at)}`,
      item.resolution ? el("div", { class: "muted" }, item.resolution) : null);
  } else {
    const note = el("input", { type: "text", maxlength: "1000", placeholder: "対応内容(任意)", "aria-label": "対応内容" });
    const button = el("button", { type: "button", class: "resolve" }, "解決済みにする");
    button.addEventListener("click", () => resolve(item, button, note.value.trim()));
    action = el("div", { class: "stack" }, note, button);
  }
  return el("tr", { "data-id": item.id },
    el("td", { class: "small" }, dateTime(item.asked_at)),
    el("td", {}, el("span", { class: "tag" }, item.collection || "—")),
    el("td", { class: "question" }, item.question),
    el("td", { class: "small muted" }, item.reason || "", (item.tools || []).length ? el("div", { class: "tools" }, toolNames(item.tools)) : null),
    el("td", {}, action));
}

async function load() {
  const q = query();
  csv.href = `/unanswered.csv?${q}`;
  q.set("offset", offset);
  q.set("limit", PAGE);
  try {
    const data = await api(`/api/unanswered?${q}`);
    total = data.total;
    summary.textContent = total ? `${num(total)} 件中 ${num(offset + 1)}〜${num(offset + data.unanswered.length)} 件` : "該当する質問はありません";
    clear(list);
    if (data.unanswered.length) {
      list.append(el("table", {},
        el("thead", {}, el("tr", {}, ["日時", "コレクション", "質問", "理由・使ったツール", ""].map((h) => el("th", {}, h)))),
        el("tbody", {}, data.unanswered.map(row))));
    }
    document.getElementById("prev").disabled = offset === 0;
    document.getElementById("next").disabled = offset + PAGE >= total;
  } catch (err) {
    showError(list, err);
  }
}

document.getElementById("filter").addEventListener("submit", (e) => { e.preventDefault(); offset = 0; load(); });
document.getElementById("prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); load(); });
document.getElementById("next").addEventListener("click", () => { offset += PAGE; load(); });
loadCollections(fields.collection, { empty: "すべて" }).catch(() => {}).finally(load);
