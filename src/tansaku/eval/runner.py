"""Run an evaluation: prepare the collection(s), search every query per config, score.

>>> ds = load_dataset("../shared/data/jsquad-ir")
>>> report = run_eval(tansaku.connect(".tansaku-bench"), ds)
>>> report.to_dict()["configs"][0]["metrics"]["ndcg@10"]

BEIR corpora (and judgement files with ``source``) are ingested into a scratch collection named
``eval-<dataset>`` in the workspace, through the normal ingest path: the workspace's embedding
cache makes a second run embed nothing. A judgement file without ``source`` evaluates an existing
collection and never writes to it. Searches run with ``top_k=100``; each config is run once to
warm the query-vector cache, then timed, so ``latency_ms_*`` is search time with the query vector
cached (query embedding is measured on its own, see :attr:`EvalReport.query_embed_ms`).
"""

from __future__ import annotations

import platform
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tansaku.config import AxisMode, CollectionConfig, load_config
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.eval.configs import EvalConfig, default_configs
from tansaku.eval.dataset import DatasetKind, EvalDataError, EvalDataset
from tansaku.eval.metrics import percentile, score_run
from tansaku.ingest.apply import ensure_units
from tansaku.workspace import DEFAULT_TEAM

if TYPE_CHECKING:
    from tansaku.client import Tansaku
    from tansaku.ingest.pipeline import IngestReport

TOP_K = 100
EMBED_SAMPLE = 100  # queries embedded uncached to time the model alone
ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class ConfigResult:
    """One configuration's scores; ``to_dict`` is the ``--json`` shape."""

    name: str
    collection: str
    metrics: Mapping[str, float]  # METRIC_KEYS
    per_query: Mapping[str, Mapping[str, float]]  # query id -> ranx metrics
    rankings: Mapping[str, tuple[str, ...]]  # query id -> doc ids, best first (top 100)
    stage_ms_p50: Mapping[str, float]  # median of the engine's own timings_ms per stage
    zero_hit_queries: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "metrics": {k: round(v, 6) for k, v in self.metrics.items()}}


@dataclass(frozen=True)
class EvalReport:
    dataset: EvalDataset
    configs: tuple[ConfigResult, ...]
    ingest: Mapping[str, IngestReport] = field(default_factory=dict)  # collection -> report
    query_embed_ms: tuple[float, float] | None = None  # (p50, p95) of the model alone, uncached
    points: int = 0  # records (chunks) in the first evaluated collection
    date: str = ""
    machine: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset.name, "configs": [c.to_dict() for c in self.configs]}

    def config(self, name: str) -> ConfigResult:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)


def _slug(name: str) -> str:
    s = _SLUG.sub("-", name).strip("-_") or "dataset"
    return s if s[0].isalnum() else f"d{s}"


@contextmanager
def _quiet_events(ts: Tansaku) -> Iterator[None]:
    """Evaluation queries are not user searches: keep them out of the search-event log."""
    saved = ts.services.events
    if saved is not None:
        ts.with_services(events=None)
    try:
        yield
    finally:
        if saved is not None:
            ts.with_services(events=saved)


def _base(ts: Tansaku, ds: EvalDataset) -> tuple[str, CollectionConfig, bool]:
    """(collection name, its config, whether eval builds it from a source)."""
    if ds.kind is DatasetKind.BEIR:
        name = f"eval-{_slug(ds.name)}"[:64]
        return name, CollectionConfig(name=name), True
    if ds.source is not None:
        name = f"eval-{_slug(ds.collection or ds.name)}"[:64]
        cfg = load_config(ds.config, name=name) if ds.config else CollectionConfig(name=name)
        return name, cfg, True
    if not ds.collection:
        raise EvalDataError(
            f"{ds.path}: 評価するコレクションがわかりません"
            "(判定ファイルの collection か --collection で指定してください)"
        )
    if not ts.has_collection(ds.collection):
        raise CollectionNotFound(ds.collection, ts.workspace.collection_names())
    return ds.collection, ts.collection(ds.collection).config, False


def _target(name: str, conf: EvalConfig) -> str:
    """The collection a config searches: its own when it changes the index."""
    key = conf.index_key()
    return f"{name[:55]}-{key}" if key else name


def _prepare(
    ts: Tansaku,
    ds: EvalDataset,
    configs: Sequence[EvalConfig],
    team: str,
    progress: ProgressFn | None,
) -> tuple[dict[str, str], dict[str, IngestReport]]:
    """Config name -> collection to search; ingest reports of the scratch collections built."""
    name, base_cfg, builds = _base(ts, ds)
    where: dict[str, str] = {}
    reports: dict[str, IngestReport] = {}
    for conf in configs:
        key = conf.index_key()
        if key and not builds:
            raise ConfigError(
                f"評価設定「{conf.name}」は索引の設定([bm25]/[analyzer]/[chunking])を変えますが、"
                f"既存のコレクション「{name}」はそのまま評価します。判定ファイルに source を"
                "指定するか、索引の設定を外してください"
            )
        target = _target(name, conf)
        where[conf.name] = target
        if builds and target not in reports:
            assert ds.source is not None
            cfg = conf.apply_index(base_cfg).with_name(target)
            reports[target] = ts.ingest(
                [ds.source],
                collection=target,
                team=team,
                config=cfg,
                sync=True,
                progress=progress,
            )
            if reports[target].failed:
                first = reports[target].failed[0]
                raise EvalDataError(f"取り込みに失敗しました: {first.path}: {first.reason}")
        bigram = any(a.mode is AxisMode.BIGRAM for a in conf.axes or ())
        if bigram and not ts.collection(target).has_units(team):
            with ts.writing(target) as col:
                ensure_units(col, team)
    return where, reports


def resolve_qrels(
    ts: Tansaku, ds: EvalDataset, collection: str, team: str
) -> dict[str, dict[str, int]]:
    """Judgement files may name documents by id or by title; BEIR qrels are ids as they are."""
    if ds.kind is DatasetKind.BEIR:
        return {q: dict(r) for q, r in ds.qrels.items()}
    ids: set[str] = set()
    titles: dict[str, set[str]] = {}
    for info in ts.collection(collection).store.scan(team, with_meta=True):
        doc = info.record.doc_id
        ids.add(doc)
        title = info.record.metadata.get("title")
        if title:
            titles.setdefault(str(title), set()).add(doc)
    out: dict[str, dict[str, int]] = {}
    unknown: list[str] = []
    for q, rel in ds.qrels.items():
        resolved: dict[str, int] = {}
        for key, grade in rel.items():
            docs = {key} if key in ids else titles.get(key, set())
            if not docs:
                unknown.append(key)
            for d in docs:
                resolved[d] = max(grade, resolved.get(d, 0))
        out[q] = resolved
    if unknown:
        raise EvalDataError(
            f"{ds.path}: コレクション「{collection}」にない文書 ID・タイトルがあります: "
            f"{sorted(set(unknown))}"
        )
    return out


def _run_config(
    ts: Tansaku,
    ds: EvalDataset,
    conf: EvalConfig,
    collection: str,
    qrels: Mapping[str, Mapping[str, int]],
    team: str,
    progress: ProgressFn | None,
) -> ConfigResult:
    opts = conf.request_options()
    items = list(ds.queries.items())
    total = 2 * len(items)
    for i, (_, text) in enumerate(items, start=1):  # warm pass: query vectors into the cache
        ts.search(text, collection=collection, team=team, top_k=TOP_K, **opts)
        if progress:
            progress(f"search:{conf.name}", i, total)
    rankings: dict[str, tuple[str, ...]] = {}
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    zero: list[str] = []
    for i, (qid, text) in enumerate(items, start=len(items) + 1):
        t0 = time.perf_counter()
        res = ts.search(text, collection=collection, team=team, top_k=TOP_K, **opts)
        latencies.append((time.perf_counter() - t0) * 1000)
        for stage, ms in res.timings_ms.items():
            stages.setdefault(stage, []).append(float(ms))
        rankings[qid] = tuple(h.doc_id for h in res.hits)
        if not res.hits:
            zero.append(qid)
        if progress:
            progress(f"search:{conf.name}", i, total)
    means, per_query = score_run(qrels, rankings)
    metrics = {
        **means,
        "zero_hit_rate": len(zero) / len(items),
        "latency_ms_p50": percentile(latencies, 50),
        "latency_ms_p95": percentile(latencies, 95),
    }
    return ConfigResult(
        name=conf.name,
        collection=collection,
        metrics=metrics,
        per_query=per_query,
        rankings=rankings,
        stage_ms_p50={k: percentile(v, 50) for k, v in stages.items()},
        zero_hit_queries=tuple(zero),
    )


def _query_embed_ms(ts: Tansaku, ds: EvalDataset) -> tuple[float, float]:
    inner = ts.embedder.inner
    sample = list(ds.queries.values())[:EMBED_SAMPLE]
    inner.embed_queries(sample[:1])  # load the model outside the timing
    times = []
    for text in sample:
        t0 = time.perf_counter()
        inner.embed_queries([text])
        times.append((time.perf_counter() - t0) * 1000)
    return percentile(times, 50), percentile(times, 95)


def run_eval(
    ts: Tansaku,
    dataset: EvalDataset,
    configs: Sequence[EvalConfig] | None = None,
    *,
    team: str = DEFAULT_TEAM,
    measure_embedding: bool = True,
    progress: ProgressFn | None = None,
    keep: bool = True,
) -> EvalReport:
    """Evaluate ``configs`` (default: ``default``, ``bm25``, ``dense``) on ``dataset``.
    ``keep=False`` deletes the scratch collections it built once the report is made (what
    ``tansaku eval`` does unless ``--keep``); kept, a second run re-ingests nothing."""
    if configs is not None:
        names = [c.name for c in configs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"評価設定の名前が重複しています: {dupes}")
    if configs is None or not configs:
        _, base_cfg, _ = _base(ts, dataset)
        configs = default_configs(base_cfg)
    built: set[str] = set()
    try:
        return _evaluate(ts, dataset, configs, team, measure_embedding, progress, built)
    finally:
        if not keep:
            for name in sorted(built):
                if ts.has_collection(name):
                    ts.delete_collection(name)


def _evaluate(
    ts: Tansaku,
    dataset: EvalDataset,
    configs: Sequence[EvalConfig],
    team: str,
    measure_embedding: bool,
    progress: ProgressFn | None,
    built: set[str],
) -> EvalReport:
    name, _, builds = _base(ts, dataset)
    if builds:  # every collection it searches is a scratch one, even if _prepare fails midway
        built.update(_target(name, c) for c in configs)
    where, reports = _prepare(ts, dataset, configs, team, progress)
    first = where[configs[0].name]
    qrels = resolve_qrels(ts, dataset, first, team)
    results = []
    with _quiet_events(ts):
        for conf in configs:
            results.append(_run_config(ts, dataset, conf, where[conf.name], qrels, team, progress))
    uses_dense = any(
        a.mode is AxisMode.DENSE
        for conf in configs
        for a in (conf.axes or ts.collection(where[conf.name]).config.axes)
    )
    embed_ms = _query_embed_ms(ts, dataset) if measure_embedding and uses_dense else None
    return EvalReport(
        dataset=dataset,
        configs=tuple(results),
        ingest=reports,
        query_embed_ms=embed_ms,
        points=ts.collection(first).store.count(team),
        date=datetime.now(UTC).strftime("%Y-%m-%d"),
        machine=f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}",
    )


__all__ = ["ConfigResult", "EvalReport", "run_eval"]
