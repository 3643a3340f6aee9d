// データ取り込み: preview the chosen files in the browser, POST /api/ingest (multipart), then
// poll GET /api/jobs/{id} for progress, counts and per-file failures.
import { api, clear, el, num, showError, sleep, toast } from "./api.js";

const PREVIEW_ROWS = 5;
const form = document.getElementById("upload");
const input = document.getElementById("files");
const collection = document.getElementById("collection");
const preview = document.getElementById("preview");
const start = document.getElementById("start");
const jobBox = document.getElementById("job");
const STAGES = { load: "読み込み", chunk: "分割", embed: "埋め込み", write: "書き込み" };
const STATUS = { queued: "待機中", running: "実行中", done: "完了", failed: "失敗" };

/** Parse delimited text (quotes and doubled quotes, CRLF) into at most `limit` rows. */
export function parseDelimited(text, sep, limit) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length && rows.length < limit; i += 1) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i += 1; }
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === "") quoted = true;
    else if (ch === sep) { row.push(cell); cell = ""; }
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i += 1;
      row.push(cell); rows.push(row); row = []; cell = "";
    } else cell += ch;
  }
  if ((cell || row.length) && rows.length < limit) { row.push(cell); rows.push(row); }
  return rows;
}

function table(rows) {
  const [head, ...body] = rows;
  return el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, body.map((r) => el("tr", {}, r.map((c) => el("td", { class: "small" }, c.length > 120 ? `${c.slice(0, 120)}…` : c)))))));
}

async function previewFile(file) {
  const ext = file.name.toLowerCase().split(".").pop();
  const box = el("div", { class: "stack" }, el("h3", {}, `${file.name}(${num(file.size)} バイト)`));
  if (["pdf", "docx"].includes(ext)) {
    box.append(el("p", { class: "small muted" }, "PDF・Word の中身はサーバーで読み込みます(プレビューなし)"));
    return box;
  }
  const text = await file.slice(0, 64 * 1024).text();
  if (ext === "csv" || ext === "tsv") {
    const rows = parseDelimited(text.replace(/^\ufeff/, ""), ext === "tsv" ? "\t" : ",", PREVIEW_ROWS + 1);
    if (rows.length) box.append(el("p", { class: "small muted" }, `先頭 ${rows.length - 1} 行`), table(rows));
  } else if (ext === "jsonl") {
    const lines = text.split("\n").filter((l) => l.trim()).slice(0, PREVIEW_ROWS);
    box.append(el("pre", { class: "light" }, lines.join("\n")));
  } else {
    box.append(el("pre", { class: "light" }, text.slice(0, 600) + (text.length > 600 ? "\n…" : "")));
  }
  return box;
}

input.addEventListener("change", async () => {
  clear(preview);
  for (const file of [...input.files].slice(0, 3)) {
    try {
      preview.append(await previewFile(file));
    } catch (err) {
      preview.append(el("p", { class: "error" }, `${file.name}: プレビューできません`));
    }
  }
  if (input.files.length > 3) preview.append(el("p", { class: "small muted" }, `ほか ${input.files.length - 3} ファイル`));
});

function renderJob(job) {
  document.getElementById("job-id").textContent = job.id.slice(0, 12);
  document.getElementById("job-status").textContent =
    `${STATUS[job.status] || job.status} — コレクション「${job.collection}」、${job.files.length} ファイル`;
  const progress = clear(document.getElementById("job-progress"));
  for (const [stage, p] of Object.entries(job.progress || {})) {
    const bar = el("progress", { max: Math.max(1, p.total), value: p.done });
    progress.append(el("label", {}, `${STAGES[stage] || stage}: ${num(p.done)} / ${num(p.total)}`, bar));
  }
  const result = clear(document.getElementById("job-result"));
  if (job.error) result.append(el("p", { class: "error" }, job.error));
  if (job.result) {
    const r = job.result;
    result.append(el("p", {}, `追加 ${num(r.inserted)} 件・更新 ${num(r.updated)} 件・変更なし ${num(r.unchanged)} 件・埋め込み ${num(r.embedded)} 件`));
  }
  const failures = job.failures || [];
  if (failures.length) {
    result.append(el("h3", { class: "ng" }, `取り込めなかったファイル(${failures.length})`),
      el("ul", { class: "failures" }, failures.map((f) => el("li", {}, el("strong", {}, f.path), ": ", f.reason))));
  }
}

async function follow(job) {
  jobBox.classList.remove("hidden");
  renderJob(job);
  while (job.status === "queued" || job.status === "running") {
    await sleep(700);
    job = await api(`/api/jobs/${encodeURIComponent(job.id)}`);
    renderJob(job);
  }
  toast(job.status === "done" ? "取り込みが終わりました" : "取り込みに失敗しました", job.status !== "done");
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData();
  data.append("collection", collection.value.trim());
  for (const file of input.files) data.append("files", file, file.name);
  start.disabled = true;
  try {
    await follow(await api("/api/ingest", { method: "POST", form: data }));
    loadList();
  } catch (err) {
    jobBox.classList.remove("hidden");
    showError(document.getElementById("job-result"), err);
  } finally {
    start.disabled = false;
  }
});

async function loadList() {
  try {
    const data = await api("/api/collections");
    const list = clear(document.getElementById("collection-list"));
    for (const c of data.collections) list.append(el("option", { value: c.name }, c.description || c.name));
  } catch (_) { /* the name can still be typed */ }
}

const wanted = new URLSearchParams(location.search).get("collection");
if (wanted) collection.value = wanted;
loadList();
