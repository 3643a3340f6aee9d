"""A local fake rerank server: real HTTP on 127.0.0.1, three protocols, misbehaviour on demand.

It ships with the library (like pydantic-ai's ``TestModel``) so that any code using
:mod:`tansaku.search.rerank` can be tested without a model or a network::

    with FakeRerankServer(api_key="k") as srv:
        reranker = HttpReranker(srv.url, protocol="tei", api_key="k")
        reranker.rerank("料理の温度", ["料理が冷めていた", "駐車場の案内"])
        assert srv.requests[-1].body["texts"] == ["料理が冷めていた", "駐車場の案内"]

Endpoints: ``POST /v2/rerank`` (Cohere v2), ``POST /rerank`` (Hugging Face TEI) and
``POST /v1/rerank`` (the Jina/Cohere-style API of Infinity and vLLM); ``GET /health``. Request
bodies are validated the way those servers do (Cohere: 400 ``{"message"}``; TEI: 422
``{"error", "error_type"}``; Infinity/vLLM: 422 ``{"detail": [...]}``), the ``Authorization:
Bearer`` header is checked when ``api_key`` is set (401), documents are scored by ``scorer`` and
``top_n`` is honoured. Misbehaviour knobs are plain attributes, read on every request, so a test
may change them while the server runs: ``delay_s``, ``status`` (answer every request with that
HTTP error, e.g. 500 or 429), ``malformed`` (``True``/``"json"``: invalid JSON; ``"shape"``: valid
JSON of the wrong shape), ``bad_index`` (an index past the end) and ``duplicate_index``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tansaku.testing._http_fake import (
    HTTPRequest,
    ProtocolRequest,
    Reject,
    Response,
    ServiceFake,
    bearer_refused,
    bigrams,
    json_response,
)

Scorer = Callable[[str, str], float]

PROTOCOL_PATHS = {"/v2/rerank": "cohere", "/rerank": "tei", "/v1/rerank": "openai"}
_NOT = {True: "Method Not Allowed", False: "Not Found"}


def bigram_overlap(query: str, document: str) -> float:
    """Share of the query's character bigrams found in the document (NFKC, lowercased, no
    whitespace): deterministic, in [0, 1], and meaningful for Japanese without a tokenizer."""
    q = set(bigrams(query))
    return len(q & set(bigrams(document))) / len(q) if q else 0.0


class FakeRequest(ProtocolRequest):
    """One request the fake server received (``protocol``: ``"cohere"``, ``"tei"``,
    ``"openai"`` or ``""``), recorded before any check."""


def _error_body(protocol: str, status: int, message: str, field: str = "") -> dict[str, Any]:
    if protocol == "tei":
        kind = {401: "Unauthorized", 413: "Overloaded", 429: "Overloaded"}.get(status, "Validation")
        return {"error": message, "error_type": kind if status < 500 else "Backend"}
    if protocol == "openai" and status == 422:
        return {"detail": [{"type": "value_error", "loc": ["body", field], "msg": message}]}
    if protocol == "openai":
        return {"detail": message}
    return {"message": message}


def _require_str(body: Mapping[str, Any], field: str, status: int) -> str:
    if field not in body:
        raise Reject(status, f"{field}: field required", field)
    if not isinstance(body[field], str):
        raise Reject(status, f"{field}: must be a string", field)
    return body[field]


def _require_strings(body: Mapping[str, Any], field: str, status: int) -> list[str]:
    if field not in body:
        raise Reject(status, f"{field}: field required", field)
    value = body[field]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Reject(status, f"{field}: must be a list of strings", field)
    return value


def _optional_int(body: Mapping[str, Any], field: str, minimum: int, status: int) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise Reject(status, f"{field}: must be an integer >= {minimum}", field)
    return value


def _parse(protocol: str, body: Any) -> tuple[str, list[str], int | None]:
    """(query, documents, top_n) as the real server would accept them, or :class:`Reject`."""
    status = 400 if protocol == "cohere" else 422
    if not isinstance(body, dict):
        raise Reject(status, "request body must be a JSON object")
    if protocol == "cohere":
        _require_str(body, "model", status)
        query = _require_str(body, "query", status)
        docs = _require_strings(body, "documents", status)
        return query, docs, _optional_int(body, "top_n", 1, status)
    if protocol == "tei":
        query = _require_str(body, "query", status)
        docs = _require_strings(body, "texts", status)
        if not docs:
            raise Reject(status, "`texts` cannot be empty", "texts")
        for flag in ("raw_scores", "truncate", "return_text"):
            if flag in body and not isinstance(body[flag], bool):
                raise Reject(status, f"{flag}: must be a boolean", flag)
        return query, docs, None
    if "model" in body and not isinstance(body["model"], str):
        raise Reject(status, "model: must be a string", "model")
    query = _require_str(body, "query", status)
    docs = _require_strings(body, "documents", status)
    top_n = _optional_int(body, "top_n", 0, status)  # vLLM: 0 means all
    return query, docs, top_n or None


class FakeRerankServer(ServiceFake[FakeRequest]):
    """A rerank server on 127.0.0.1 (ephemeral port) in a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    server_name = "FakeRerank/1.0"

    def __init__(
        self,
        *,
        scorer: Scorer = bigram_overlap,
        api_key: str | None = None,
        model: str = "fake-reranker",
        delay_s: float = 0.0,
        status: int | None = None,
        malformed: bool | str = False,
        bad_index: bool = False,
        duplicate_index: bool = False,
    ) -> None:
        if malformed not in (False, True, "json", "shape"):
            raise ValueError(f'malformed must be False, True, "json" or "shape", not {malformed!r}')
        super().__init__(api_key=api_key, delay_s=delay_s, status=status)
        self.scorer = scorer
        self.model = model
        self.malformed = malformed
        self.bad_index = bad_index
        self.duplicate_index = duplicate_index

    # -- handling -------------------------------------------------------------------------------

    def handle(self, request: HTTPRequest) -> Response:
        method, path, headers = request.method, request.route, request.headers
        if method == "GET":
            known = path in PROTOCOL_PATHS
            return json_response(405 if known else 404, {"detail": _NOT[known]})
        protocol = PROTOCOL_PATHS.get(path, "")
        body = request.body
        self._record(FakeRequest(method, path, protocol, dict(headers), body))
        if not protocol:
            return json_response(404, {"detail": "Not Found"})
        self.wait(self.delay_s)
        if bearer_refused(headers, self.api_key):
            return json_response(401, _error_body(protocol, 401, "invalid api token"))
        status = self.error_status()
        if status is not None:
            extra = {"Retry-After": "1"} if status == 429 else {}
            message = "too many requests" if status == 429 else "fake server error"
            return json_response(status, _error_body(protocol, status, message), extra)
        if body is None:
            status = 400 if protocol in ("cohere", "tei") else 422
            return json_response(
                status, _error_body(protocol, status, "body is not valid JSON", "body")
            )
        try:
            question, docs, top_n = _parse(protocol, body)
            ranked = sorted(
                ((i, float(self.scorer(question, d))) for i, d in enumerate(docs)),
                key=lambda pair: -pair[1],
            )
        except Reject as bad:
            return json_response(
                bad.status, _error_body(protocol, bad.status, bad.message, bad.field)
            )
        except Exception as err:  # a failing scorer is the server's fault
            return json_response(500, _error_body(protocol, 500, f"scorer failed: {err!r}"))
        ranked = self._misbehave(ranked[:top_n], len(docs))
        if self.malformed in (True, "json"):
            return (
                200,
                {"Content-Type": "application/json"},
                b'{"results": [{"index": 0, "relevance',
            )
        return json_response(
            200, self._payload(protocol, body, docs, ranked, self.malformed == "shape")
        )

    def _misbehave(self, ranked: list[tuple[int, float]], n_docs: int) -> list[tuple[int, float]]:
        if self.bad_index and ranked:
            ranked = [(n_docs + 3, ranked[0][1]), *ranked[1:]]
        if self.duplicate_index and ranked:
            dup = (ranked[0][0], ranked[1][1] if len(ranked) > 1 else ranked[0][1])
            ranked = [ranked[0], dup, *ranked[2:]]
        return ranked

    def _payload(
        self,
        protocol: str,
        body: Mapping[str, Any],
        docs: list[str],
        ranked: list[tuple[int, float]],
        wrong_shape: bool,
    ) -> Any:
        with self._lock:
            n = len(self._requests)
        if protocol == "tei":
            items: list[dict[str, Any]] = [{"index": i, "score": s} for i, s in ranked]
            if body.get("return_text"):
                for item in items:
                    item["text"] = docs[item["index"]] if item["index"] < len(docs) else ""
            return {"scores": items} if wrong_shape else items
        if protocol == "cohere":
            items = [{"index": i, "relevance_score": s} for i, s in ranked]
            return {
                "id": f"fake-{n}",
                "results": {"first": items[:1]} if wrong_shape else items,
                "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
            }
        items = [
            {
                "index": i,
                "relevance_score": s,
                "document": {"text": docs[i] if i < len(docs) else ""},
            }
            for i, s in ranked
        ]
        return {
            "id": f"rerank-fake-{n}",
            "object": "rerank",
            "model": body.get("model") or self.model,
            "usage": {"total_tokens": sum(len(d) for d in docs) + len(str(body.get("query", "")))},
            "results": {"first": items[:1]} if wrong_shape else items,
        }
