// Q/A生成: the form builds the `tansaku qa generate` command; when the server offers
// POST /api/qa/generate (seen in /openapi.json) the page starts it as a job and follows it.
import { api, clear, el, loadCollections, num, showError, sleep, toast } from "./api.js";

const ROUTE = "/api/qa/generate";
const source = document.getElementById("source");
const target = document.getElementById("target");
const perChunk = document.getElementById("per-chunk");
const limit = document.getElementById("limit");
const command = document.getElementById("command");
let serverJobs = false;

const quote = (s) => (/^[\w.\-/]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);

function updateCommand() {
  const parts = ["tansaku", "qa", "generate", "--from", quote(source.value || "<生成元>"),
    "--into", quote(target.value.trim() || "<生成先>")];
  if (perChunk.value && perChunk.value !== "3") parts.push("--per-chunk", perChunk.value);
  if (limit.value) parts.push("--limit", limit.value);
  command.textContent = parts.join(" ");
}

async function detectRoute() {
  try {
    const spec = await api("/openapi.json");
    serverJobs = Boolean(spec.paths && spec.paths[ROUTE] && spec.paths[ROUTE].post);
  } catch (_) {
    serverJobs = false;
  }
  document.getElementById("server-mode").classList.toggle("hidden", !serverJobs);
  if (serverJobs) {
    document.getElementById("qa-note").textContent = "サーバーのジョブとして生成できます。CLI で実行する場合のコマンド:";
  }
}

function renderJob(job) {
  document.getElementById("job-id").textContent = String(job.id).slice(0, 12);
  document.getElementById("job-status").textContent = `${job.status} — ${job.stage || ""}`;
  const bar = document.getElementById("job-bar");
  const p = Object.values(job.progress || {}).pop();
  if (p) { bar.max = Math.max(1, p.total); bar.value = p.done; }
  const result = clear(document.getElementById("job-result"));
  if (job.error) result.append(el("p", { class: "error" }, job.error));
  if (job.result) result.append(el("pre", { class: "light" }, JSON.stringify(job.result, null, 2)));
}

document.getElementById("qa-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!serverJobs) return;
  const body = { source: source.value, target: target.value.trim(), per_chunk: Number(perChunk.value || 3) };
  if (limit.value) body.limit = Number(limit.value);
  const box = document.getElementById("job");
  box.classList.remove("hidden");
  try {
    let job = await api(ROUTE, { method: "POST", json: body });
    renderJob(job);
    while (job.status === "queued" || job.status === "running") {
      await sleep(1000);
      job = await api(`/api/jobs/${encodeURIComponent(job.id)}`);
      renderJob(job);
    }
    toast(job.status === "done" ? `生成が終わりました(${num((job.result || {}).pairs || 0)} ペア)` : "生成に失敗しました", job.status !== "done");
  } catch (err) {
    showError(document.getElementById("job-result"), err);
  }
});

for (const input of [source, target, perChunk, limit]) input.addEventListener("input", updateCommand);
loadCollections(source).then(() => {
  if (source.value && !target.value) target.value = `${source.value}_qa`;
  updateCommand();
}).catch((err) => showError(document.getElementById("job-result"), err));
updateCommand();
detectRoute();
