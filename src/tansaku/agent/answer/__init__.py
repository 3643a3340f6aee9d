"""The offline answer engine: one generic answer over every collection in the caller's scope
(``engine.answer_scope``), from calibrated candidates (``candidates``, ``calibration``) and the
sentences they hold (``sentences``); roles (``roles``) only shape the answer."""

from tansaku.agent.answer.engine import Outcome, answer_scope

__all__ = ["Outcome", "answer_scope"]
