"""The fake chat servers themselves, spoken to with plain HTTP: they reject what the real
servers reject (so a client bug shows up in tests) and stream the real wire format."""

from __future__ import annotations

import json

import httpx

from tansaku.testing import FakeGeminiServer, FakeOpenAIServer, Reply

USER = {"role": "user", "content": "先週の売上は?"}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_sales_trend", "arguments": '{"period": "先週"}'},
}


def post(url: str, body: object, **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_openai_rejects_what_openai_rejects() -> None:
    with FakeOpenAIServer(api_key="k") as srv:
        url, auth = f"{srv.base_url}/chat/completions", {"authorization": "Bearer k"}
        cases = [
            ({"messages": [USER]}, "model"),
            ({"model": "m", "messages": []}, "too short"),
            ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "Supported values"),
            (
                {
                    "model": "m",
                    "messages": [USER, {"role": "tool", "tool_call_id": "x", "content": "{}"}],
                },
                "preceeding",
            ),
            (
                {"model": "m", "messages": [USER, {"role": "assistant", "tool_calls": [CALL]}]},
                "call_1",
            ),
            (
                {
                    "model": "m",
                    "messages": [USER],
                    "tools": [{"type": "function", "function": {"name": "売上"}}],
                },
                "pattern",
            ),
            (
                {"model": "m", "messages": [USER], "stream_options": {"include_usage": True}},
                "stream",
            ),
            (
                {"model": "m", "messages": [USER], "response_format": {"type": "json_schema"}},
                "json_schema.name",
            ),
        ]
        for body, needle in cases:
            r = post(url, body, **auth)
            assert r.status_code == 400, body
            error = r.json()["error"]
            assert needle in error["message"] and error["type"] == "invalid_request_error"
        r = post(url, {"model": "m", "messages": [USER]}, authorization="Bearer nope")
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        assert httpx.get(f"{srv.base_url}/models", timeout=10).json()["data"][0]["id"]


def test_openai_streams_tool_call_deltas_then_done() -> None:
    with FakeOpenAIServer([Reply.call("get_sales_trend", {"period": "先週"}, id="call_9")]) as srv:
        body = {
            "model": "m",
            "messages": [USER],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        r = post(f"{srv.base_url}/chat/completions", body)
        assert r.headers["content-type"] == "text/event-stream"
        events = [line for line in r.text.split("\n\n") if line]
        assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
        chunks = [json.loads(e[6:]) for e in events[:-1]]
        deltas = [c["choices"][0]["delta"].get("tool_calls") for c in chunks if c["choices"]]
        calls = [d[0] for d in deltas if d]
        assert calls[0]["id"] == "call_9" and calls[0]["function"]["name"] == "get_sales_trend"
        assert all("id" not in c and "name" not in c["function"] for c in calls[1:])
        assert "".join(c["function"]["arguments"] for c in calls) == '{"period": "先週"}'
        assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_openai_429_carries_retry_after() -> None:
    with FakeOpenAIServer([Reply.error(429, retry_after=2)]) as srv:
        r = post(f"{srv.base_url}/chat/completions", {"model": "m", "messages": [USER]})
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert r.json()["error"]["code"] == "rate_limit_exceeded"


def gem(
    srv: FakeGeminiServer, body: object, key: str = "k", stream: bool = False
) -> httpx.Response:
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return post(f"{srv.url}/v1beta/models/gemini-2.5-flash:{verb}", body, **{"x-goog-api-key": key})


TEXT = {"role": "user", "parts": [{"text": "先週の売上は?"}]}
FC = {
    "role": "model",
    "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}],
}


def test_gemini_rejects_what_gemini_rejects() -> None:
    with FakeGeminiServer(api_key="k") as srv:
        answer = {
            "role": "user",
            "parts": [{"functionResponse": {"name": "f", "response": {"ok": 1}}}],
        }
        unsigned = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
        cases = [
            ({}, "contents is not specified"),
            ({"contents": [TEXT, FC]}, "function response turn"),
            (
                {
                    "contents": [
                        TEXT,
                        FC,
                        {
                            "role": "user",
                            "parts": [
                                {"functionResponse": {"name": "f", "response": {}}},
                                {"functionResponse": {"name": "g", "response": {}}},
                            ],
                        },
                    ]
                },
                "number of function",
            ),
            (
                {
                    "contents": [
                        TEXT,
                        FC,
                        {
                            "role": "user",
                            "parts": [{"functionResponse": {"name": "f", "response": "text"}}],
                        },
                    ]
                },
                "Struct",
            ),
            ({"contents": [TEXT, unsigned, answer]}, "thought_signature"),
            (
                {"contents": [TEXT], "generationConfig": {"responseSchema": {"type": "object"}}},
                "response_mime_type",
            ),
            (
                {"contents": [TEXT], "tools": [{"functionDeclarations": [{"name": "1売上"}]}]},
                "Invalid function name",
            ),
            ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "valid role"),
        ]
        for body, needle in cases:
            r = gem(srv, body)
            assert r.status_code == 400, body
            assert needle in r.json()["error"]["message"] and r.json()["error"]["status"] == (
                "INVALID_ARGUMENT"
            )
        assert gem(srv, {"contents": [TEXT, FC, answer]}).status_code == 400  # nothing scripted
        r = gem(srv, {"contents": [TEXT]}, key="wrong")
        assert r.status_code == 400 and "API key not valid" in r.json()["error"]["message"]
        assert post(f"{srv.url}/v1beta/models/x:embed", {}).status_code == 404


def test_gemini_streams_sse_chunks() -> None:
    with FakeGeminiServer([Reply.say("先週の売上は前週比で5%増えました。")]) as srv:
        r = gem(srv, {"contents": [TEXT]}, stream=True)
        chunks = [json.loads(e[6:]) for e in r.text.split("\n\n") if e]
        text = "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks)
        assert text == "先週の売上は前週比で5%増えました。" and len(chunks) > 1
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        assert "usageMetadata" in chunks[-1] and "usageMetadata" not in chunks[0]
