"""Japanese text analysis: normalisation, the Sudachi analyzer used at index and query time,
relative dates and synonyms (both applied at query time)."""

from tansaku.text.analyzer import DEFAULT_STOP_POS, Analyzer, SplitMode, TermForm, get_analyzer
from tansaku.text.dates import DateRange, DateResolution, now_tokyo, parse_now, resolve_dates
from tansaku.text.normalize import normalize
from tansaku.text.synonyms import Synonyms, builtin_domains, load_synonyms

__all__ = [
    "DEFAULT_STOP_POS",
    "Analyzer",
    "DateRange",
    "DateResolution",
    "SplitMode",
    "Synonyms",
    "TermForm",
    "builtin_domains",
    "get_analyzer",
    "load_synonyms",
    "normalize",
    "now_tokyo",
    "parse_now",
    "resolve_dates",
]
