// データ取り込み — the column mapping of a CSV/TSV/JSONL/JSON upload: the server's preview
// (POST /api/ingest/preview: columns, the first rows, the suggested and the collection's current
// mapping) shown as a table of escaped cells, one select per column (本文 / タイトル / ID /
// メタデータ / 日付 / 使わない), checked here and sent with the upload as the `mapping` field:
// {"id_column", "title_column", "text_fields": {field: [column…]}, "metadata_columns": {key:
// column}, "source_type"}. 日付 is the metadata key "date" (normalised by the loader).
import { el } from "./api.js";

export const TABULAR = ["csv", "tsv", "jsonl", "json"];
export const ROLES = [
  ["text", "本文"], ["title", "タイトル"], ["id", "ID"], ["meta", "メタデータ"], ["date", "日付"],
  ["skip", "使わない"],
];
const ROLE_LABEL = Object.fromEntries(ROLES);
const CELL_MAX = 120;
const DEFAULT_FIELD = "body";
// what the server accepts (tansaku.ingest.mapping): checked here first to say it in place
const FIELD_NAME = /^[^\s:/#]{1,64}$/u;
const META_KEY = /^[^\s=<>,＝＜＞，]{1,64}$/u;
const RESERVED_KEYS = ["title", "source", "chunk_index"];

export const extOf = (name) => name.toLowerCase().split(".").pop();

/** The role and name of each column under `mapping` (one role a column: ID, then タイトル,
 * 本文, 日付, メタデータ); columns it does not name are 使わない. A title that is also in a
 * text field keeps it (`alsoText`, the field in `name`). */
export function rolesFrom(mapping, columns) {
  const m = mapping || {};
  const fieldOf = {};
  for (const [field, cols] of Object.entries(m.text_fields || {})) {
    for (const c of cols || []) if (!(c in fieldOf)) fieldOf[c] = field;
  }
  const keyOf = {};
  for (const [key, col] of Object.entries(m.metadata_columns || {})) if (!(col in keyOf)) keyOf[col] = key;
  return columns.map((column) => {
    if (column === m.id_column) return { column, role: "id", name: "" };
    if (column === m.title_column) return { column, role: "title", name: fieldOf[column] || "", alsoText: column in fieldOf };
    if (column in fieldOf) return { column, role: "text", name: fieldOf[column] };
    if (keyOf[column] === "date") return { column, role: "date", name: "" };
    if (column in keyOf) return { column, role: "meta", name: keyOf[column] };
    return { column, role: "skip", name: "" };
  });
}

const list = (cols) => cols.map((c) => `「${c}」`).join("、");

/** The mapping the choices make, and what is wrong with them (Japanese; empty when none).
 * `family` "json" (JSONL): a text field takes one key. */
export function buildMapping(choices, sourceType, { family = "csv" } = {}) {
  const errors = [];
  const of = (role) => choices.filter((c) => c.role === role);
  for (const [role, label] of [["id", "ID"], ["title", "タイトル"], ["date", "日付"]]) {
    const picked = of(role);
    if (picked.length > 1) errors.push(`${label}にできる列は1つだけです(選択: ${list(picked.map((c) => c.column))})`);
  }
  const texts = choices.filter((c) => c.role === "text" || (c.role === "title" && c.alsoText));
  if (!of("text").length) errors.push("本文にする列を1つ以上選んでください");
  const textFields = {};
  for (const c of texts) {
    const name = (c.role === "title" ? c.field : c.name).trim();
    if (!name) errors.push(`列「${c.column}」の本文のフィールド名を入力してください`);
    else if (!FIELD_NAME.test(name)) errors.push(`列「${c.column}」のフィールド名「${name}」は使えません(空白・: / # を含まない64文字まで)`);
    else (textFields[name] ||= []).push(c.column);
  }
  if (family === "json") {
    for (const [name, cols] of Object.entries(textFields)) {
      if (cols.length > 1) errors.push(`JSON Lines ではフィールド「${name}」に1つのキーだけを割り当てられます(選択: ${list(cols)})。フィールド名を分けてください`);
    }
  }
  const meta = {};
  const keyColumns = {};
  for (const c of [...of("meta"), ...of("date")]) {
    const key = c.role === "date" ? "date" : c.name.trim();
    if (!key) { errors.push(`列「${c.column}」のメタデータのキーを入力してください`); continue; }
    if (!META_KEY.test(key) || RESERVED_KEYS.includes(key)) {
      errors.push(`列「${c.column}」のメタデータのキー「${key}」は使えません(空白・= < > , を含まない64文字まで。${RESERVED_KEYS.join("・")} は予約済み)`);
      continue;
    }
    (keyColumns[key] ||= []).push(c.column);
    meta[key] = c.column;
  }
  for (const [key, cols] of Object.entries(keyColumns)) {
    if (cols.length > 1) errors.push(`メタデータのキー「${key}」が重複しています(列 ${list(cols)})`);
  }
  const type = (sourceType || "").trim();
  if (type.length > 64) errors.push("種別(source_type)は64文字までにしてください");
  const one = (role) => (of(role)[0] || {}).column || null;
  const mapping = {
    id_column: one("id"), title_column: one("title"), text_fields: textFields,
    metadata_columns: meta, source_type: type,
  };
  return { mapping, errors };
}

/** A JSON text field takes one key: a title also in a field with other keys stays a title
 * only, and a further key of a field gets a field of its own (named after the key). */
function oneKeyPerField(choices) {
  const taken = new Set();
  const ownName = (column) => column.replace(/[\s:/#]+/gu, "_").slice(0, 64) || DEFAULT_FIELD;
  for (const c of choices) {
    if (c.role === "title" && c.alsoText && choices.some((o) => o.role === "text" && o.field === c.field)) {
      c.alsoText = false;
    }
  }
  for (const c of choices) {
    if (!(c.role === "text" || (c.role === "title" && c.alsoText))) continue;
    if (taken.has(c.field)) c.field = ownName(c.column);
    taken.add(c.field);
  }
}

const cut = (text) => (text.length > CELL_MAX ? `${text.slice(0, CELL_MAX)}…` : text);

/** Render `preview` into `box`; returns { choices(), sourceType(), family, state }
 * (`state.touched` once the user changed anything). `onChange` runs after every change. */
export function renderMapping(box, preview, { onChange = () => {} } = {}) {
  const columns = preview.columns || [];
  const start = preview.current || preview.suggested || {};
  const state = { touched: false };
  // each column remembers a field name (本文, or a title also in the text) and a metadata key
  const choices = rolesFrom(start, columns).map((c) => ({
    ...c,
    alsoText: c.role === "title" ? Boolean(c.alsoText) : true,
    field: (c.role === "text" || c.role === "title") && c.name ? c.name : DEFAULT_FIELD,
    key: c.role === "meta" ? c.name : c.column,
  }));
  const family = preview.format === "csv" || preview.format === "tsv" ? "csv" : "json";
  if (family === "json") oneKeyPerField(choices);
  const tags = columns.map(() => el("span", { class: "tag role" }));
  const sample = (i) => String(((preview.rows || [])[0] || [])[i] ?? "");
  const rows = choices.map((choice, i) => {
    const what = `列「${choice.column}」`;
    const select = el("select", { "aria-label": `${what}の使い方`, "data-column": choice.column },
      ROLES.map(([value, label]) => el("option", { value }, label)));
    select.value = choice.role;
    const name = el("input", { type: "text", maxlength: "64", autocomplete: "off" });
    const caption = el("span", {});
    const nameBox = el("label", { class: "map-name" }, caption, name);
    const also = el("input", { type: "checkbox", "aria-label": `${what}を本文にも含める` });
    also.checked = choice.alsoText;
    const alsoBox = el("label", { class: "inline small map-also" }, also, "本文にも含める");
    const usesField = () => choice.role === "text" || (choice.role === "title" && choice.alsoText);
    const label = () => {
      choice.name = choice.role === "meta" ? choice.key : usesField() ? choice.field : "";
      const named = choice.role === "meta" || choice.role === "text";
      let text = ROLE_LABEL[choice.role] + (named && choice.name.trim() ? `: ${choice.name.trim()}` : "");
      if (choice.role === "title" && choice.alsoText) text += `+本文: ${choice.field.trim()}`;
      tags[i].textContent = text;
      tags[i].dataset.role = choice.role;
    };
    const show = () => {
      const meta = choice.role === "meta";
      nameBox.classList.toggle("hidden", !(meta || usesField()));
      alsoBox.classList.toggle("hidden", choice.role !== "title");
      name.value = meta ? choice.key : choice.field;
      caption.textContent = meta ? "キー" : "フィールド名";
      name.setAttribute("aria-label", `${what}の${meta ? "メタデータのキー" : "本文のフィールド名"}`);
      label();
    };
    const changed = () => { state.touched = true; onChange(); };
    select.addEventListener("change", () => { choice.role = select.value; show(); changed(); });
    also.addEventListener("change", () => { choice.alsoText = also.checked; show(); changed(); });
    name.addEventListener("input", () => {
      if (choice.role === "meta") choice.key = name.value; else choice.field = name.value;
      label();
      changed();
    });
    show();
    return el("div", { class: "map-row", "data-column": choice.column },
      el("div", { class: "map-col" }, el("strong", {}, choice.column),
        sample(i) ? el("span", { class: "small muted" }, `例: ${cut(sample(i))}`) : null),
      el("label", {}, "使い方", select), el("div", { class: "map-extra" }, alsoBox, nameBox));
  });
  const sourceType = el("input", { type: "text", id: "source-type", maxlength: "64", autocomplete: "off", placeholder: "例: store" });
  sourceType.value = start.source_type || "";
  sourceType.addEventListener("input", () => { state.touched = true; onChange(); });
  const table = el("div", { class: "scroll" }, el("table", { class: "preview-rows" },
    el("thead", {}, el("tr", {}, columns.map((c, i) => el("th", { scope: "col" }, c, el("br", {}), tags[i])))),
    el("tbody", {}, (preview.rows || []).map((r) => el("tr", {}, columns.map((_, i) => el("td", { class: "small" }, cut(String(r[i] ?? "")))))))));
  const where = preview.current ? "このコレクションに保存された割り当て" : "列名と値からの推定";
  box.append(
    el("p", { class: "small muted" }, `最初の割り当ては${where}です。列ごとに選び直せます(日付は YYYY-MM-DD などを読み取ります)。`),
    el("div", { class: "mapping" }, rows),
    el("label", { class: "map-type" }, "種別(source_type・任意)", sourceType),
    el("h3", {}, `先頭 ${(preview.rows || []).length} 行`),
    table,
  );
  return { choices: () => choices, sourceType: () => sourceType.value, family, state };
}
