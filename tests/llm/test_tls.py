"""paicli/llm/tls.py: a plain-HTTP endpoint skips loading the CA bundle, and what it gets instead trusts nothing."""

from __future__ import annotations

import ssl

import pytest

from paicli.llm.tls import tls_for


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "HTTP://localhost/v1", "  http://host/v1"])
def test_a_plain_http_endpoint_gets_a_context_that_still_verifies_and_trusts_no_one(url: str) -> None:
    context = tls_for(url)
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0  # no CA: a TLS handshake through it could not succeed


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "HTTPS://api.deepseek.com", "httpx://odd", "ftp://x"])
def test_anything_else_keeps_httpx_default_trust(url: str) -> None:
    assert tls_for(url) is True


@pytest.mark.parametrize(("url", "trusted"), [("http://127.0.0.1:1/v1", False), ("https://api.example.com/v1", True)])
def test_the_model_client_uses_it(url: str, trusted: bool) -> None:
    from paicli.llm.client import LLMClient

    client = LLMClient(base_url=url, api_key="k", model="m")
    context = client._http._transport._pool._ssl_context  # type: ignore[attr-defined]  # httpx2's own
    assert (context.cert_store_stats()["x509_ca"] > 0) is trusted


def test_a_failed_certificate_check_is_found_however_deeply_it_is_wrapped() -> None:
    from paicli.llm.tls import untrusted_certificate

    check = ssl.SSLCertVerificationError(1, "certificate verify failed")
    check.verify_message = "unable to get local issuer certificate"
    try:
        try:
            raise check
        except ssl.SSLError as inner:
            raise ConnectionError("connect failed") from inner
    except ConnectionError as outer:
        assert untrusted_certificate(outer) == "unable to get local issuer certificate"
    assert untrusted_certificate(ConnectionError("refused")) is None
    assert untrusted_certificate(ssl.SSLError("wrong version number")) is None
