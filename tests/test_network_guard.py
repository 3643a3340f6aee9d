"""The suite's guard: a test reaches 127.0.0.1 (the fake servers), never another host."""

from __future__ import annotations

import socket

import httpx
import pytest


def test_a_connection_to_another_host_is_refused_at_once():
    with socket.socket() as s, pytest.raises(ConnectionRefusedError, match="never leave"):
        s.connect(("203.0.113.7", 443))


def test_a_name_outside_this_machine_does_not_resolve():
    with pytest.raises(socket.gaierror, match="never leave"):
        socket.getaddrinfo("api.openai.com", 443)
    with pytest.raises(httpx.ConnectError):
        httpx.get("https://generativelanguage.googleapis.com/", timeout=2)


def test_loopback_still_connects():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
    assert socket.getaddrinfo("localhost", 80)
