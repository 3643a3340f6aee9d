// SQL・表: GET /api/tables, POST /api/sql; rows rendered as text cells.
import { api, clear, el, num, showError } from "./api.js";

const $ = (id) => document.getElementById(id);

async function loadTables() {
  try {
    const data = await api("/api/tables");
    clear($("tables"));
    for (const t of data.tables) {
      const use = el("button", { type: "button" }, "この表を見る");
      use.addEventListener("click", () => { $("sql").value = `SELECT * FROM ${t.name} LIMIT 10`; });
      $("tables").append(el("div", { class: "card" }, el("strong", {}, t.name), el("span", { class: "muted small" }, ` ${num(t.rows)} 行`),
        el("p", { class: "small" }, t.description || ""),
        el("p", { class: "small muted" }, t.columns.map((c) => c.name).join("、")), use));
    }
  } catch (err) {
    showError($("tables"), err);
  }
}

function cell(value) {
  if (value === null || value === undefined) return el("td", { class: "muted" }, "NULL");
  return el("td", { class: typeof value === "number" ? "num" : "" }, typeof value === "object" ? JSON.stringify(value) : String(value));
}

$("sql-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("run").disabled = true;
  try {
    const data = await api("/api/sql", { method: "POST", json: { sql: $("sql").value } });
    const rows = data.results || [];
    const columns = rows[0] ? Object.keys(rows[0]) : [];
    const values = (r) => columns.map((c) => r[c]);
    clear($("result")).append(
      el("p", { class: "small muted" }, `${num(data.count ?? rows.length)} 行`),
      el("table", {}, el("thead", {}, el("tr", {}, columns.map((c) => el("th", {}, c)))),
        el("tbody", {}, rows.map((r) => el("tr", {}, values(r).map(cell))))));
  } catch (err) {
    showError($("result"), err);
  } finally {
    $("run").disabled = false;
  }
});

loadTables();
