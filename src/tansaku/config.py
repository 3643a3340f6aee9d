"""Collection configuration (TOML): axes, fusion, BM25 and analyzer settings, ingest mapping.

A collection's config names its fields and its **axes**. An axis searches some fields with one
mode (``bm25``, ``dense`` or ``bigram``) and carries a weight for fusion::

    name = "notes"
    source_type = "lab_note"

    [[axes]]
    name = "material"
    fields = ["materials_methods"]
    mode = "bm25"
    weight = 0.4

    [fusion]
    method = "linear"     # or "rrf"
    k = 60                # rrf only

    [ingest.markdown]     # parsed by tansaku.ingest (see docs/configuration.md)
    ...
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, TypeVar

from tansaku.errors import ConfigError

_E = TypeVar("_E", bound="ConfigEnum")
_S = TypeVar("_S", bound=StrEnum)


def enum_choice(cls: type[_S], key: str, error: Callable[[str], Exception]) -> _S:
    """The member of ``cls`` whose value is ``key``; for any other key, ``error(valid)`` is
    raised, ``valid`` being the members' values joined by ``", "``."""
    try:
        return cls(key)
    except ValueError:
        raise error(", ".join(m.value for m in cls)) from None


class ConfigEnum(StrEnum):
    """A config choice; ``from_str`` names the bad value and the valid ones in Japanese."""

    @classmethod
    def from_str(cls: type[_E], value: str) -> _E:
        label = _LABELS.get(cls.__name__, cls.__name__)
        return enum_choice(
            cls,
            value.strip().lower(),
            lambda valid: ConfigError(f"{label}「{value}」は使えません。使える値: {valid}"),
        )


class AxisMode(ConfigEnum):
    BM25 = "bm25"  # Sudachi terms of the whole record
    DENSE = "dense"  # the embedder's vector of the whole record
    BIGRAM = "bigram"  # character bigrams, scored per sentence: a record scores as its best


class FusionMethod(ConfigEnum):
    LINEAR = "linear"
    RRF = "rrf"


@dataclass(frozen=True, kw_only=True)
class Axis:
    """One retrieval leg: ``mode`` over ``fields`` (empty = every field), weighted in fusion."""

    name: str
    mode: AxisMode
    fields: tuple[str, ...] = ()
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("軸(axis)には name が必要です")
        if self.weight < 0:
            raise ConfigError(
                f"軸「{self.name}」の weight は 0 以上にしてください(現在: {self.weight})"
            )


_LABELS = {
    "AxisMode": "検索モード",
    "FusionMethod": "融合方式",
    "ExpandMode": "expand",
    "MergeMethod": "merge",
}
NORMALIZATIONS = ("max", "minmax", "zscore")
DEFAULT_NORMALIZATION: Final = "zscore"
DEFAULT_DENSE_GATE: Final = 3.0
MAX_DENSE_GATE: Final = 10.0
DEFAULT_DENSE_LENGTH: Final = 83.0
"""Records of fewer BM25 terms than this get their dense score weighed up (≈250 characters of
Japanese). Chosen on every set of the benchmark basket at once, each set's nDCG@10 against the
fusion without it (docs/benchmarks.md): the same setting wins with any one set left out on six
of the eight."""
DEFAULT_DENSE_LENGTH_POWER: Final = 1.0
DEFAULT_DENSE_LENGTH_MAX: Final = 1.5
MAX_DENSE_LENGTH: Final = 100_000.0
MAX_DENSE_LENGTH_POWER: Final = 4.0
MAX_DENSE_LENGTH_MAX: Final = 10.0


@dataclass(frozen=True, kw_only=True)
class FusionConfig:
    """``linear``: weighted sum of per-axis normalised scores (``max``: s/max, ``minmax``,
    ``zscore``: a tenth of the standard score over the axis' candidates);
    ``rrf``: weighted reciprocal rank fusion with constant ``k`` and 1-based ranks."""

    method: FusionMethod = FusionMethod.LINEAR
    k: int = 60
    normalization: str = DEFAULT_NORMALIZATION
    dense_gate: float = DEFAULT_DENSE_GATE
    """Linear only: dense axes weigh ``1 + dense_gate × (1 - coverage)`` times their weight,
    ``coverage`` being the share of the query's terms in the best BM25 hit (0: off)."""
    dense_length: float = DEFAULT_DENSE_LENGTH
    """Linear only: a dense axis's normalised score of a record of ``n`` BM25 terms is
    multiplied by ``clip((dense_length / n) ** dense_length_power, 1, dense_length_max)``:
    a small embedding model's vector of a short record says more about it than that of a long
    one, which averages several topics (0: off; a record of unknown length: × 1)."""
    dense_length_power: float = DEFAULT_DENSE_LENGTH_POWER
    dense_length_max: float = DEFAULT_DENSE_LENGTH_MAX

    def __post_init__(self) -> None:
        if self.k <= 0:
            raise ConfigError(f"RRF の k は 1 以上にしてください(現在: {self.k})")
        if not 0.0 <= self.dense_gate <= MAX_DENSE_GATE:
            raise ConfigError(
                f"[fusion] dense_gate は 0 以上 {MAX_DENSE_GATE:g} 以下にしてください"
                f"(現在: {self.dense_gate})"
            )
        if self.normalization not in NORMALIZATIONS:
            raise ConfigError(
                f"正規化「{self.normalization}」は使えません。"
                f"使える正規化: {', '.join(NORMALIZATIONS)}"
            )
        for key, value, lo, hi in (
            ("dense_length", self.dense_length, 0.0, MAX_DENSE_LENGTH),
            ("dense_length_power", self.dense_length_power, 0.0, MAX_DENSE_LENGTH_POWER),
            ("dense_length_max", self.dense_length_max, 1.0, MAX_DENSE_LENGTH_MAX),
        ):
            if not lo <= value <= hi:  # NaN fails too
                raise ConfigError(
                    f"[fusion] {key} は {lo:g} 以上 {hi:g} 以下にしてください(現在: {value})"
                )

    def length_factor(self, terms: int) -> float:
        """What a dense axis's score of a record of ``terms`` BM25 terms is multiplied by
        (``dense_length``; 1 when off or the length is unknown)."""
        if self.dense_length <= 0 or terms <= 0:
            return 1.0
        return min(
            self.dense_length_max,
            max(1.0, (self.dense_length / terms) ** self.dense_length_power),
        )


class ExpandMode(ConfigEnum):
    AUTO = "auto"  # expand queries classified as vague
    ALWAYS = "always"
    NEVER = "never"


class MergeMethod(ConfigEnum):
    HITS = "hits"  # hit_count × 10 + max similarity (the restaurant design)
    RRF = "rrf"


DEFAULT_FUNCTIONAL_WEIGHT = 0.5


@dataclass(frozen=True, kw_only=True)
class QueryConfig:
    """Query understanding: synonyms, relative dates, multi-query expansion, retry."""

    synonyms: tuple[str, ...] = ()  # built-in domains (restaurant, cards, lab) or YAML paths
    dates: bool = True  # resolve 昨日/先週/12月9日… into a date filter (if records have dates)
    expand: ExpandMode = ExpandMode.AUTO
    max_queries: int = 5
    merge: MergeMethod = MergeMethod.HITS
    source_weights: Mapping[str, float] = field(default_factory=dict)
    retry: bool = True
    budget_ms: int = 2000
    # weight of the query's functional phrasing (question endings, request phrases: どこに
    # 行けばいいですか, 〜について教えて) in its BM25 terms and bigrams; 1.0 weighs nothing down
    # (tansaku.text.functional). 0.5: ≥ 1.0 on every set of the benchmark basket, better on
    # the FAQ set (nta-qa +0.004 nDCG@10), niilc-qa and jnli-para; 0.3 cost lawqa-jp 0.007
    # (docs/benchmarks.md)
    functional_weight: float = DEFAULT_FUNCTIONAL_WEIGHT

    def __post_init__(self) -> None:
        if not 0.0 <= self.functional_weight <= 1.0:
            raise ConfigError(
                f"functional_weight は 0〜1 にしてください(現在: {self.functional_weight})"
            )
        if not 1 <= self.max_queries <= 10:
            raise ConfigError(f"max_queries は 1〜10 にしてください(現在: {self.max_queries})")
        if self.budget_ms <= 0:
            raise ConfigError(f"budget_ms は 1 以上にしてください(現在: {self.budget_ms})")


DEFAULT_AXES: tuple[Axis, ...] = (
    # Equal thirds: on jsquad-ir the bigram axis lifts nDCG@10 0.952 -> 0.961 and R@1
    # 0.916 -> 0.935 (docs/benchmarks.md); weights were not tuned.
    Axis(name="bm25", mode=AxisMode.BM25, weight=1 / 3),
    Axis(name="dense", mode=AxisMode.DENSE, weight=1 / 3),
    Axis(name="bigram", mode=AxisMode.BIGRAM, weight=1 / 3),
)


@dataclass(frozen=True, kw_only=True)
class CollectionConfig:
    """Everything that shapes how one collection is indexed and searched."""

    name: str
    description: str = ""
    source_type: str = ""
    axes: tuple[Axis, ...] = DEFAULT_AXES
    fusion: FusionConfig = field(default_factory=FusionConfig)
    top_k: int = 10
    min_score: float = 0.0
    group_by_doc: bool = True
    candidates: int = 100
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    split_mode: str = "A"
    chunk_size: int = 400
    chunk_overlap: int = 80
    ingest: Mapping[str, Any] = field(default_factory=dict)
    query: QueryConfig = field(default_factory=QueryConfig)
    rerank: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.axes:
            raise ConfigError(f"コレクション「{self.name}」に検索軸(axes)がありません")
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ConfigError(f"軸の名前が重複しています: {names}")
        if self.top_k <= 0:
            raise ConfigError(f"top_k は 1 以上にしてください(現在: {self.top_k})")
        if self.candidates < self.top_k:
            raise ConfigError(
                f"candidates({self.candidates}) は top_k({self.top_k}) 以上にしてください"
            )
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ConfigError(
                f"chunk_overlap({self.chunk_overlap}) は 0 以上 chunk_size({self.chunk_size}) "
                "未満にしてください"
            )
        if self.split_mode.upper() not in ("A", "B", "C"):
            raise ConfigError(f"split_mode は A/B/C のいずれかです(現在: {self.split_mode})")

    def with_name(self, name: str) -> CollectionConfig:
        return replace(self, name=name)

    def to_dict(self) -> dict[str, Any]:
        """A TOML/JSON-friendly view (round-trips through :func:`config_from_dict`)."""
        return {
            "name": self.name,
            "description": self.description,
            "source_type": self.source_type,
            "axes": [
                {"name": a.name, "mode": a.mode.value, "fields": list(a.fields), "weight": a.weight}
                for a in self.axes
            ],
            "fusion": {
                "method": self.fusion.method.value,
                "k": self.fusion.k,
                "normalization": self.fusion.normalization,
                "dense_gate": self.fusion.dense_gate,
                "dense_length": self.fusion.dense_length,
                "dense_length_power": self.fusion.dense_length_power,
                "dense_length_max": self.fusion.dense_length_max,
            },
            "search": {
                "top_k": self.top_k,
                "min_score": self.min_score,
                "group_by_doc": self.group_by_doc,
                "candidates": self.candidates,
            },
            "bm25": {"k1": self.bm25_k1, "b": self.bm25_b},
            "analyzer": {"split_mode": self.split_mode},
            "chunking": {"size": self.chunk_size, "overlap": self.chunk_overlap},
            "ingest": dict(self.ingest),
            "query": {
                "synonyms": list(self.query.synonyms),
                "dates": self.query.dates,
                "expand": self.query.expand.value,
                "max_queries": self.query.max_queries,
                "merge": self.query.merge.value,
                "source_weights": dict(self.query.source_weights),
                "retry": self.query.retry,
                "budget_ms": self.query.budget_ms,
                "functional_weight": self.query.functional_weight,
            },
            "rerank": dict(self.rerank),
        }


_TOP_KEYS = {
    "name",
    "description",
    "source_type",
    "axes",
    "fusion",
    "search",
    "bm25",
    "analyzer",
    "chunking",
    "ingest",
    "query",
    "rerank",
}
_QUERY_KEYS = {
    "synonyms",
    "dates",
    "expand",
    "max_queries",
    "merge",
    "source_weights",
    "retry",
    "budget_ms",
    "functional_weight",
}


def _num(
    raw: Mapping[str, Any], table: str, key: str, default: float, kind: Callable[[Any], Any] = float
) -> Any:
    """``raw[key]`` (or ``default``) as ``kind``; a ConfigError naming the key if no number."""
    value = raw.get(key, default)
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"[{table}] {key} は数値で指定してください(現在: {value!r})") from None


def default_gate(fusion: Mapping[str, Any]) -> float:
    """``dense_gate`` where ``[fusion]`` does not set it: 0 where the table names a normalisation
    (a config written before the gate existed keeps its ranking), else the default."""
    return DEFAULT_DENSE_GATE if "normalization" not in fusion else 0.0


def default_length(fusion: Mapping[str, Any]) -> float:
    """``dense_length`` where ``[fusion]`` does not set it: 0 where the table names a
    normalisation or a gate (every config written before the length weight existed does:
    its ranking stays), else the default."""
    return 0.0 if {"normalization", "dense_gate"} & set(fusion) else DEFAULT_DENSE_LENGTH


def _query_config(raw: Mapping[str, Any]) -> QueryConfig:
    unknown = set(raw) - _QUERY_KEYS
    if unknown:
        raise ConfigError(
            f"[query] に不明なキーがあります: {sorted(unknown)}。使えるキー: {sorted(_QUERY_KEYS)}"
        )
    syn = raw.get("synonyms", ())
    return QueryConfig(
        synonyms=(syn,) if isinstance(syn, str) else tuple(str(s) for s in syn),
        dates=bool(raw.get("dates", True)),
        expand=ExpandMode.from_str(str(raw.get("expand", "auto"))),
        max_queries=_num(raw, "query", "max_queries", 5, int),
        merge=MergeMethod.from_str(str(raw.get("merge", "hits"))),
        source_weights={str(k): float(v) for k, v in raw.get("source_weights", {}).items()},
        retry=bool(raw.get("retry", True)),
        budget_ms=_num(raw, "query", "budget_ms", 2000, int),
        functional_weight=_num(raw, "query", "functional_weight", DEFAULT_FUNCTIONAL_WEIGHT),
    )


def config_from_dict(data: Mapping[str, Any], *, name: str | None = None) -> CollectionConfig:
    """Build a config from parsed TOML/JSON; unknown keys are an error (typos must not pass)."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigError(
            f"設定に不明なキーがあります: {sorted(unknown)}。使えるキー: {sorted(_TOP_KEYS)}"
        )
    cname = name or data.get("name")
    if not cname:
        raise ConfigError("設定に name(コレクション名)がありません")
    axes_raw = data.get("axes")
    axes = DEFAULT_AXES
    if axes_raw is not None:
        try:
            axes = tuple(
                Axis(
                    name=str(a["name"]),
                    mode=AxisMode.from_str(str(a["mode"])),
                    fields=tuple(a.get("fields", ())),
                    weight=_num(a, "axes", "weight", 1.0),
                )
                for a in axes_raw
            )
        except (KeyError, TypeError) as exc:  # a key missing, or an entry that is no table
            raise ConfigError(f"[[axes]] には name と mode が必要です: {exc}") from None
    fusion_raw = data.get("fusion", {})
    fusion = FusionConfig(
        method=FusionMethod.from_str(str(fusion_raw.get("method", "linear"))),
        k=_num(fusion_raw, "fusion", "k", 60, int),
        normalization=str(fusion_raw.get("normalization", DEFAULT_NORMALIZATION)),
        dense_gate=_num(fusion_raw, "fusion", "dense_gate", default_gate(fusion_raw)),
        dense_length=_num(fusion_raw, "fusion", "dense_length", default_length(fusion_raw)),
        dense_length_power=_num(
            fusion_raw, "fusion", "dense_length_power", DEFAULT_DENSE_LENGTH_POWER
        ),
        dense_length_max=_num(fusion_raw, "fusion", "dense_length_max", DEFAULT_DENSE_LENGTH_MAX),
    )
    search = data.get("search", {})
    bm25 = data.get("bm25", {})
    chunking = data.get("chunking", {})
    return CollectionConfig(
        name=str(cname),
        description=str(data.get("description", "")),
        source_type=str(data.get("source_type", "")),
        axes=axes,
        fusion=fusion,
        top_k=_num(search, "search", "top_k", 10, int),
        min_score=_num(search, "search", "min_score", 0.0),
        group_by_doc=bool(search.get("group_by_doc", True)),
        candidates=_num(search, "search", "candidates", 100, int),
        bm25_k1=_num(bm25, "bm25", "k1", 0.9),
        bm25_b=_num(bm25, "bm25", "b", 0.4),
        split_mode=str(data.get("analyzer", {}).get("split_mode", "A")).upper(),
        chunk_size=_num(chunking, "chunking", "size", 400, int),
        chunk_overlap=_num(chunking, "chunking", "overlap", 80, int),
        ingest=dict(data.get("ingest", {})),
        query=_query_config(data.get("query", {})),
        rerank=dict(data.get("rerank", {})),
    )


def read_toml(path: Path, what: str = "設定ファイル") -> dict[str, Any]:
    """A TOML file's tables; a ``ConfigError`` naming ``what`` when it is missing or invalid."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what}が見つかりません: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} {path} の TOML が不正です: {exc}") from None


def load_config(path: str | Path, *, name: str | None = None) -> CollectionConfig:
    """Read a collection config from a TOML file."""
    return config_from_dict(read_toml(Path(path)), name=name)
