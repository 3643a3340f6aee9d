"""Downloading a dataset from a URL: against a local fake dataset host on 127.0.0.1 (allowed by
``[fetch] allow_hosts``), the checks that refuse a private address, a redirect into the
machine's network, a too large file and a wrong type."""

from __future__ import annotations

import datetime
import io
import json
import ssl
import tempfile
import zipfile
from pathlib import Path

import pytest

from tansaku.testing.fake_dataset_server import FakeDatasetServer
from tansaku.transfer.fetch import download, file_name
from tansaku.transfer.fetch_guard import FetchError, FetchSettings, plain_url, settings_from

FAQ = [
    {"id": "faq-1", "question": "有給休暇の申請方法は?", "answer": "勤怠システムから申請します。"},
    {"id": "faq-2", "question": "経費精算の締め日は?", "answer": "毎月25日です。"},
]
JSONL = "\n".join(json.dumps(r, ensure_ascii=False) for r in FAQ).encode("utf-8") + b"\n"
ALLOWED = FetchSettings(allow_hosts=frozenset({"127.0.0.1"}), max_bytes=64 * 1024, timeout_s=10)


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data/faq.jsonl", JSONL)
        zf.writestr("../evil.jsonl", JSONL)
        zf.writestr("image.png", b"\x89PNG")
    return buf.getvalue()


@pytest.fixture
def site():
    files = {
        "/faq.jsonl": JSONL,
        "/big.jsonl": JSONL * 2000,
        "/page.html": b"<html>ok</html>",
        "/login.jsonl": b"<html>login</html>",
        "/all.zip": _zip(),
    }
    with FakeDatasetServer(
        files,
        streamed=frozenset({"/big.jsonl"}),
        redirects={
            "/meta": "http://169.254.169.254/latest/meta-data/",
            "/moved.jsonl": "/faq.jsonl",
        },
        types={"/login.jsonl": "text/html; charset=utf-8"},
    ) as fake:
        yield fake


def test_a_japanese_jsonl_is_downloaded(site, tmp_path: Path):
    got = download(f"{site.url}/faq.jsonl", tmp_path, ALLOWED)
    assert [p.name for p in got.paths] == ["faq.jsonl"]
    assert got.paths[0].read_text(encoding="utf-8").startswith('{"id": "faq-1", "question": "有給')
    assert got.size == len(JSONL)


def test_a_redirect_inside_the_allowed_host_is_followed(site, tmp_path: Path):
    got = download(f"{site.url}/moved.jsonl", tmp_path, ALLOWED)
    assert got.paths[0].read_bytes() == JSONL


def test_too_large_while_streaming_is_refused_and_the_partial_file_removed(site, tmp_path):
    with pytest.raises(FetchError, match="大きすぎます") as err:
        download(f"{site.url}/big.jsonl", tmp_path, ALLOWED)
    assert err.value.status == 413
    assert list(tmp_path.iterdir()) == []


def test_a_redirect_to_a_private_address_is_refused(site, tmp_path: Path):
    with pytest.raises(FetchError, match=r"169\.254\.169\.254") as err:
        download(f"{site.url}/meta", tmp_path, ALLOWED)
    assert (err.value.status, err.value.code) == (403, "fetch_host_refused")
    assert list(tmp_path.iterdir()) == []


def test_a_host_not_allowed_is_refused_without_any_connection(site, tmp_path: Path):
    port = site.url.rsplit(":", 1)[1]
    for url in (f"http://localhost:{port}/faq.jsonl", f"http://127.0.0.2:{port}/faq.jsonl"):
        with pytest.raises(FetchError, match="取り込めません") as err:
            download(url, tmp_path, ALLOWED)
        assert err.value.status == 403
    with pytest.raises(FetchError, match="許可されたホストではありません"):
        download(f"{site.url}/faq.jsonl", tmp_path, FetchSettings(public=False))
    with pytest.raises(FetchError, match="公開されていないアドレス"):
        download(f"{site.url}/faq.jsonl", tmp_path, FetchSettings())
    assert site.requests == []


def test_wrong_types_are_refused(site, tmp_path: Path):
    with pytest.raises(FetchError, match="取り込めない形式") as err:
        download(f"{site.url}/page.html", tmp_path, ALLOWED)
    assert err.value.status == 415
    with pytest.raises(FetchError, match="HTML のページ"):
        download(f"{site.url}/login.jsonl", tmp_path, ALLOWED)


def test_a_missing_file_or_a_closed_port_is_unreachable(site, tmp_path: Path):
    with pytest.raises(FetchError, match="404") as err:
        download(f"{site.url}/none.jsonl", tmp_path, ALLOWED)
    assert err.value.status == 422
    with pytest.raises(FetchError, match="接続できません"):
        download("http://127.0.0.1:9/faq.jsonl", tmp_path, ALLOWED)


def test_a_zip_keeps_its_supported_members_only(site, tmp_path: Path):
    got = download(f"{site.url}/all.zip", tmp_path, ALLOWED)
    assert [p.relative_to(tmp_path).as_posix() for p in got.paths] == ["all/data/faq.jsonl"]
    assert got.sources == [tmp_path / "all"]
    assert not (tmp_path / "all.zip").exists()


def test_hugging_face_shorthand_and_settings():
    assert plain_url("hf://datasets/llm-jp/faq@v1/data/train.jsonl") == (
        "https://huggingface.co/datasets/llm-jp/faq/resolve/v1/data/train.jsonl"
    )
    assert plain_url("hf://datasets/o/n/a.csv").endswith("/o/n/resolve/main/a.csv")
    with pytest.raises(FetchError, match="hf://datasets"):
        plain_url("hf://models/o/n")
    with pytest.raises(FetchError, match="https://"):
        plain_url("file:///etc/passwd")
    assert file_name("https://x/a/%E5%95%8F%E7%AD%94.jsonl") == "問答.jsonl"
    s = settings_from({"allow_hosts": ["Mirror.Example"], "max_mb": 1, "public": False})
    assert s.allow_hosts == {"mirror.example"} and s.max_bytes == 1024 * 1024
    with pytest.raises(Exception, match="不明なキー"):
        settings_from({"allow": []})


def _tls_contexts(name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for ``name`` signed by a fresh CA, and a client
    context trusting only that CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def cert(subject: str, key, issuer: str, signer, *, ca: bool):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert("テスト認証局", ca_key, "テスト認証局", ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = cert(name, key, "テスト認証局", ca_key, ca=False)
    pem = serialization.Encoding.PEM
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as d:
        chain, private = Path(d) / "chain.pem", Path(d) / "key.pem"
        chain.write_bytes(leaf.public_bytes(pem))
        private.write_bytes(
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        )
        server.load_cert_chain(chain, private)
    client = ssl.create_default_context(cadata=ca.public_bytes(pem).decode())
    return server, client


def test_https_is_pinned_to_the_checked_address_and_keeps_the_host_name(tmp_path: Path):
    """The connection goes to the address checked (127.0.0.1) while TLS still verifies the
    certificate of the name in the URL (``localhost``, sent as SNI and Host)."""
    server_ctx, client_ctx = _tls_contexts("localhost")
    settings = FetchSettings(allow_hosts=frozenset({"localhost"}), timeout_s=10)
    with FakeDatasetServer({"/faq.jsonl": JSONL}, tls=server_ctx) as site:
        url = f"https://localhost:{site.port}/faq.jsonl"
        got = download(url, tmp_path, settings, verify=client_ctx)
        assert got.paths[0].read_bytes() == JSONL
        assert site.requests[0].headers["Host"] == f"localhost:{site.port}"
        other = FetchSettings(allow_hosts=frozenset({"127.0.0.1"}), timeout_s=10)
        with pytest.raises(FetchError, match="接続できません"):  # the name is the certificate's
            download(f"https://127.0.0.1:{site.port}/faq.jsonl", tmp_path, other, verify=client_ctx)
