"""What the model client trusts for TLS.

httpx2 loads the system's CA bundle when a client is made (tens of ms, paid at every start-up), whether or not
TLS is ever used. A plain-HTTP endpoint (a local Ollama or llama.cpp server) never uses it: the client only
talks to its base URL and follows no redirect. So for those the client gets a context that trusts nothing:
were a TLS connection ever made through it, verification would fail rather than be skipped.
"""

from __future__ import annotations

import ssl


def tls_for(base_url: str) -> ssl.SSLContext | bool:
    """True (httpx2's default trust: the system's CA certificates, or SSL_CERT_FILE / SSL_CERT_DIR) for an
    https endpoint; an empty, still verifying, context for http."""
    if base_url.strip().lower().startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostname checked, no CA: trusts nothing
    return True


def untrusted_certificate(error: BaseException) -> str | None:
    """The verifier's reason when `error`, or what it was raised from, is a failed certificate check."""
    seen: BaseException | None = error
    for _ in range(8):  # the HTTP stack wraps the ssl error two or three times
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or "certificate verify failed"
        seen = seen.__cause__ or seen.__context__
    return None


def not_trusted(reason: str) -> str:
    """What to say of a server whose certificate failed the check, and how to trust it."""
    return (
        f"its TLS certificate is not trusted ({reason}); install its CA in the system's certificate store, "
        "or name the CA's file with SSL_CERT_FILE"
    )
