"""What the model client trusts for TLS.

httpx loads the whole CA bundle when a client is made (about 40 ms, paid at every start-up), whether or not
TLS is ever used. A plain-HTTP endpoint (a local Ollama or llama.cpp server) never uses it: the client only
talks to its base URL and follows no redirect. So for those the client gets a context that trusts nothing:
were a TLS connection ever made through it, verification would fail rather than be skipped.
"""

from __future__ import annotations

import ssl


def tls_for(base_url: str) -> ssl.SSLContext | bool:
    """True (httpx's default trust) for an https endpoint; an empty, still verifying, context for http."""
    if base_url.strip().lower().startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostname checked, no CA: trusts nothing
    return True
