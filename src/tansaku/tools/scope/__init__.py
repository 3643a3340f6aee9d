"""Searching a whole scope: every collection of the caller's scope searched with its own
config, each hit described by features that mean the same in every collection
(``candidates``), ranked together and judged answerable by calibrated models
(``calibration``, fitted by ``bench/fit_answerability.py``). The offline answer engine and the
agent's knowledge-base tool share it."""

from tansaku.tools.scope.calibration import calibrate, threshold_for, threshold_of
from tansaku.tools.scope.candidates import Candidate, Question, Retrieved, search_scope

__all__ = [
    "Candidate",
    "Question",
    "Retrieved",
    "calibrate",
    "search_scope",
    "threshold_for",
    "threshold_of",
]
