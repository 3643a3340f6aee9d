// Q/A生成: POST /api/qa/generate starts the server's job ({"source", "target", "per_chunk",
// "limit"}); the page follows GET /api/jobs/{id} (chunks done / total), then links the Q&A
// collection to the search test page. The equivalent `tansaku qa generate` command is offered too.
import { api, clear, el, loadCollections, num, showError, sleep, toast } from "./api.js";

const ROUTE = "/api/qa/generate";
const STATUS = { queued: "待機中", running: "生成中", done: "完了", failed: "失敗" };
const form = document.getElementById("qa-form");
const source = document.getElementById("source");
const target = document.getElementById("target");
const perChunk = document.getElementById("per-chunk");
const limit = document.getElementById("limit");
const start = document.getElementById("start");
const command = document.getElementById("command");
const jobBox = document.getElementById("job");
const resultBox = document.getElementById("job-result");
const jobLive = document.getElementById("job-live"); // the job's heading, status and bar

let targetEdited = false;

const quote = (s) => (/^[\w.\-/]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);

function updateCommand() {
  const parts = ["tansaku", "qa", "generate", "--from", quote(source.value || "<生成元>"),
    "--into", quote(target.value.trim() || "<生成先>")];
  if (perChunk.value && perChunk.value !== "3") parts.push("--per-chunk", perChunk.value);
  if (limit.value) parts.push("--limit", limit.value);
  command.textContent = parts.join(" ");
}

function summary(r) {
  const ing = r.ingested || {};
  return [
    el("p", { class: "summary" },
      `「${r.source}」→「${r.target}」: ${num(r.chunks)} チャンク(今回生成 ${num(r.generated)}、`
      + `生成済み ${num(r.skipped)}、失敗 ${num((r.failed || []).length)})、ペア ${num(r.pairs)} 件`),
    el("p", { class: "small muted" },
      `登録: 追加 ${num(ing.inserted)}・更新 ${num(ing.updated)}・変更なし ${num(ing.unchanged)} レコード(モデル ${r.model || "—"})`),
    el("p", { class: "row" },
      el("a", { class: "button", id: "try-search", href: `/search?collection=${encodeURIComponent(r.target)}` }, "検索テストで確かめる"),
      el("a", { href: `/collections?name=${encodeURIComponent(r.target)}` }, "レコードを見る")),
  ];
}

function renderJob(job) {
  jobLive.classList.remove("hidden");
  document.getElementById("job-id").textContent = String(job.id).slice(0, 12);
  const params = job.params || {};
  document.getElementById("job-status").textContent =
    `${STATUS[job.status] || job.status} — 「${params.source || "?"}」から「${job.collection}」へ`;
  const p = (job.progress || {}).generate;
  const bar = document.getElementById("job-bar");
  const count = document.getElementById("job-count");
  count.firstChild.textContent = p ? `チャンク ${num(p.done)} / ${num(p.total)}` : "チャンク —";
  if (p) { bar.max = Math.max(1, p.total); bar.value = p.done; }
  clear(resultBox);
  if (job.error) {
    resultBox.append(el("p", { class: "error", role: "alert" }, job.error),
      el("p", { class: "small muted" }, "同じ条件でもう一度開始すると、生成済みのチャンクを飛ばして続きから生成します。"));
  }
  if (job.result) resultBox.append(...summary(job.result));
  const failures = job.failures || [];
  if (failures.length) {
    resultBox.append(
      el("h3", { class: "ng" }, `生成できなかったチャンク(${num(failures.length)})`),
      el("ul", { class: "failures" }, failures.slice(0, 50).map((f) => el("li", {}, el("strong", {}, f.chunk_id || f.path || ""), ": ", f.reason || ""))),
      el("p", { class: "small muted" }, "もう一度開始すると、これらのチャンクだけをモデルに頼み直します。"));
  }
}

async function follow(job) {
  renderJob(job);
  while (job.status === "queued" || job.status === "running") {
    await sleep(700);
    job = await api(`/api/jobs/${encodeURIComponent(job.id)}`);
    renderJob(job);
  }
  const pairs = (job.result || {}).pairs || 0;
  toast(job.status === "done" ? `生成が終わりました(${num(pairs)} ペア)` : "生成に失敗しました", job.status !== "done");
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = { source: source.value, target: target.value.trim(), per_chunk: Number(perChunk.value || 3) };
  if (limit.value) body.limit = Number(limit.value);
  jobBox.classList.remove("hidden");
  jobLive.classList.add("hidden"); // shown once the server has a job: a refusal has no bar
  clear(resultBox).append(el("p", { class: "pending muted" }, "ジョブを開始しています"));
  start.disabled = true;
  try {
    await follow(await api(ROUTE, { method: "POST", json: body }));
  } catch (err) {
    showError(resultBox, err);
  } finally {
    start.disabled = false;
  }
});

target.addEventListener("input", () => { targetEdited = target.value.trim() !== ""; });
source.addEventListener("change", () => {
  if (!targetEdited && source.value) target.value = `${source.value}_qa`;
});
for (const input of [source, target, perChunk, limit]) {
  input.addEventListener("input", updateCommand);
  input.addEventListener("change", updateCommand);
}
loadCollections(source).then((collections) => {
  const wanted = new URLSearchParams(location.search).get("source");
  if (wanted && collections.some((c) => c.name === wanted)) source.value = wanted;
  if (source.value && !target.value) target.value = `${source.value}_qa`;
  updateCommand();
}).catch((err) => { jobBox.classList.remove("hidden"); showError(resultBox, err); });
updateCommand();
