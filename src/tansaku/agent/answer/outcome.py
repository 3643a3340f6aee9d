"""What the generic answer returns and how it cites a hit."""

from __future__ import annotations

from dataclasses import dataclass

from tansaku.agent.events import Citation, Event
from tansaku.search.types import Hit
from tansaku.tools.scope.candidates import Candidate

SEARCH_TOOL = "search_collections"


@dataclass(frozen=True)
class Outcome:
    """A generic answer, or (``text`` None) why there is none."""

    text: str | None
    citations: tuple[Citation, ...]
    events: tuple[Event, ...]
    reason: str
    searched: tuple[str, ...]
    tentative: bool = False
    """An answer of candidates for the user to check (``reason`` says why it is not sure):
    shown with its sources, and logged as unanswered."""


def percent(p: float) -> str:
    return f"{round(p * 100)}%"


def where_of(c: Candidate) -> str:
    meta = c.hit.record.metadata
    title = c.title
    keys = ("date", "store", "author")
    parts = [str(meta[k]) for k in keys if meta.get(k) and str(meta[k]) not in title]
    return " ".join([*parts, title]).strip()


def citation_of(c: Candidate, tool: str = SEARCH_TOOL, section: str = "") -> Citation:
    """The citation of a candidate; ``section``: the heading of the quoted sentence, when the
    quote comes from another part of the document than the record the search matched."""
    return hit_citation(c.hit, c.collection, c.title, tool=tool, section=section)


def hit_citation(
    hit: Hit, collection: str, title: str = "", *, tool: str = SEARCH_TOOL, section: str = ""
) -> Citation:
    """The citation of a search hit of ``collection`` (title: its metadata's, else its id)."""
    meta = hit.record.metadata
    return Citation(
        doc_id=hit.doc_id,
        collection=collection,
        title=title or str(meta.get("title") or hit.doc_id),
        date=str(meta.get("date") or ""),
        store=str(meta.get("store") or ""),
        section=section or str(meta.get("section") or meta.get("chapter") or ""),
        tool=tool,
    )
