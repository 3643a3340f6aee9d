// データ取り込み: the chosen files previewed — a CSV/TSV/JSONL by the server (POST
// /api/ingest/preview: its encoding and delimiter found, the first rows, a column mapping to
// adjust; see ingest_mapping.js), other text in the browser — then POST /api/ingest (multipart,
// with the mapping) and GET /api/jobs/{id} polled for progress, counts and per-file failures.
// The URL form asks the server to download a dataset file and ingest it the same way.
import { api, clear, el, num, showError, sleep, toast } from "./api.js";
import { TABULAR, buildMapping, extOf, renderMapping } from "./ingest_mapping.js";

const SHOWN_FILES = 3;
const form = document.getElementById("upload");
const input = document.getElementById("files");
const collection = document.getElementById("collection");
const preview = document.getElementById("file-previews");
const mappingBox = document.getElementById("mapping");
const mappingBody = document.getElementById("mapping-body");
const mappingNote = document.getElementById("mapping-note");
const errors = document.getElementById("form-errors");
const start = document.getElementById("start");
const jobBox = document.getElementById("job");
const cancel = document.getElementById("cancel");
const STAGES = { load: "読み込み", chunk: "分割", embed: "埋め込み", write: "書き込み" };
const STATUS = { queued: "待機中", running: "実行中", done: "完了", failed: "失敗", cancelled: "取り消し" };
const FORMATS = { csv: "CSV", tsv: "TSV", jsonl: "JSONL", json: "JSON" };
const DELIMITERS = { ",": "カンマ", "\t": "タブ", ";": "セミコロン", "|": "縦棒" };

let mapper = null;  // the mapping controls of the previewed table file, when there is one
let shown = null;  // what they were rendered from: { file, tables, result, start }
let previewed = 0;  // which preview is current (a newer file choice wins)
let refreshing = Promise.resolve();  // a collection's saved mapping being fetched
const known = new Set();  // the team's collections

/** A function that lists the problems of a form in `box` under `title` (none: the box is
 * emptied). */
function problemList(box, title) {
  return (messages) => {
    clear(box);
    if (!messages.length) return;
    box.append(el("div", { class: "error", role: "alert" },
      el("strong", {}, title),
      el("ul", {}, messages.map((m) => el("li", {}, m)))));
  };
}

const showErrors = problemList(errors, "取り込みを開始できません");

function localPreview(file, text) {
  const box = el("div", { class: "stack" }, el("h3", {}, `${file.name}(${num(file.size)} バイト)`));
  if (text === null) {
    box.append(el("p", { class: "small muted" }, "PDF・Word の中身はサーバーで読み込みます(プレビューなし・列の割り当てなし)"));
  } else {
    box.append(el("pre", { class: "light" }, text.slice(0, 600) + (text.length > 600 ? "\n…" : "")));
  }
  return box;
}

function describe(data, file) {
  const parts = [`形式: ${FORMATS[data.format] || data.format}`];
  if (data.encoding) parts.push(`文字コード: ${data.encoding}`);
  if (data.delimiter) parts.push(`区切り: ${DELIMITERS[data.delimiter] || data.delimiter}`);
  parts.push(`${num((data.columns || []).length)} 列`);
  return `${file.name} — ${parts.join("・")}`;
}

/** POST the file to the preview; the collection goes along when it exists (its saved
 * mapping comes back as `current`). */
function fetchPreview(file) {
  const data = new FormData();
  data.append("file", file, file.name);
  const name = collection.value.trim();
  if (known.has(name)) data.append("collection", name);
  return api("/api/ingest/preview", { method: "POST", form: data });
}

function renderTable(file, tables, result) {
  clear(mappingBody);
  mappingNote.textContent = describe(result, file)
    + (tables.length > 1 ? `。同じ割り当てを表のファイル ${tables.length} 個すべてに使います` : "");
  mapper = renderMapping(mappingBody, result, { onChange: recheck });
  shown = { file, tables, result, start: JSON.stringify(result.current || result.suggested) };
}

async function previewTable(file, tables, token) {
  clear(mappingBody).append(el("p", { class: "small muted pending" }, `${file.name} を読み込んでいます`));
  mappingBox.classList.remove("hidden");
  let result;
  try {
    result = await fetchPreview(file);
  } catch (err) {
    if (token !== previewed) return;
    mapper = shown = null;
    clear(mappingNote);
    showError(mappingBody, { message: `${file.name}: ${err.message}` });
    mappingBody.append(el("p", { class: "small muted" }, "このファイルは列の割り当てなしで送られ、取り込みジョブで理由つきで報告されます。"));
    return;
  }
  if (token === previewed) renderTable(file, tables, result);
}

/** Another collection chosen: its saved mapping becomes the starting point, unless the user
 * changed the mapping already (then it stays as chosen). Only re-rendered when it differs. */
async function collectionChanged() {
  if (!mapper || !shown || mapper.state.touched) return;
  const token = previewed;
  const was = shown;
  let result = { ...was.result, current: null };
  if (known.has(collection.value.trim())) {
    try {
      result = await fetchPreview(was.file);
    } catch (_) {
      return;  // the mapping shown stays usable
    }
  }
  if (token !== previewed || shown !== was || mapper.state.touched) return;
  if (JSON.stringify(result.current || result.suggested) !== was.start) renderTable(was.file, was.tables, result);
}

/** After a change, the shown problems are checked again (nothing shown: nothing to do). */
function recheck() {
  if (errors.firstChild) check({ focus: false });
}

async function showPreviews() {
  const token = ++previewed;
  const files = [...input.files];
  const tables = files.filter((f) => TABULAR.includes(extOf(f.name)));
  showErrors([]);
  mapper = shown = null;
  clear(mappingNote);
  clear(mappingBody);
  mappingBox.classList.toggle("hidden", !tables.length);
  clear(preview);
  const others = files.filter((f) => !tables.includes(f));
  for (const file of others.slice(0, SHOWN_FILES)) {
    try {
      const text = ["pdf", "docx"].includes(extOf(file.name)) ? null : await file.slice(0, 64 * 1024).text();
      if (token !== previewed) return;
      preview.append(localPreview(file, text));
    } catch (_) {
      preview.append(el("p", { class: "error" }, `${file.name}: プレビューできません`));
    }
  }
  if (others.length > SHOWN_FILES) preview.append(el("p", { class: "small muted" }, `ほか ${others.length - SHOWN_FILES} ファイル`));
  if (tables.length) await previewTable(tables[0], tables, token);
}

input.addEventListener("change", () => showPreviews());
// the collection's own [ingest] mapping becomes the starting point — unless the user chose
collection.addEventListener("change", () => {
  recheck();
  refreshing = collectionChanged();
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
  const active = job.status === "queued" || job.status === "running";
  if (active && job.rate) {
    const left = job.eta_s === null || job.eta_s === undefined ? "" : `・残り約 ${duration(job.eta_s)}`;
    progress.append(el("p", { class: "small muted" }, `${STAGES[job.stage] || job.stage || ""} ${num(job.rate, 1)} 件/秒${left}`));
  }
  cancel.classList.toggle("hidden", !active);
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

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return s < 60 ? `${s} 秒` : s < 3600 ? `${Math.floor(s / 60)} 分 ${s % 60} 秒` : `${Math.floor(s / 3600)} 時間 ${Math.floor((s % 3600) / 60)} 分`;
}

let following = null;  // the id of the job the page follows

cancel.addEventListener("click", async () => {
  if (!following) return;
  cancel.disabled = true;
  try {
    renderJob(await api(`/api/jobs/${encodeURIComponent(following)}/cancel`, { method: "POST" }));
    toast("取り消しを依頼しました");
  } catch (err) {
    toast(err.message, true);
  } finally {
    cancel.disabled = false;
  }
});

/** The job followed to its end, then the collection list refreshed; a failure to follow it
 * is shown in the job panel. */
async function followToEnd(job) {
  try {
    await follow(job);
    loadList();
  } catch (err) {
    jobBox.classList.remove("hidden");
    showError(document.getElementById("job-result"), err);
  }
}

async function follow(job) {
  following = job.id;
  jobBox.classList.remove("hidden");
  renderJob(job);
  while (job.status === "queued" || job.status === "running") {
    await sleep(700);
    job = await api(`/api/jobs/${encodeURIComponent(job.id)}`);
    renderJob(job);
  }
  const ends = { done: "取り込みが終わりました", cancelled: "取り込みを取り消しました" };
  toast(ends[job.status] || "取り込みに失敗しました", job.status === "failed");
}

/** What is wrong before anything is sent (Japanese), focusing the first control at fault. */
function check({ focus = true } = {}) {
  const problems = [];
  if (!collection.value.trim()) problems.push("コレクション名を入力してください");
  if (!input.files.length) problems.push("取り込むファイルを選んでください");
  let mapping = null;
  if (mapper) {
    const built = buildMapping(mapper.choices(), mapper.sourceType(), { family: mapper.family });
    problems.push(...built.errors);
    mapping = built.mapping;
  }
  showErrors(problems);
  if (problems.length && focus) {
    const first = !collection.value.trim() ? collection : !input.files.length ? input : mappingBody.querySelector("select");
    if (first) first.focus();
  }
  return { ok: !problems.length, mapping };
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  await refreshing;
  const { ok, mapping } = check();
  if (!ok) return;
  const data = new FormData();
  data.append("collection", collection.value.trim());
  for (const file of input.files) data.append("files", file, file.name);
  if (mapping) data.append("mapping", JSON.stringify(mapping));
  start.disabled = true;
  let job;
  try {
    job = await api("/api/ingest", { method: "POST", form: data });
  } catch (err) {
    showErrors([err.message]);
    errors.scrollIntoView({ block: "nearest" });
    start.disabled = false;
    return;
  }
  await followToEnd(job);
  start.disabled = false;
});

// URL から取り込む: POST /api/collections/{name}/fetch (the server downloads the file and
// starts the same ingest job an upload does), then the job followed in the same panel.
const fetchForm = document.getElementById("url-fetch");
const fetchCollection = document.getElementById("fetch-collection");
const fetchUrl = document.getElementById("fetch-url");
const fetchErrors = document.getElementById("fetch-errors");
const fetchStart = document.getElementById("fetch-start");
const showFetchErrors = problemList(fetchErrors, "URL から取り込めません");

fetchForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = fetchCollection.value.trim();
  const url = fetchUrl.value.trim();
  const problems = [];
  if (!name) problems.push("コレクション名を入力してください");
  if (!url) problems.push("URL を入力してください");
  showFetchErrors(problems);
  if (problems.length) {
    (!name ? fetchCollection : fetchUrl).focus();
    return;
  }
  fetchStart.disabled = true;
  fetchStart.textContent = "ダウンロードしています…";
  let job;
  try {
    job = await api(`/api/collections/${encodeURIComponent(name)}/fetch`, { method: "POST", json: { url } });
  } catch (err) {
    showFetchErrors([err.message]);
    return;
  } finally {
    fetchStart.disabled = false;
    fetchStart.textContent = "ダウンロードして取り込む";
  }
  await followToEnd(job);
});

async function loadList() {
  try {
    const data = await api("/api/collections");
    const list = clear(document.getElementById("collection-list"));
    known.clear();
    for (const c of data.collections) known.add(c.name);
    for (const c of data.collections) list.append(el("option", { value: c.name }, c.description || c.name));
  } catch (_) { /* the name can still be typed */ }
}

const wanted = new URLSearchParams(location.search).get("collection");
if (wanted) collection.value = fetchCollection.value = wanted;
loadList();
