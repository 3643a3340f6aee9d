"""Request bodies of the JSON API (pydantic, unknown fields refused) and their conversion to
the library's types. Limits that the library checks (query length, control characters, top_k,
team names) are left to it, so the API and the CLI refuse the same things with the same
messages."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tansaku.config import (
    DEFAULT_DENSE_GATE,
    DEFAULT_DENSE_LENGTH,
    DEFAULT_DENSE_LENGTH_MAX,
    DEFAULT_DENSE_LENGTH_POWER,
    DEFAULT_NORMALIZATION,
    MAX_DENSE_GATE,
    MAX_DENSE_LENGTH,
    MAX_DENSE_LENGTH_MAX,
    MAX_DENSE_LENGTH_POWER,
    Axis,
    AxisMode,
    FusionConfig,
    FusionMethod,
    default_gate,
    default_length,
)
from tansaku.errors import ConfigError, InvalidRequest
from tansaku.search.types import SearchRequest
from tansaku.server.dates import SupportedDate, SupportedMoment
from tansaku.store.base import Filter

Name = Annotated[str, Field(max_length=200)]
Short = Annotated[str, Field(max_length=10_000)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AxisBody(Body):
    name: Name
    mode: Literal["bm25", "dense", "bigram"]
    fields: Annotated[list[Name], Field(max_length=64)] = []
    weight: Annotated[float, Field(ge=0, le=1_000)] = 1.0


class FusionBody(Body):
    method: Literal["linear", "rrf"] = "linear"
    k: Annotated[int, Field(ge=1, le=10_000)] = 60
    normalization: Literal["max", "minmax", "zscore"] = DEFAULT_NORMALIZATION
    dense_gate: Annotated[float | None, Field(ge=0, le=MAX_DENSE_GATE)] = Field(
        default=None,
        description=f"既定: normalization を指定しないとき {DEFAULT_DENSE_GATE:g}、指定したとき 0",
    )

    dense_length: Annotated[float | None, Field(ge=0, le=MAX_DENSE_LENGTH)] = Field(
        default=None,
        description=(
            "短い記録の意味の軸を重くする語数: 既定は normalization も dense_gate も"
            f"指定しないとき {DEFAULT_DENSE_LENGTH:g}、指定したとき 0(使わない)"
        ),
    )
    dense_length_power: Annotated[float, Field(ge=0, le=MAX_DENSE_LENGTH_POWER)] = (
        DEFAULT_DENSE_LENGTH_POWER
    )
    dense_length_max: Annotated[float, Field(ge=1, le=MAX_DENSE_LENGTH_MAX)] = (
        DEFAULT_DENSE_LENGTH_MAX
    )

    def length(self) -> float:
        """``dense_length``, or its default for what the body names (or not)."""
        if self.dense_length is not None:
            return self.dense_length
        named = {"normalization", "dense_gate"} & self.model_fields_set
        return default_length({key: True for key in named})

    def gate(self) -> float:
        """``dense_gate``, or its default for the normalisation the body names (or not)."""
        if self.dense_gate is not None:
            return self.dense_gate
        named = (
            {"normalization": self.normalization}
            if "normalization" in self.model_fields_set
            else {}
        )
        return default_gate(named)


class FilterBody(Body):
    fields: Annotated[list[Name], Field(max_length=64)] = []
    date_from: SupportedDate | None = None
    date_to: SupportedDate | None = None
    doc_ids: Annotated[list[Name], Field(max_length=1_000)] = []


class SearchBody(Body):
    """The whole ``SearchRequest`` but the team (taken from the API key)."""

    query: Short
    collection: Name
    top_k: int | None = None
    axes: Annotated[list[AxisBody], Field(max_length=16)] | None = None
    fusion: FusionBody | None = None
    filter: FilterBody | None = None
    where: Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=32)] = []
    axis_queries: Annotated[dict[Name, Short], Field(max_length=16)] = {}
    """Axis name → the text that axis searches for instead of ``query``."""
    min_score: float | None = None
    group_by_doc: bool | None = None
    candidates: int | None = None
    now: SupportedMoment | None = None
    expand: bool | None = None
    synonyms: bool | None = None
    dates: bool | None = None
    rerank: bool | None = None
    retry: bool | None = None

    def to_request(self, team: str) -> SearchRequest:
        try:
            axes = (
                tuple(
                    Axis(
                        name=a.name,
                        mode=AxisMode.from_str(a.mode),
                        fields=tuple(a.fields),
                        weight=a.weight,
                    )
                    for a in self.axes
                )
                if self.axes
                else None
            )
            fusion = (
                FusionConfig(
                    method=FusionMethod.from_str(self.fusion.method),
                    k=self.fusion.k,
                    normalization=self.fusion.normalization,
                    dense_gate=self.fusion.gate(),
                    dense_length=self.fusion.length(),
                    dense_length_power=self.fusion.dense_length_power,
                    dense_length_max=self.fusion.dense_length_max,
                )
                if self.fusion
                else None
            )
            f = self.filter or FilterBody()
            flt = Filter(
                fields=tuple(f.fields),
                date_from=f.date_from,
                date_to=f.date_to,
                doc_ids=tuple(f.doc_ids),
            )
        except (ConfigError, ValueError) as exc:
            raise InvalidRequest(str(exc)) from None
        if axes is not None and len({a.name for a in axes}) != len(axes):
            raise InvalidRequest("軸(axes)の名前が重複しています")
        return SearchRequest(
            query=self.query,
            collection=self.collection,
            tenant=team,
            axes=axes,
            fusion=fusion,
            filter=flt,
            top_k=self.top_k,
            min_score=self.min_score,
            group_by_doc=self.group_by_doc,
            candidates=self.candidates,
            now=now_of(self.now),
            expand=self.expand,
            synonyms=self.synonyms,
            dates=self.dates,
            rerank=self.rerank,
            retry=self.retry,
            where=tuple(self.where),
            axis_queries=tuple(self.axis_queries.items()),
        )


def now_of(value: datetime | date | None) -> datetime | None:
    """``now`` as an aware Tokyo datetime (a date is its midnight; naive means Tokyo)."""
    if value is None:
        return None
    from tansaku.text.dates import parse_now

    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value
        return parse_now(value.isoformat(timespec="minutes"))
    return parse_now(value.isoformat())


class CollectionBody(Body):
    """A new collection: its name and, optionally, its config (the TOML's keys as JSON)."""

    name: Name
    config: dict[str, Any] | None = None


class SqlBody(Body):
    sql: Annotated[str, Field(max_length=20_000)]
    tool: Name = "sql"


class AskBody(Body):
    question: Annotated[str, Field(max_length=2_000)]
    collections: (
        Annotated[list[Name], Field(max_length=64)]
        | Annotated[dict[Name, Name], Field(max_length=64)]
        | None
    ) = None
    now: SupportedMoment | None = None
    conversation_id: Name | None = None
    store: Name | None = None
    user: Annotated[str, Field(max_length=100)] | None = None
    """Who asks (named to the model with the store, the date and the weekday)."""


Reason = Annotated[str, Field(max_length=300)]


class FeedbackBody(Body):
    """A rating (design 004): ``rating`` 1 (👍) or -1 / 0 (👎; 0 is the 0/1 form of the same
    rating, stored as -1); ``user_reason`` is another name of ``reason``. ``query_text`` and
    ``meta`` are accepted and never read (the query meta is rebuilt from the server's event);
    ``answer_text`` and ``session_id`` are kept only where the server has none."""

    query_id: Name
    rating: Literal[-1, 0, 1]
    reason: Reason | None = None
    user_reason: Reason | None = None
    query_text: Annotated[str, Field(max_length=2_000)] | None = None
    answer_text: Annotated[str, Field(max_length=20_000)] | None = None
    session_id: Annotated[str, Field(max_length=64)] | None = None
    meta: Annotated[dict[str, Any], Field(max_length=64)] | None = None
    correct_doc_id: Name | None = None
    """The result the user chose as the right one (「正しい結果はこれ」): a judgement."""
    correct_collection: Name | None = None
    """Its collection, when the search covered several."""

    @model_validator(mode="after")
    def _one_reason(self) -> FeedbackBody:
        if self.reason and self.user_reason and self.reason != self.user_reason:
            raise ValueError(
                "reason と user_reason は同じ理由の別名です。どちらか一つにしてください"
            )
        return self

    @property
    def stored_rating(self) -> int:
        """-1 (👎, sent as -1 or 0) or 1 (👍)."""
        return 1 if self.rating == 1 else -1

    @property
    def the_reason(self) -> str | None:
        return self.reason or self.user_reason


class MergeBody(Body):
    """Collections of the caller's team to merge into the one the path names."""

    sources: Annotated[list[Name], Field(min_length=1, max_length=32)]
    conflict: Literal["skip", "overwrite"] = "skip"
    """A document the destination (or an earlier source) has: kept (skip) or replaced."""


class ResetBody(Body):
    """The caller's team name, typed again: the reset removes all of its records."""

    confirm: Name
