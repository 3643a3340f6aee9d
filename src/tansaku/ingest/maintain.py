"""Index maintenance moved to the collection layer (``tansaku.apply``): the collection applies
an ingest plan and owns its statistics and indexes. These names stay importable from here."""

from tansaku.apply import (
    BATCH,
    CHECKPOINT_S,
    ENV_CHECKPOINT,
    Checkpoints,
    ProgressFn,
    build_units,
    ensure_units,
    reweight_drifted,
)

__all__ = [
    "BATCH",
    "CHECKPOINT_S",
    "ENV_CHECKPOINT",
    "Checkpoints",
    "ProgressFn",
    "build_units",
    "ensure_units",
    "reweight_drifted",
]
