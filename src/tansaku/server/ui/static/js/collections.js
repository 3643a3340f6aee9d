// コレクション管理: GET/POST/DELETE /api/collections (delete after typing the name),
// GET …/records (paged, searchable) and …/config, POST …/{name}/merge, POST …/reset (after
// typing the team's name).
import { api, clear, el, num, recordHref, showError, toast } from "./api.js";

const PAGE = 20;
const list = document.getElementById("list");
const detail = document.getElementById("detail");
const records = document.getElementById("records");
const dialog = document.getElementById("confirm");
const confirmName = document.getElementById("confirm-name");
const confirmOk = document.getElementById("confirm-ok");
let current = null;
let offset = 0;
let pending = null;
const mergeSources = document.getElementById("merge-sources");

function askDelete(name) {
  pending = name;
  document.getElementById("confirm-text").textContent =
    `「${name}」のこのチームの記録をすべて削除します。元に戻せません。`;
  confirmName.value = "";
  confirmOk.disabled = true;
  dialog.classList.remove("hidden");
  confirmName.focus();
}

function closeDialog() {
  dialog.classList.add("hidden");
  pending = null;
}

confirmName.addEventListener("input", () => { confirmOk.disabled = confirmName.value !== pending; });
document.getElementById("confirm-cancel").addEventListener("click", closeDialog);
dialog.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDialog(); });
confirmOk.addEventListener("click", async () => {
  const name = pending;
  confirmOk.disabled = true;
  try {
    await api(`/api/collections/${encodeURIComponent(name)}`, { method: "DELETE" });
    closeDialog();
    toast(`コレクション「${name}」を削除しました`);
    if (current === name) { current = null; detail.classList.add("hidden"); }
    await loadList();
  } catch (err) {
    confirmOk.disabled = false;
    toast(err.message, true);
  }
});

function row(c) {
  const browse = el("button", { type: "button" }, "記録を見る");
  browse.addEventListener("click", () => openCollection(c.name));
  const remove = el("button", { type: "button", class: "danger" }, "削除");
  remove.addEventListener("click", () => askDelete(c.name));
  return el("tr", { "data-name": c.name },
    el("td", {}, el("strong", {}, c.name)),
    el("td", {}, c.description || ""),
    el("td", {}, c.source_type || ""),
    el("td", { class: "num" }, num(c.records)),
    el("td", {}, (c.axes || []).map((a) => el("span", { class: "tag" }, a))),
    el("td", {}, el("div", { class: "row" }, browse,
      el("a", { href: `/search?collection=${encodeURIComponent(c.name)}` }, "検索テスト"),
      el("a", { href: `/ingest?collection=${encodeURIComponent(c.name)}` }, "取り込み"), remove)));
}

function fillMerge(collections) {
  const picked = new Set([...mergeSources.querySelectorAll("input:checked")].map((b) => b.value));
  clear(mergeSources).append(...collections.map((c) => el("label", { class: "inline" },
    el("input", { type: "checkbox", value: c.name, checked: picked.has(c.name) }), c.name)));
  if (!collections.length) mergeSources.append(el("span", { class: "muted" }, "コレクションがありません"));
  clear(document.getElementById("merge-names")).append(
    ...collections.map((c) => el("option", { value: c.name })));
}

async function loadList() {
  try {
    const data = await api("/api/collections");
    fillMerge(data.collections);
    clear(list);
    if (!data.collections.length) {
      list.append(el("p", { class: "note" }, "コレクションがありません。下のフォームで作成するか、データ取り込みでファイルを登録してください。"));
      return;
    }
    list.append(el("table", {},
      el("thead", {}, el("tr", {}, ["名前", "説明", "種類", "記録数", "検索軸", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, data.collections.map(row))));
  } catch (err) {
    showError(list, err);
  }
}

function recordNode(r) {
  const title = (r.metadata && r.metadata.title) || r.doc_id;
  const text = r.text.length > 300 ? `${r.text.slice(0, 300)}…` : r.text;
  return el("div", { class: "hit" },
    el("div", { class: "head" }, el("a", { href: recordHref(current, r.doc_id) }, title),
      el("span", { class: "tag" }, r.field), el("code", { class: "small muted" }, r.id),
      r.score !== undefined ? el("span", { class: "small muted" }, `スコア ${r.score.toFixed(3)}`) : null),
    el("div", { class: "text" }, text));
}

async function loadRecords() {
  const q = document.getElementById("browse-q").value.trim();
  const params = new URLSearchParams({ offset, limit: PAGE });
  if (q) params.set("q", q);
  try {
    const data = await api(`/api/collections/${encodeURIComponent(current)}/records?${params}`);
    document.getElementById("browse-summary").textContent = data.total
      ? `${num(data.total)} 件中 ${num(offset + 1)}〜${num(offset + data.records.length)} 件`
      : "記録はありません";
    clear(records).append(...data.records.map(recordNode));
    document.getElementById("prev").disabled = offset === 0;
    document.getElementById("next").disabled = offset + PAGE >= data.total;
  } catch (err) {
    showError(records, err);
  }
}

async function openCollection(name) {
  current = name;
  offset = 0;
  detail.classList.remove("hidden");
  document.getElementById("detail-title").textContent = `「${name}」の記録`;
  document.getElementById("browse-q").value = "";
  await loadRecords();
  try {
    const data = await api(`/api/collections/${encodeURIComponent(name)}/config`);
    document.getElementById("config").textContent = JSON.stringify(data.config, null, 2);
  } catch (err) {
    document.getElementById("config").textContent = err.message;
  }
  detail.scrollIntoView({ behavior: "smooth" });
}

document.getElementById("browse").addEventListener("submit", (e) => { e.preventDefault(); offset = 0; loadRecords(); });
document.getElementById("prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); loadRecords(); });
document.getElementById("next").addEventListener("click", () => { offset += PAGE; loadRecords(); });

document.getElementById("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = document.getElementById("new-name").value.trim();
  let config = {};
  const raw = document.getElementById("new-config").value.trim();
  if (raw) {
    try {
      config = JSON.parse(raw);
    } catch (_) {
      toast("詳細設定が JSON として読めません", true);
      return;
    }
  }
  const description = document.getElementById("new-description").value.trim();
  if (description) config = { ...config, description };
  try {
    await api("/api/collections", { method: "POST", json: { name, config: Object.keys(config).length ? config : null } });
    toast(`コレクション「${name}」を作成しました`);
    event.target.reset();
    await loadList();
  } catch (err) {
    toast(err.message, true);
  }
});

function mergedText(r) {
  const names = r.sources.map((n) => `「${n}」`).join("・");
  const made = r.created ? "を作成して" : "に";
  return `${names}を「${r.into}」${made}統合しました: 文書 ${num(r.documents)} 件` +
    `(うち置き換え ${num(r.replaced)} 件)、重複のため除外 ${num(r.skipped)} 件。`;
}

document.getElementById("merge").addEventListener("submit", async (event) => {
  event.preventDefault();
  const result = document.getElementById("merge-result");
  const sources = [...mergeSources.querySelectorAll("input:checked")].map((b) => b.value);
  const into = document.getElementById("merge-into").value.trim();
  if (!sources.length) {
    result.textContent = "統合元のコレクションを1つ以上選んでください";
    return;
  }
  const conflict = document.querySelector("input[name=merge-conflict]:checked").value;
  const button = document.getElementById("merge-run");
  button.disabled = true;
  result.textContent = "統合しています…";
  try {
    const r = await api(`/api/collections/${encodeURIComponent(into)}/merge`,
      { method: "POST", json: { sources, conflict } });
    result.textContent = mergedText(r) + (r.warnings.length ? ` 注意: ${r.warnings.join(" ")}` : "");
    toast(`「${into}」に統合しました`);
    await loadList();
  } catch (err) {
    result.textContent = err.message;
  } finally {
    button.disabled = false;
  }
});

const resetDialog = document.getElementById("reset-confirm");
const resetName = document.getElementById("reset-name");
const resetOk = document.getElementById("reset-ok");
const team = document.getElementById("reset").dataset.team;

function closeReset() { resetDialog.classList.add("hidden"); }

document.getElementById("reset-open").addEventListener("click", () => {
  resetName.value = "";
  resetOk.disabled = true;
  resetDialog.classList.remove("hidden");
  resetName.focus();
});
resetName.addEventListener("input", () => { resetOk.disabled = resetName.value !== team; });
document.getElementById("reset-cancel").addEventListener("click", closeReset);
resetDialog.addEventListener("keydown", (e) => { if (e.key === "Escape") closeReset(); });
resetOk.addEventListener("click", async () => {
  resetOk.disabled = true;
  const result = document.getElementById("reset-result");
  try {
    const r = await api("/api/collections/reset", { method: "POST", json: { confirm: resetName.value } });
    closeReset();
    const where = Object.keys(r.collections).length;
    result.textContent = where
      ? `記録 ${num(r.records)} 件を ${num(where)} 個のコレクションから削除しました` +
        (r.removed.length ? `(記録がなくなった ${r.removed.map((n) => `「${n}」`).join("・")} は削除)` : "")
      : "このチームの記録はどのコレクションにもありませんでした";
    toast("チームの記録を削除しました");
    current = null;
    detail.classList.add("hidden");
    await loadList();
  } catch (err) {
    resetOk.disabled = false;
    toast(err.message, true);
  }
});

await loadList();
const wanted = new URLSearchParams(location.search).get("name");
if (wanted) openCollection(wanted);
