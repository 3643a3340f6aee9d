"""Evaluation: datasets (BEIR, judgement files), configurations, metrics (ranx), reports.

>>> import tansaku
>>> from tansaku.eval import load_dataset, run_eval
>>> report = run_eval(tansaku.connect(), load_dataset("examples/eval/cards.yaml"))
>>> report.to_dict()                                   # the `tansaku eval --json` object

Needs the ``eval`` extra (ranx): ``pip install 'tansaku[eval]'``.
"""

from tansaku.eval.configs import (
    EvalConfig,
    default_configs,
    eval_config_from_dict,
    load_eval_config,
)
from tansaku.eval.dataset import DatasetKind, EvalDataError, EvalDataset, load_dataset
from tansaku.eval.metrics import METRIC_KEYS, percentile, score_run
from tansaku.eval.report import markdown_table, write_report
from tansaku.eval.runner import ConfigResult, EvalReport, run_eval

__all__ = [
    "METRIC_KEYS",
    "ConfigResult",
    "DatasetKind",
    "EvalConfig",
    "EvalDataError",
    "EvalDataset",
    "EvalReport",
    "default_configs",
    "eval_config_from_dict",
    "load_dataset",
    "load_eval_config",
    "markdown_table",
    "percentile",
    "run_eval",
    "score_run",
    "write_report",
]
