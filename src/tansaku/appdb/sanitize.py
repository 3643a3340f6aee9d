"""The free-text reason of a feedback, made safe to store and show (design 004).

In order: control characters removed (newlines kept, ``\\r\\n`` → ``\\n``, tabs → a space),
surrounding whitespace trimmed, at most :data:`MAX_REASON_CHARS` characters (a longer reason is
refused, not cut), e-mail addresses and phone numbers masked, then HTML-escaped — so a reason
shown anywhere, even unescaped by mistake, is inert text.
"""

from __future__ import annotations

import html
import re
import unicodedata

from tansaku.appdb.errors import InvalidInput

MAX_REASON_CHARS = 300
EMAIL_MASK = "[メールアドレス]"
PHONE_MASK = "[電話番号]"

_EMAIL = re.compile(r"[\w.+\-]+[@＠][\w\-]+(?:[.．][\w\-]+)+")
_SEP = r"[\s\-‐‑‒–—―−－ー]?"
#: Japanese numbers (03-1234-5678, 090-1234-5678, 0120-123-456, 0312345678, full-width too) and
#: +81 forms; ``\d`` matches full-width digits as well.
_PHONE = re.compile(
    rf"(?<!\d)(?:[+＋]\d{{1,3}}{_SEP}[(（]?[0０]?\d{{1,4}}[)）]?|[(（]?[0０]\d{{1,4}}[)）]?)"
    rf"{_SEP}\d{{1,4}}{_SEP}\d{{3,4}}(?!\d)"
)


def strip_controls(text: str) -> str:
    """Control characters removed (newlines kept, ``\\r\\n`` → ``\\n``, tabs → a space)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return "".join(
        ch
        for ch in text
        if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn")
    )


def mask_personal_data(text: str) -> str:
    """E-mail addresses and phone numbers replaced by ``[メールアドレス]`` / ``[電話番号]``."""
    text = _EMAIL.sub(EMAIL_MASK, text)
    return _PHONE.sub(lambda m: PHONE_MASK if _digits(m.group()) >= 9 else m.group(), text)


def _digits(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


def clean_reason(reason: str | None) -> str | None:
    """The reason to store, or ``None`` for no reason; too long → :class:`InvalidInput`."""
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise InvalidInput("reason(理由)は文字列で指定してください")
    text = strip_controls(reason).strip()
    if not text:
        return None
    if len(text) > MAX_REASON_CHARS:
        raise InvalidInput(
            f"理由は {MAX_REASON_CHARS} 文字以内で入力してください(現在 {len(text)} 文字)"
        )
    return html.escape(mask_personal_data(text), quote=True)
