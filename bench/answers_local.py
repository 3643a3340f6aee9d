"""The local GGUF model answering through the agent, against the offline engine, on a fixed
selection of the demo questions.

    python bench/answers_local.py --home /tmp/bench-demo --model ~/.tansaku/models/qwen2.5-0.5b
    python bench/answers_local.py --render run.json     # the Markdown of a run saved with --json

Needs ``pip install 'tansaku[local,tables]'`` and a model (``tansaku models install
qwen2.5-0.5b``). ``--home``: the demo built for 2025-12-11 with design 003's FAQ (built by
``bench/answer_demo.py``'s helpers when missing; use a copy: asking writes conversations).

Questions: per file ``bench/questions/design_00N.yaml``, the first 5 questions that do not expect
a decline and the first that does (30). Each is asked through ``tansaku.agent.ask`` (what
``tansaku ask`` calls) over its scope at 2025-12-11 09:00 Asia/Tokyo, with ``offline=True`` and
with the model ``load_model`` builds for provider ``llamacpp`` (ReAct with the per-step JSON
action schema, then reflection; default ``AgentLimits``); ``--threads`` builds the same class with
another thread count. Verdicts: ``bench/answer_demo.py``'s ``verdict``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import answer_demo as demo
import tansaku
from tansaku.agent import ask
from tansaku.agent.models.config import load_model, resolve_settings
from tansaku.agent.models.llamacpp import LlamaCppChatModel, to_llama_messages

RESULTS = demo.ROOT / "bench" / "results" / "answers_local.md"
PER_FILE = 5
PREVIEW = 90


def select(files: Sequence[demo.QuestionFile]) -> list[demo.Question]:
    """The first ``PER_FILE`` non-decline questions and the first decline question per file."""
    out: list[demo.Question] = []
    for f in files:
        out += [q for q in f.questions if q.expect != "decline"][:PER_FILE]
        out += [q for q in f.questions if q.expect == "decline"][:1]
    return out


class Metered:
    """The agent's model, every call timed and its tokens counted (``chat`` passed through)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return self.model.name

    def chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        start = time.perf_counter()
        call: dict[str, Any] = {"tools": bool(kwargs.get("tools")), "completion_tokens": 0}
        try:
            reply = self.model.chat(messages, **kwargs)
            call["completion_tokens"] = reply.usage.get("completion_tokens", 0)
            return reply
        except Exception as exc:
            call["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            call["seconds"] = time.perf_counter() - start
            # ≈: the rendered messages without the chat template's few special tokens
            rendered = to_llama_messages(messages, kwargs.get("tools", ()))
            text = "\n".join(m["content"] for m in rendered)
            call["prompt_tokens"] = len(self.model._llm.tokenize(text.encode(), add_bos=False))
            self.calls.append(call)


@dataclass
class Run:
    q: demo.Question
    engine: str
    right: bool
    reason: str
    seconds: float
    answer: str
    citations: list[str]
    model: str
    calls: list[dict[str, Any]]
    events: list[dict[str, Any]]

    @property
    def tools(self) -> list[str]:  # the model's: those before a failure handed the turn over
        cut = next((i for i, e in enumerate(self.events) if e["type"] == "error"), None)
        return [e.get("tool", "") for e in self.events[:cut] if e["type"] == "tool_call"]

    @property
    def errors(self) -> list[str]:
        return [e.get("text", "") for e in self.events if e["type"] == "error"]


def answer(ts: Any, tables: demo.ScopedTables, q: demo.Question, model: Any | None) -> Run:
    before = len(model.calls) if model is not None else 0
    start = time.perf_counter()
    scope = {"collections": list(q.collections), "now": demo.NOW, "tables": tables.get(q.tables)}
    got = ask(ts, q.question, **scope, model=model, offline=model is None)
    seconds = time.perf_counter() - start
    engine, calls = ("offline", []) if model is None else ("local", model.calls[before:])
    cites, events = [c.doc_id for c in got.citations], [e.to_dict() for e in got.events]
    return Run(q, engine, *demo.verdict(q, got), seconds, got.text, cites, got.model, calls, events)


def summary(runs: Sequence[Run]) -> dict[str, Any]:
    secs = [r.seconds for r in runs]
    out: dict[str, Any] = {
        "n": len(runs),
        "right": sum(r.right for r in runs),
        "median_s": statistics.median(secs),
        "p90_s": statistics.quantiles(secs, n=10, method="inclusive")[-1] if secs[1:] else secs[0],
        "by_expect": {
            k: f"{sum(r.right for r in sel)}/{len(sel)}"
            for k in demo.EXPECTS
            if (sel := [r for r in runs if r.q.expect == k])
        },
    }
    calls = [c for r in runs for c in r.calls]
    if calls:
        gen = sum(c["completion_tokens"] for c in calls)
        model_s = sum(c["seconds"] for c in calls)
        out |= {
            "fell_back": sum(r.model == "offline" for r in runs),
            "right_fell_back": sum(r.right and r.model == "offline" for r in runs),
            "model_calls": len(calls),
            "model_calls_per_answer": len(calls) / len(runs),
            "tool_calls_per_answer": sum(len(r.tools) for r in runs) / len(runs),
            "model_share_of_time": model_s / sum(secs),
            "prompt_tokens_median": statistics.median(c["prompt_tokens"] for c in calls),
            "prompt_tokens_max": max(c["prompt_tokens"] for c in calls),
            "generated_tokens": gen,
            "generated_tokens_per_model_second": gen / model_s,
        }
    return out


def machine() -> str:
    info = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((x.split(":", 1)[1].strip() for x in info if x.startswith("model name")), "?")
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cores"


def cell(text: str, limit: int | None = None) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if limit is None or len(flat) <= limit else flat[:limit] + "…"


def markdown(runs: Sequence[Run], meta: dict[str, Any]) -> str:
    by = {e: [r for r in runs if r.engine == e] for e in ("offline", "local")}
    sums = {e: summary(rs) for e, rs in by.items()}
    lines = [
        "# Answers of the local GGUF model through the agent, against the offline engine",
        "",
        f"Generated by `{meta['command']}` (do not edit by hand) on {meta['date']}, at "
        f"{meta['commit']} (working tree). Machine: {meta['machine']}; load average "
        f"{meta['load_before']} before, {meta['load_after']} after (the cores are shared). "
        f"Model: `{meta['model']}` ({meta['model_mb']} MB), llama-cpp-python "
        f"{meta['llama_cpp']}, threads: {meta['threads']}, loaded in {meta['load_s']:.1f} s.",
        "",
        "Questions: per design file the first 5 questions that do not expect a decline and the "
        "first that does (30). Each is asked through `tansaku.agent.ask` over its scope at "
        f"{demo.NOW.isoformat()}: `offline=True`, then the model ({meta['built']}: ReAct, then "
        "reflection; default `AgentLimits`). Verdicts: "
        "`bench/answer_demo.py` `verdict`. Seconds: wall time of one `ask` (after warm-up). "
        "Fell back: the model failed and the offline engine answered (counted as the model's).",
        "",
        "| engine | right | median s | p90 s | source | contains | decline |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for e, s in sums.items():
        kinds = " | ".join(s["by_expect"].get(k, "–") for k in demo.EXPECTS)
        lines.append(
            f"| {e} | {s['right']}/{s['n']} ({s['right'] / s['n']:.0%}) | {s['median_s']:.2f} "
            f"| {s['p90_s']:.2f} | {kinds} |"
        )
    loc = sums["local"]
    lines += [
        "",
        f"Local model: {loc['model_calls']} model calls ({loc['model_calls_per_answer']:.1f} per "
        f"answer, {loc['model_share_of_time']:.0%} of the time), "
        f"{loc['tool_calls_per_answer']:.1f} tool calls per answer, fell back to the offline "
        f"engine {loc['fell_back']} times ({loc['right_fell_back']} of the right answers are "
        f"the offline engine's, {loc['right'] - loc['right_fell_back']} the model's); "
        f"prompt ≈{loc['prompt_tokens_median']:.0f} tokens median, ≈{loc['prompt_tokens_max']} "
        f"max; {loc['generated_tokens']} tokens generated, "
        f"{loc['generated_tokens_per_model_second']:.1f} per second of model time (prompt "
        "processing included).",
        "",
        "| id | question | expected | offline | s | local | s | calls | tools | local answer |",
        "|---|---|---|---|---:|---|---:|---:|---|---|",
    ]
    for off, loc_run in zip(by["offline"], by["local"], strict=True):
        q = off.q

        def mark(r: Run) -> str:
            fb = " (fell back)" if r.engine == "local" and r.model == "offline" else ""
            return ("right" if r.right else f"**wrong**: {r.reason}") + fb

        lines.append(
            f"| {q.id} | {cell(q.question)} | {cell(demo._expected(q), 40)} | {cell(mark(off))} "
            f"| {off.seconds:.2f} | {cell(mark(loc_run))} | {loc_run.seconds:.1f} | "
            f"{len(loc_run.calls)} | {cell(', '.join(loc_run.tools)) or '–'} | "
            f"{cell(loc_run.answer, PREVIEW)} |"
        )
    lines += ["", "## The local model's answers and failures, verbatim", ""]
    for r in by["local"]:
        cites = ", ".join(r.citations) or "none"
        lines.append(f"- **{r.q.id}** {r.q.question} → {cell(r.answer)} (cited: {cites})")
        mine = [e for e in r.events if e["type"] in ("draft", "critique")]  # the model's words
        lines += [f"  - {e['type']}: {cell(e.get('text', ''), 300)}" for e in mine]
        lines += [f"  - error: {cell(e, 300)}" for e in r.errors]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> tuple[list[Run], dict[str, Any]]:
    home = args.home.resolve()
    gguf = args.model if args.model.suffix == ".gguf" else next(args.model.glob("*.gguf"))
    files = demo.load_files()
    demo.ensure_demo(home)
    demo.ensure_uploads(home, files)
    questions = select(files)[: args.limit]
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    override = {"provider": "llamacpp", "model": str(gguf)}
    if args.threads:  # what build_model builds, with another thread count (no setting for it)
        settings = resolve_settings(home, override=override)
        temperature = settings.temperature if settings else None
        chat = LlamaCppChatModel(gguf, temperature=temperature, n_threads=args.threads)
        built = f"`LlamaCppChatModel` as `build_model` builds it, `n_threads={args.threads}`"
    else:
        chat, built = load_model(home, override=override), "`load_model`, provider `llamacpp`"
    model = Metered(chat)
    started = time.perf_counter()
    model.model.warm_up()
    load_s = time.perf_counter() - started
    tables = demo.ScopedTables(home)
    try:
        with tansaku.connect(home, create=False) as ts:
            for scope in dict.fromkeys(q.scope for q in questions):  # embedder, shards, tables
                answer(ts, tables, replace(next(q for q in questions if q.scope == scope),
                       question=demo.WARM_UP), None)  # fmt: skip
            runs = [answer(ts, tables, q, None) for q in questions]
            for q in questions:
                r = answer(ts, tables, q, model)
                runs.append(r)
                print(f"{q.id} {'○' if r.right else '×'} {r.seconds:.1f}s {r.tools} "
                      f"{cell(r.answer, 60)}", file=sys.stderr, flush=True)  # fmt: skip
    finally:
        tables.close()
    import llama_cpp

    meta = {
        "command": "python bench/answers_local.py " + " ".join(args.argv),
        "date": datetime.now().astimezone().isoformat(timespec="minutes"),
        "commit": demo._commit(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "model": gguf.name,
        "model_mb": gguf.stat().st_size // 1_000_000,
        "llama_cpp": llama_cpp.__version__,
        "threads": model.model.n_threads,
        "built": built,
        "load_s": load_s,
    }
    return runs, meta


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="a demo workspace (a copy)")
    parser.add_argument("--model", type=Path, help=".gguf file or its folder")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--limit", type=int, help="only the first N questions (a smoke run)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--json", type=Path, help="also write every run (events too) here")
    parser.add_argument("--render", type=Path, help="a run saved with --json: Markdown only")
    args = parser.parse_args(argv)
    args.argv = argv
    if args.render:
        data = json.loads(args.render.read_text(encoding="utf-8"))
        by_id = {q.id: q for q in select(demo.load_files())}
        runs = [Run(**r | {"q": by_id[r["q"]]}) for r in data["runs"]]
        meta = data["meta"]
    elif args.home and args.model:
        runs, meta = run(args)
    else:
        parser.error("--home and --model are needed (or --render)")
    if args.json:
        data = {"meta": meta, "runs": [{**vars(r), "q": r.q.id} for r in runs]}
        args.json.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(runs, meta), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8").split("\n| id |")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
