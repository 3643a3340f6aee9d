"""Names a question gives that a record's metadata may hold: stores (新宿店) and people
(佐藤さん). Found by their form, never from a list, so a workspace's own stores and people are
recognised; whether a collection holds them is for its metadata to say."""

from __future__ import annotations

import re

_STORE = re.compile(r"[一-龥ァ-ヶー]{1,6}店(?!舗|長|員|内|頭)")
_PERSON = re.compile(r"([一-龥]{1,4}(?:[一-龥ぁ-んァ-ヶー]{0,4}))(?:さん|氏|様)(?!方)")
_NOT_PEOPLE = frozenset(["お客", "客", "皆", "皆さん", "店長", "担当"])
_DAY_WORDS = re.compile(
    r"^(?:一昨日|昨日|今日|本日|明日|先々週|先週|今週|来週|先々月|先月|今月|来月|毎日|毎週|全)"
)


def stores_in(text: str) -> list[str]:
    """Store names in ``text`` (新宿店 …), in order, without repeats."""
    names = [
        _DAY_WORDS.sub("", m.group(0))
        for m in _STORE.finditer(text)
        if not m.group(0).startswith("お")
    ]
    return list(dict.fromkeys(n for n in names if n not in ("店", "本店", "各店", "")))


def people_in(text: str) -> list[str]:
    """People named with an honorific in ``text`` (佐藤さん → 佐藤, 高橋美咲さん → 高橋美咲)."""
    names = [m.group(1) for m in _PERSON.finditer(text)]
    return list(dict.fromkeys(n for n in names if n not in _NOT_PEOPLE))
