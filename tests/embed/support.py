"""Shared values for the remote-embedder tests."""

from __future__ import annotations

from tansaku.embed.remote import RemoteOptions

API_KEY = "sk-test-do-not-print-0123456789"

TEXTS = [
    "冷蔵庫の温度が上がらず、食材を廃棄した。",
    "冷蔵庫の温度が下がらないので業者を呼んだ。",
    "お客様から提供が遅いとのクレームがあった。",
    "レジの現金が千円合わなかった。",
    "食洗機から水漏れがあり、業者に修理を依頼した。",
    "駐車場の案内看板が倒れていた。",
    "ランチの唐揚げ定食が売り切れた。",
    "新人スタッフの研修を実施した。",
    "トイレの紙が切れていたとの指摘があった。",
    "店内のBGMが大きすぎるとの声があった。",
]


def fast(**overrides: object) -> RemoteOptions:
    """Options with short waits: retries back off 10 ms, a request times out after 2 s."""
    values: dict[str, object] = {
        "backoff_s": 0.01,
        "timeout": 2.0,
        "batch_size": 4,
        "concurrency": 2,
    }
    values.update(overrides)
    return RemoteOptions(**values)  # type: ignore[arg-type]
