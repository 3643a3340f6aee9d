"""Japanese text analysis: normalisation and the Sudachi analyzer used at index and query time."""

from tansaku.text.analyzer import DEFAULT_STOP_POS, Analyzer, SplitMode, TermForm, get_analyzer
from tansaku.text.normalize import normalize

__all__ = ["DEFAULT_STOP_POS", "Analyzer", "SplitMode", "TermForm", "get_analyzer", "normalize"]
