// CSV を表(SQL)として登録: POST /api/ingest/table/infer shows each column's inferred type,
// description and example for correction; POST /api/ingest/table registers the file with them.
import { api, clear, el, num } from "./api.js";

const $ = (id) => document.getElementById(id);
const TYPE_LABELS = {
  TEXT: "文字列", INTEGER: "整数", DOUBLE: "小数", BOOLEAN: "真偽値",
  DATE: "日付", TIMESTAMP: "日時", JSON: "JSON",
};
let inferred = null;

function columnRow(c, types) {
  const type = el("select", { "data-column": c.name, "aria-label": `${c.header} の型` },
    types.map((t) => el("option", { value: t, selected: t === c.type }, TYPE_LABELS[t] || t)));
  return el("tr", { "data-column": c.name },
    el("td", {}, c.header), el("td", {}, el("code", {}, c.name)), el("td", {}, type),
    el("td", {}, el("input", { type: "text", value: c.description, maxlength: "500", "data-description": c.name, "aria-label": `${c.header} の説明` })),
    el("td", {}, el("input", { type: "text", value: c.example, maxlength: "500", "data-example": c.name, "aria-label": `${c.header} の例` })));
}

async function infer() {
  const file = $("table-file").files[0];
  inferred = null;
  $("table-inferred").classList.add("hidden");
  if (!file) return;
  const form = new FormData();
  form.append("file", file);
  if ($("table-name").value.trim()) form.append("name", $("table-name").value.trim());
  $("table-status").textContent = "列の型を推定しています…";
  try {
    inferred = await api("/api/ingest/table/infer", { method: "POST", form });
    if (!$("table-name").value.trim()) $("table-name").value = inferred.name;
    $("table-description").value = inferred.description;
    clear($("table-columns").querySelector("tbody")).append(...inferred.columns.map((c) => columnRow(c, inferred.types)));
    $("table-inferred").classList.remove("hidden");
    $("table-status").textContent = `${num(inferred.rows)} 行を読んで推定しました。型・説明・例を確かめてから登録してください。`;
  } catch (err) {
    $("table-status").textContent = err.message;
  }
}

$("table-file").addEventListener("change", infer);
$("table-upload").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!inferred) return;
  const body = $("table-columns").querySelector("tbody");
  const columns = inferred.columns.map((c) => ({
    name: c.name,
    type: body.querySelector(`select[data-column="${CSS.escape(c.name)}"]`).value,
    description: body.querySelector(`input[data-description="${CSS.escape(c.name)}"]`).value,
    example: body.querySelector(`input[data-example="${CSS.escape(c.name)}"]`).value,
  }));
  const entry = { name: $("table-name").value.trim(), description: $("table-description").value, columns };
  const form = new FormData();
  form.append("file", $("table-file").files[0]);
  form.append("entry", JSON.stringify(entry));
  $("table-register").disabled = true;
  try {
    const r = await api("/api/ingest/table", { method: "POST", form });
    $("table-status").textContent = `表「${r.table}」を登録しました(${num(r.rows)} 行、${num(r.columns.length)} 列)。SQL とエージェントで使えます。`;
  } catch (err) {
    $("table-status").textContent = err.message;
  } finally {
    $("table-register").disabled = false;
  }
});
