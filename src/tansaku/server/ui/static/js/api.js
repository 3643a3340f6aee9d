// Shared helpers of the UI pages: JSON API calls with the CSRF token, safe element building
// (text only — never innerHTML with data), toasts and small formatters.

const csrfMeta = document.querySelector('meta[name="csrf-token"]');
export const csrfToken = () => (csrfMeta ? csrfMeta.content : "");

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Read an error body of the API ({"error": {"code", "message"}}) as an ApiError. */
export async function errorOf(response) {
  let code = "http_" + response.status;
  let message = `サーバーがエラーを返しました(${response.status})`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (_) {
    /* not JSON: keep the generic message */
  }
  return new ApiError(response.status, code, message);
}

/** Call the API. `json` is sent as a JSON body, `form` as multipart; state-changing methods
 * always carry the session's CSRF token. Returns the parsed JSON (or null for no body). */
export async function api(path, { method = "GET", json, form, headers = {}, signal } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers }, signal,
    credentials: "same-origin" };
  if (method !== "GET" && method !== "HEAD") init.headers["X-CSRF-Token"] = csrfToken();
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (form !== undefined) {
    init.body = form;
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err && err.name === "AbortError") throw err;
    throw new ApiError(0, "network", "サーバーに接続できません。起動しているか確かめてください");
  }
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** Build an element: el("a", {href: "/x", class: "tag"}, "text", child…). Strings become
 * text nodes; attributes are set with setAttribute (no event-handler attributes). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) throw new Error("event handler attributes are not allowed");
    if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function toast(message, bad = false) {
  const box = document.getElementById("toast");
  if (!box) return;
  const item = el("div", { class: bad ? "msg bad" : "msg" }, message);
  box.append(item);
  setTimeout(() => item.remove(), bad ? 8000 : 4000);
}

/** Show an error in `target` (a container) as text, and return it. */
export function showError(target, err) {
  const message = err && err.message ? err.message : String(err);
  clear(target).append(el("p", { class: "error", role: "alert" }, message));
  return message;
}

export const num = (value, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? "—"
    : Number(value).toLocaleString("ja-JP", { maximumFractionDigits: digits,
      minimumFractionDigits: digits });

export const pct = (rate) => (rate === null || rate === undefined ? "—" : `${num(rate * 100, 1)}%`);

export function dateTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString("ja-JP", { timeZone: "Asia/Tokyo", year: "numeric", month: "2-digit",
    day: "2-digit", hour: "2-digit", minute: "2-digit" });
}

/** The link to the page of a cited/source record. */
export const recordHref = (collection, docId) =>
  `/records/${encodeURIComponent(collection)}/${encodeURIComponent(docId)}`;

/** An answer's citations as a numbered list of links to their records (title, section / date /
 * store, collection), or null when there are none. */
export function citationList(citations) {
  if (!citations || !citations.length) return null;
  return el("ol", { class: "cites" }, citations.map((c) => {
    const detail = [c.section, c.date, c.store].filter(Boolean).join(" / ");
    return el("li", {},
      el("a", { href: recordHref(c.collection, c.doc_id), target: "_blank", rel: "noopener" }, c.title || c.doc_id),
      detail ? el("span", { class: "muted small" }, `(${detail})`) : null,
      el("span", { class: "tag" }, c.collection));
  }));
}

/** Fill a <select> with the team's collections; returns their list. */
export async function loadCollections(select, { empty } = {}) {
  const data = await api("/api/collections");
  clear(select);
  if (empty) select.append(el("option", { value: "" }, empty));
  for (const c of data.collections) {
    select.append(el("option", { value: c.name }, `${c.name}(${num(c.records)} 件)`));
  }
  return data.collections;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
