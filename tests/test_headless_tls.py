"""An https endpoint, end to end: `paicli run` against the fake served over TLS with a certificate of its own.
Trust comes from the system's store or the file SSL_CERT_FILE names (docs/providers.md, "HTTP and TLS"): a certificate
nobody vouches for is refused with a clear message, the same certificate named by SSL_CERT_FILE is trusted."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply


def test_the_fake_really_speaks_https(tls_fake: FakeLLM) -> None:
    assert tls_fake.base_url.startswith("https://127.0.0.1:")


def test_a_certificate_nobody_vouches_for_is_refused_with_a_clear_message(
    tls_fake: FakeLLM, workspace: Path, home: Path
) -> None:
    tls_fake.on("hello", Reply.text("Hi."))
    env = paicli_env(tls_fake, home)
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        env.pop(variable, None)
    done = run_paicli(["-C", str(workspace), "run", "hello"], env)
    assert done.code == 1
    (line,) = done.stderr.splitlines()  # one line, no retries: asking again meets the same certificate
    assert line.startswith(f"paicli: model request failed: could not connect to {tls_fake.base_url}: its TLS ")
    assert "certificate is not trusted (self-signed certificate)" in line and "SSL_CERT_FILE" in line
    assert not [r for r in tls_fake.requests if r.body is not None]  # nothing was sent


def test_doctor_says_the_certificate_is_not_trusted_and_how_to_trust_it(
    tls_fake: FakeLLM, workspace: Path, home: Path
) -> None:
    env = paicli_env(tls_fake, home)
    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        env.pop(variable, None)
    done = run_paicli(["-C", str(workspace), "doctor", "--json"], env)
    assert done.code == 1
    chat = next(check for check in done.events()[-1]["checks"] if check["name"] == "chat")
    assert "its TLS certificate is not trusted (self-signed certificate)" in chat["detail"]
    assert "SSL_CERT_FILE" in chat["detail"]


def test_the_certificate_named_by_ssl_cert_file_is_trusted(
    tls_fake: FakeLLM, certificate: tuple[Path, Path], workspace: Path, home: Path
) -> None:
    tls_fake.on("hello", Reply.text("Hi over TLS."))
    env = paicli_env(tls_fake, home, SSL_CERT_FILE=str(certificate[0]))
    done = run_paicli(["-C", str(workspace), "run", "hello"], env)
    assert done.code == 0, done.stderr
    assert done.stdout == "Hi over TLS.\n"
