"""Quality and latency on jsquad-ir through ``tansaku eval`` (this script is a thin wrapper).

    python bench/jsquad.py      # tansaku eval ../shared/data/jsquad-ir --home .tansaku-bench
                                #   --config bench/configs/{default,bm25,dense,...}.toml
    python bench/jsquad.py examples/eval/cards.yaml --json   # any `tansaku eval` arguments

Without arguments it evaluates jsquad-ir with the default configuration, its three legs, the
two-axis default it replaced and the fusion variants in ``bench/configs/``; the bench workspace
``.tansaku-bench`` keeps the embedding cache, so only the first run embeds the corpus (~4.5
minutes on 2 cores).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from tansaku.cli.eval import register

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARGS = [
    str(ROOT.parent / "shared" / "data" / "jsquad-ir"),
    "--home",
    str(ROOT / ".tansaku-bench"),
    "--keep",
    *(
        arg
        for name in ("default", "bm25", "dense", "bigram", "bm25-dense", "linear-minmax", "rrf-k60")
        for arg in ("--config", str(ROOT / "bench" / "configs" / f"{name}.toml"))
    ),
]


def main(argv: list[str]) -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def root() -> None:
        """tansaku eval(bench から)"""

    register(app)
    app(["eval", *(argv or DEFAULT_ARGS)])


if __name__ == "__main__":
    main(sys.argv[1:])
