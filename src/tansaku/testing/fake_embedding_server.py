"""A local fake embedding server: real HTTP on 127.0.0.1, two protocols, misbehaviour on demand.

It ships with the library (like the fake rerank server) so that remote embedders can be tested
and benchmarked with no model, no GPU and no network::

    with FakeEmbeddingServer(dim=64) as srv:
        emb = OpenAIEmbedder(base_url=f"{srv.url}/v1", model="fake-e5")
        emb.embed_passages(["料理が冷めていた", "駐車場の案内"])
        assert srv.requests[-1].body["input"] == ["料理が冷めていた", "駐車場の案内"]

Endpoints: ``POST /v1/embeddings`` (the OpenAI API, also served by TEI, vLLM, Infinity and
Ollama: ``input`` a string or a list of strings, ``encoding_format`` ``float`` or ``base64``,
``dimensions``), ``POST /v1beta/models/{model}:batchEmbedContents`` and ``…:embedContent``
(the Gemini API, ``taskType`` and ``outputDimensionality``), ``GET /health``, and for a
benchmark that runs the server in its own process (``python -m
tansaku.testing.fake_embedding_server --rate 1000``) ``GET /stats`` and ``POST /reset``.

Vectors are deterministic: a signed hashed bag of the text's character bigrams (NFKC,
lowercased, no whitespace), so texts sharing wording are near each other, Japanese included.

Behaviour knobs are attributes read on every request, so a test may change them while the
server runs: ``status`` and ``delay_s`` (every request), ``max_batch`` (more inputs than that:
413 on the OpenAI path as TEI answers, 400 ``INVALID_ARGUMENT`` on Gemini's), ``rate`` (a
service rate in texts per second: the server embeds one batch at a time, each taking
``len(batch) / rate`` seconds, like one GPU) and ``latency_s`` (per-request time that does not
hold the device, like a network round trip), ``gather`` (hold the first requests until that
many are in flight together: concurrency tests that do not depend on thread timing).
:meth:`fail_next` scripts the next requests'
faults (:class:`Fault`: an HTTP status with ``Retry-After``, a delay, a wrong dimension, fewer
vectors than inputs). Every request is recorded (:attr:`requests`), with the peak number of
requests in flight (:attr:`max_in_flight`) and the texts embedded (:attr:`texts_embedded`).
"""

from __future__ import annotations

import base64
import math
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tansaku.testing._http_fake import (
    HTTPRequest,
    ProtocolRequest,
    Reject,
    Response,
    ServiceFake,
    bearer_refused,
    header,
    json_response,
)
from tansaku.testing.fake_embedding_wire import (
    GEMINI_PATH,
    fake_vector,
    gemini_error,
    openai_error,
    parse_gemini,
    parse_openai,
)


@dataclass(frozen=True, kw_only=True)
class Fault:
    """One scripted misbehaviour for one request (see :meth:`FakeEmbeddingServer.fail_next`)."""

    status: int | None = None
    """Answer with this HTTP error (e.g. 429, 500, 503)."""
    retry_after: float | None = None
    """With a 429/503: ``Retry-After`` (whole seconds, rounded up) and ``retry-after-ms``
    headers on the OpenAI path, a ``RetryInfo`` detail on Gemini's."""
    delay_s: float = 0.0
    """Sleep before answering (past the client's timeout, to test timeouts)."""
    wrong_dim: int | None = None
    """Answer vectors of this many dimensions instead of the requested ones."""
    drop: int = 0
    """Answer this many vectors fewer than inputs."""


@dataclass(frozen=True)
class FakeRequest(ProtocolRequest):
    """One request the fake server received (``protocol``: ``"openai"``, ``"gemini"`` or
    ``""``), recorded before any check."""

    texts: tuple[str, ...] = field(default=())
    """The input texts, when the body could be parsed."""


class FakeEmbeddingServer(ServiceFake[FakeRequest]):
    """An embedding server on 127.0.0.1 (ephemeral port) in a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    server_name = "FakeEmbedding/1.0"
    keep_alive = True  # as the SDKs' connection pools expect
    request_queue_size = 64

    def __init__(
        self,
        *,
        dim: int = 256,
        api_key: str | None = None,
        max_batch: int | None = 128,
        rate: float | None = None,
        latency_s: float = 0.0,
        delay_s: float = 0.0,
        status: int | None = None,
    ) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, not {dim!r}")
        if rate is not None and rate <= 0:
            raise ValueError(f"rate must be positive texts per second, not {rate!r}")
        super().__init__(api_key=api_key, delay_s=delay_s, status=status)
        self.dim = dim
        self.max_batch = max_batch
        self.rate = rate
        self.latency_s = latency_s
        self.texts_embedded = 0
        self.busy_s = 0.0
        """Seconds the simulated device spent embedding (with ``rate``)."""
        self.overruns = 0
        self._faults: deque[Fault] = deque()
        self._in_flight = 0
        self.gather = 0
        """Hold requests until this many are in flight at once (then never again; at most 5 s):
        makes concurrency tests independent of thread timing."""
        self.max_in_flight = 0
        self._peers = threading.Condition(self._lock)
        self._device = threading.Lock()

    # -- scripting and records ------------------------------------------------------------------

    def fail_next(self, *faults: Fault) -> None:
        """Queue faults: each of the next requests to an embedding path takes one, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def in_flight(self) -> int:
        """Requests being answered now (a client killed mid-request leaves its request here
        until the server has answered it)."""
        with self._lock:
            return self._in_flight

    @property
    def embedding_requests(self) -> list[FakeRequest]:
        """The requests to an embedding path (not ``/health`` or unknown paths)."""
        return [r for r in self.requests if r.protocol]

    def stats(self) -> dict[str, Any]:
        """Counters since the last reset (also served as ``GET /stats``; ``POST /reset``
        resets them), for a benchmark that runs the server in another process."""
        with self._lock:
            return {
                "requests": sum(1 for r in self._requests if r.protocol),
                "texts_embedded": self.texts_embedded,
                "busy_s": self.busy_s,
                "max_in_flight": self.max_in_flight,
                "overruns": self.overruns,
            }

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._faults.clear()
            self.max_in_flight = 0
            self.texts_embedded = 0
            self.busy_s = 0.0
            self.overruns = 0

    # -- handling -------------------------------------------------------------------------------

    def handle(self, request: HTTPRequest) -> Response:
        method, path = request.method, request.route
        if method == "GET" and path == "/stats":
            return json_response(200, self.stats())
        if method == "GET":
            return json_response(404, {"error": {"message": "Not Found"}})
        if path == "/reset":
            self.reset()
            return json_response(200, self.stats())
        return self._respond(path, request.headers, request.body)

    def _respond(self, path: str, headers: Mapping[str, str], body: Any) -> Response:
        gemini = GEMINI_PATH.match(path)
        protocol = "openai" if path == "/v1/embeddings" else "gemini" if gemini else ""
        with self._lock:
            fault = self._faults.popleft() if protocol and self._faults else Fault()
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self.gather and self._in_flight >= self.gather:
                self.gather = 0  # reached once: the gate stays open
            self._peers.notify_all()
            if self.gather:  # hold until enough requests are in flight together
                self._peers.wait_for(lambda: not self.gather or self._stop.is_set(), 5.0)
        try:
            if gemini is not None:
                result = self._gemini(gemini.group(1), gemini.group(2), headers, body, fault)
            elif protocol:
                result = self._openai(headers, body, fault)
            else:
                self._note(path, "", headers, body, [])
                result = json_response(404, {"error": {"message": f"no route for {path}"}})
        finally:
            with self._lock:
                self._in_flight -= 1
        return result

    def _note(
        self, path: str, protocol: str, headers: Mapping[str, str], body: Any, texts: Sequence[str]
    ) -> None:
        self._record(FakeRequest("POST", path, protocol, dict(headers), body, tuple(texts)))

    def _vectors(
        self, texts: Sequence[str], dims: Sequence[int | None], fault: Fault
    ) -> list[np.ndarray]:
        """The batch's vectors. With ``rate``, computed while holding the one simulated device
        for ``len(texts) / rate`` seconds in all (a batch the fake cannot compute that fast
        counts in ``overruns``: then the fake, not the client, set the pace)."""
        self.wait(self.latency_s)

        def compute() -> list[np.ndarray]:
            return [
                fake_vector(t, fault.wrong_dim or d or self.dim)
                for t, d in zip(texts, dims, strict=True)
            ]

        if self.rate is None:
            out = compute()
        else:
            with self._device:
                start = time.perf_counter()
                out = compute()
                due = len(texts) / self.rate
                spent = time.perf_counter() - start
                self.wait(due - spent)
                with self._lock:
                    self.busy_s += time.perf_counter() - start
                    self.overruns += int(spent > due)
        with self._lock:
            self.texts_embedded += len(texts)
        return out[: max(len(out) - fault.drop, 0)]

    def _openai(self, headers: Mapping[str, str], body: Any, fault: Fault) -> Response:
        try:
            model, texts, dims, fmt = parse_openai(body)
        except Reject as bad:
            self._note("/v1/embeddings", "openai", headers, body, [])
            return json_response(bad.status, openai_error(bad.status, bad.message))
        self._note("/v1/embeddings", "openai", headers, body, texts)
        self.wait(max(self.delay_s, fault.delay_s))
        if bearer_refused(headers, self.api_key):
            return json_response(401, openai_error(401, "Incorrect API key provided."))
        status = self.error_status(fault.status)
        if status is not None:
            extra: dict[str, str] = {}
            if fault.retry_after is not None:
                extra["Retry-After"] = str(math.ceil(fault.retry_after))
                extra["retry-after-ms"] = str(round(fault.retry_after * 1000))
            message = "Rate limit reached" if status == 429 else "fake server error"
            return json_response(status, openai_error(status, message), extra)
        if self.max_batch is not None and len(texts) > self.max_batch:
            message = f"batch size {len(texts)} > maximum allowed batch size {self.max_batch}"
            return json_response(413, openai_error(413, message))
        vectors = self._vectors(texts, [dims] * len(texts), fault)
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode("ascii")
                if fmt == "base64"
                else [float(x) for x in v],
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return json_response(200, {"object": "list", "data": data, "model": model, "usage": usage})

    def _gemini(
        self, model: str, method: str, headers: Mapping[str, str], body: Any, fault: Fault
    ) -> Response:
        path = f"/v1beta/models/{model}:{method}"
        try:
            texts, dims = parse_gemini(method, model, body)
        except Reject as bad:
            self._note(path, "gemini", headers, body, [])
            return json_response(bad.status, gemini_error(bad.status, bad.message))
        self._note(path, "gemini", headers, body, texts)
        self.wait(max(self.delay_s, fault.delay_s))
        if self.api_key is not None and header(headers, "x-goog-api-key") != self.api_key:
            message = "API key not valid. Please pass a valid API key."
            return json_response(400, gemini_error(400, message))
        status = self.error_status(fault.status)
        if status is not None:
            message = "Resource has been exhausted" if status == 429 else "fake server error"
            return json_response(status, gemini_error(status, message, fault.retry_after))
        if self.max_batch is not None and len(texts) > self.max_batch:
            message = f"* BatchEmbedContentsRequest.requests: at most {self.max_batch} requests"
            return json_response(400, gemini_error(400, message))
        vectors = self._vectors(texts, dims, fault)
        if method == "embedContent":
            return json_response(200, {"embedding": {"values": [float(x) for x in vectors[0]]}})
        return json_response(
            200, {"embeddings": [{"values": [float(x) for x in v]} for v in vectors]}
        )


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tansaku.testing.fake_embedding_server --rate 2000``: serve until killed;
    the first line printed is the server's URL."""
    import argparse

    ap = argparse.ArgumentParser(description="tansaku's fake embedding server (127.0.0.1)")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--rate", type=float, default=None, help="texts per second (one device)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds per request, off device")
    ap.add_argument("--max-batch", type=int, default=0, help="0: no limit")
    ap.add_argument("--api-key", default=None)
    args = ap.parse_args(argv)
    srv = FakeEmbeddingServer(
        dim=args.dim,
        rate=args.rate,
        latency_s=args.latency,
        max_batch=args.max_batch or None,
        api_key=args.api_key,
    ).start()
    print(srv.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()


if __name__ == "__main__":
    main()
