"""What a collection of the scope is, read from its config: the role that gives it specialised
tools and answer shapes (daily reports, manuals, lab notes, cards) — never what gets searched.

A collection is a *role* collection when its ``source_type`` says so; any other collection is
plain knowledge (an FAQ, a wiki, a folder of documents) and is answered generically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tansaku.config import CollectionConfig

REPORTS, MANUALS, NOTES, CARDS, KNOWLEDGE = "reports", "manuals", "notes", "cards", "knowledge"
ROLES = (REPORTS, MANUALS, NOTES, CARDS)
_BY_SOURCE_TYPE = {
    "daily_report": REPORTS,
    "bbs_post": REPORTS,
    "bbs_comment": REPORTS,
    "report": REPORTS,
    "manual": MANUALS,
    "lab_note": NOTES,
    "note": NOTES,
    "card": CARDS,
}
RECORD_KINDS = {
    "daily_report": ("日報",),
    "bbs_post": ("掲示板", "投稿"),
    "bbs_comment": ("コメント", "返信"),
}
"""A record's ``source_type`` → the words a question names it by (「高橋さんの日報で…」)."""
ROLE_LABELS = {
    REPORTS: "日報・掲示板",
    MANUALS: "マニュアル",
    NOTES: "実験ノート",
    CARDS: "カード",
    KNOWLEDGE: "ナレッジ",
}


def role_of(config: CollectionConfig | None) -> str:
    """The role a collection's config declares (``knowledge`` when none)."""
    if config is None:
        return KNOWLEDGE
    return _BY_SOURCE_TYPE.get((config.source_type or "").strip().lower(), KNOWLEDGE)


def scope_mapping(
    names: Sequence[str], configs: Mapping[str, CollectionConfig | None]
) -> dict[str, str]:
    """Collection names → the scope's role → name mapping: each role collection under its role
    (the first of a role; another of the same role under its own name), every other collection
    under its own name."""
    out: dict[str, str] = {}
    for name in dict.fromkeys(names):
        role = role_of(configs.get(name))
        key = role if role != KNOWLEDGE and role not in out else name
        out[key if key not in out else name] = name
    return out
