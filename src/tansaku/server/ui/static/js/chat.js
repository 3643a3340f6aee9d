// エージェント対話: POST /api/ask as server-sent events read with fetch + ReadableStream;
// thoughts and tool calls rendered live in a <details>, the reflection shown, citations linked
// to their records, 👍/👎 through /api/feedback, the conversation kept per tab; the team's past
// conversations listed from GET /api/conversations and reopened from /api/conversations/{id}
// (a reopened answer is rated through the query_id stored with it).
import { api, append, citationList, clear, csrfToken, dateTime, el, errorOf, num, toast } from "./api.js";
import { TOOL_LABELS, toolLabel } from "./labels.js";

const STORE_KEY = "tansaku.chat";
const messages = document.getElementById("messages");
const form = document.getElementById("ask-form");
const question = document.getElementById("question");
const send = document.getElementById("send");
const picker = document.getElementById("collections");
const convLabel = document.getElementById("conversation-label");
const historyList = document.getElementById("history");
const HISTORY_SHOWN = 30;

let chat = loadChat();

function loadChat() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
    if (saved && Array.isArray(saved.turns)) return saved;
  } catch (_) { /* a broken entry starts afresh */ }
  return { conversationId: null, turns: [] };
}

function saveChat() {
  sessionStorage.setItem(STORE_KEY, JSON.stringify(chat));
  // the id itself is no reading for a person: kept as data-id and in the tooltip
  convLabel.textContent = chat.conversationId ? `会話中(${chat.turns.length} 往復)` : "";
  if (chat.conversationId) {
    convLabel.dataset.id = chat.conversationId;
    convLabel.title = `会話 ID: ${chat.conversationId}`;
  } else {
    delete convLabel.dataset.id;
    convLabel.removeAttribute("title");
  }
}

const EVENT_LABELS = {
  thought: "考え", tool_call: "ツール呼び出し", tool_result: "ツールの結果", draft: "下書き",
  critique: "推敲(リフレクション)", answer: "回答", error: "エラー",
};

function eventNode(ev) {
  const label = EVENT_LABELS[ev.type] || ev.type;
  const tool = toolLabel(ev.tool);
  if (ev.type === "tool_call") {
    const args = ev.arguments || {};
    const what = [args.query ? `「${args.query}」` : "", Array.isArray(args.collections) ? `(${args.collections.join("、")})` : ""].join("");
    const node = el("div", { class: "ev", "data-type": ev.type }, `🔧 ${tool}${what ? ": " + what : ""}`);
    const rest = Object.keys(args).filter((k) => k !== "query" && k !== "collections");
    if (rest.length || !(ev.tool in TOOL_LABELS)) {
      node.append(el("details", { class: "small" }, el("summary", {}, "詳細"),
        el("code", {}, `${ev.tool}(${JSON.stringify(args)})`)));
    }
    return node;
  }
  if (ev.type === "tool_result") {
    return el("details", { class: "ev", "data-type": ev.type },
      el("summary", {}, `📄 ${tool}の結果`), el("pre", { class: "light" }, ev.text || ""));
  }
  const icon = { thought: "💭", draft: "📝", critique: "🔍", answer: "✅", error: "⚠️" }[ev.type] || "•";
  return el("div", { class: "ev", "data-type": ev.type }, `${icon} ${label}: `, ev.text || "");
}

const NO_ID_TIP = "この回答は、回答と評価を結び付ける ID(query_id)を会話に保存するようになる前に"
  + "記録されたため、あとから評価できません。新しく質問した回答は履歴から開いても評価できます。";

/** After a 👎: 「正しい結果はこれ」 on one of the answer's sources, stored as a judgement. */
function correctNode(turn) {
  const box = el("div", { class: "small correct-pick" }, el("span", { class: "muted" }, "正しい出典があれば選んでください: "));
  for (const c of turn.citations) {
    const button = el("button", { type: "button", class: "correct", "data-doc": c.doc_id }, `正しい結果はこれ: ${c.title || c.doc_id}`);
    button.addEventListener("click", async () => {
      for (const b of box.querySelectorAll("button")) b.disabled = true;
      try {
        await api("/api/feedback", { method: "POST", json: { query_id: turn.queryId, rating: -1, correct_doc_id: c.doc_id, correct_collection: c.collection } });
        turn.corrected = true;
        saveChat();
        box.replaceWith(el("span", { class: "small ok" }, "正しい結果として記録しました"));
      } catch (err) {
        for (const b of box.querySelectorAll("button")) b.disabled = false;
        toast(err.message, true);
      }
    });
    box.append(button);
  }
  return box;
}

function ratingNode(turn) {
  const box = el("div", { class: "rate" });
  if (!turn.queryId) {
    const text = turn.past ? "この回答は評価できません(以前の版で記録された回答です)" : "この回答には評価用の ID がありません";
    box.append(el("span", { class: "small muted no-rating", title: NO_ID_TIP, tabindex: "0", "aria-label": `${text}。${NO_ID_TIP}` }, text, " ⓘ"));
    return box;
  }
  if (turn.rated) {
    const done = turn.rated > 0 ? "👍" : "👎";
    box.append(el("span", { class: "small ok" }, turn.past && !turn.ratedNow ? `${done} 評価済みです` : `${done} 評価を送信しました`));
    if (turn.rated < 0 && turn.ratedNow && !turn.corrected && (turn.citations || []).length) box.append(correctNode(turn));
    return box;
  }
  const reason = el("input", { type: "text", maxlength: "300", placeholder: "理由(任意・300字まで)", "aria-label": "評価の理由" });
  const up = el("button", { type: "button", title: "役に立った", "aria-label": "良い" }, "👍 良い");
  const down = el("button", { type: "button", title: "役に立たなかった", "aria-label": "悪い" }, "👎 悪い");
  const rate = async (rating) => {
    up.disabled = down.disabled = true;
    try {
      const body = { query_id: turn.queryId, rating };
      if (reason.value.trim()) body.reason = reason.value.trim();
      await api("/api/feedback", { method: "POST", json: body });
      turn.rated = rating;
      turn.ratedNow = true;
      saveChat();
      box.replaceWith(ratingNode(turn));
      toast("評価を送信しました。ありがとうございます");
    } catch (err) {
      up.disabled = down.disabled = false;
      toast(err.message, true);
    }
  };
  up.addEventListener("click", () => rate(1));
  down.addEventListener("click", () => rate(-1));
  return append(box, [reason, up, down]);
}

/** The bot's message of one turn; returns updaters for streaming. */
function botMessage(turn) {
  const node = el("div", { class: "msg-bot" });
  const trace = el("details", { class: "trace" }, el("summary", {}, "考えとツール呼び出し"));
  const reflection = el("div", { class: "reflection hidden" });
  const answer = el("div", { class: "answer pending" }, "考えています");
  const tail = el("div", {});
  if (turn.past) trace.classList.add("hidden");  // the stored turn keeps no events
  node.append(trace, reflection, answer, tail);
  let count = 0;
  const update = {
    event(ev) {
      if (ev.type === "answer") {  // shown as the answer itself, not twice
        if (ev.text) answer.textContent = ev.text;
        return;
      }
      count += 1;
      trace.firstChild.textContent = `考えとツール呼び出し(${count})`;
      trace.append(eventNode(ev));
      if (ev.type === "critique" && ev.text) {
        reflection.classList.remove("hidden");
        clear(reflection).append(el("strong", {}, "推敲: "), ev.text);
      }
    },
    final(data) {
      answer.classList.remove("pending");
      answer.textContent = data.answer;
      trace.open = false;
      clear(tail);
      if (data.unanswered) tail.append(el("p", { class: "small warn" }, "裏付けが見つからなかったため、未回答ログに記録しました。"));
      turn.citations = data.citations || [];
      append(tail, [citationList(data.citations), ratingNode(turn)]);
    },
    error(message) {
      answer.classList.remove("pending");
      clear(answer).append(el("span", { class: "error", role: "alert" }, message));
    },
  };
  return { node, trace, update };
}

function renderTurn(turn) {
  messages.append(el("div", { class: "msg-user" }, turn.question));
  const bot = botMessage(turn);
  messages.append(bot.node);
  return bot;
}

function restore() {
  clear(messages);
  for (const turn of chat.turns) {
    const bot = renderTurn(turn);
    for (const ev of turn.events || []) bot.update.event(ev);
    if (turn.final) bot.update.final(turn.final);
    else if (turn.error) bot.update.error(turn.error);
  }
  saveChat();
}

function parseSse(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return { event, data: data.length ? JSON.parse(data.join("\n")) : null };
}

function chosenCollections() {
  const boxes = [...picker.querySelectorAll("input[type=checkbox]")];
  const picked = boxes.filter((b) => b.checked).map((b) => b.value);
  if (!picked.length) return null;
  return picked;
}

async function askQuestion(text) {
  const turn = { question: text, events: [], final: null, queryId: null, rated: 0 };
  chat.turns.push(turn);
  const bot = renderTurn(turn);
  bot.trace.open = true;
  const body = { question: text };
  if (chat.conversationId) body.conversation_id = chat.conversationId;
  const collections = chosenCollections();
  if (collections) body.collections = collections;
  try {
    const response = await fetch("/api/ask", {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { Accept: "text/event-stream", "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    });
    if (!response.ok) throw await errorOf(response);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const { event, data } = parseSse(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (event === "final") {
          turn.final = data;
          turn.queryId = data.query_id || null;
          if (data.conversation_id) chat.conversationId = data.conversation_id;
          saveChat();  // kept before it is shown: a reload right after the answer keeps it
          bot.update.final(data);
        } else if (event === "error") {
          throw new Error((data && data.error && data.error.message) || "回答の作成中にエラーが発生しました");
        } else if (data) {
          turn.events.push(data);
          bot.update.event(data);
        }
      }
    }
    if (!turn.final) throw new Error("回答の途中で接続が切れました。もう一度送信してください");
  } catch (err) {
    turn.error = err.message;
    bot.update.error(err.message);
  } finally {
    saveChat();
    loadHistory();
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (!text) return;
  send.disabled = true;
  question.value = "";
  try {
    await askQuestion(text);
  } finally {
    send.disabled = false;
    question.focus();
  }
});

// Enter sends, Shift+Enter breaks the line, as chat tools do; Enter that confirms an IME
// conversion (かな漢字変換) is the IME's, never a send.
question.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
  if (event.shiftKey) return;
  event.preventDefault();
  if (question.value.trim()) form.requestSubmit();
});

document.getElementById("new-conversation").addEventListener("click", () => {
  chat = { conversationId: null, turns: [] };
  restore();
  markCurrent();
});

/** The stored turns (user, assistant, user …) as the page's turns; an answer keeps the
 * query_id its rating goes to (none for answers recorded before it was stored) and the team's
 * latest rating of it. */
function pastTurns(conversationId, stored) {
  const turns = [];
  for (const t of stored) {
    if (t.role === "user") {
      turns.push({ question: t.text, events: [], final: null, queryId: null, rated: 0, past: true });
    } else if (turns.length && !turns[turns.length - 1].final) {
      const turn = turns[turns.length - 1];
      turn.final = { answer: t.text, citations: t.citations || [], conversation_id: conversationId };
      turn.queryId = t.query_id || null;
      turn.rated = t.rating || 0;
    }
  }
  for (const t of turns) if (!t.final) t.error = "この質問への回答は記録されていません";
  return turns;
}

async function openConversation(id) {
  try {
    const data = await api(`/api/conversations/${encodeURIComponent(id)}?limit=500`);
    chat = { conversationId: data.conversation_id, turns: pastTurns(data.conversation_id, data.turns) };
    restore();
    markCurrent();
    question.focus();
  } catch (err) {
    toast(err.message, true);
    loadHistory();
  }
}

function markCurrent() {
  for (const button of historyList.querySelectorAll("button[data-id]")) {
    const current = button.dataset.id === chat.conversationId;
    button.classList.toggle("current", current);
    if (current) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

async function loadHistory() {
  try {
    const data = await api("/api/conversations");
    clear(historyList);
    const items = data.conversations || [];
    if (!items.length) historyList.append(el("li", { class: "muted" }, "まだ会話がありません"));
    for (const c of items.slice(0, HISTORY_SHOWN)) {
      const title = c.title ? (c.title.length > 60 ? `${c.title.slice(0, 60)}…` : c.title) : "(質問なし)";
      const button = el("button", { type: "button", "data-id": c.id, title: c.title || "" }, title,
        el("span", { class: "when" }, `${num(Math.ceil(c.turns / 2))} 往復・${dateTime(c.updated_at)}`));
      button.addEventListener("click", () => openConversation(c.id));
      historyList.append(el("li", {}, button));
    }
    if (items.length > HISTORY_SHOWN) historyList.append(el("li", { class: "muted" }, `ほか ${num(items.length - HISTORY_SHOWN)} 件`));
    markCurrent();
  } catch (err) {
    clear(historyList).append(el("li", { class: "error" }, err.message));
  }
}

async function loadPicker() {
  try {
    const data = await api("/api/collections");
    clear(picker);
    if (!data.collections.length) picker.append(el("span", { class: "muted" }, "コレクションがありません"));
    for (const c of data.collections) {
      const box = el("input", { type: "checkbox", value: c.name });
      box.checked = true; // every collection answers unless the user leaves it out
      picker.append(el("label", { class: "inline" }, box, `${c.name}`, el("span", { class: "muted" }, c.description ? `— ${c.description}` : "")));
    }
  } catch (err) {
    clear(picker).append(el("span", { class: "error" }, err.message));
  }
}

restore();
loadPicker();
loadHistory();
