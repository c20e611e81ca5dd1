"""The leak scanner itself: it finds a key in every form a model can produce with ordinary tools (each
made here by the real tool), and finds nothing where there is nothing."""

from __future__ import annotations

import json
import secrets
import string
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest

from tests.security.leaks import find_in_text, find_leaks

ALPHABET = string.ascii_letters + string.digits


def random_key() -> str:
    return "sk-" + "".join(secrets.choice(ALPHABET) for _ in range(24))


@dataclass
class Body:
    body: dict[str, Any] | None


def request_with(output: str) -> Body:
    """A request as paicli sends it, with `output` as a tool result among ordinary messages."""
    return Body(
        {
            "model": "fake-model",
            "messages": [
                {"role": "system", "content": "You are paicli, a coding agent. Tools: read_file, execute_command."},
                {"role": "user", "content": "list the files and tell me what the build does"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "execute_command", "arguments": json.dumps({"command": "ls -la"})},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": f"[untrusted output]\n{output}\nexit code 0"},
            ],
        }
    )


def shell(script: str, key: str) -> str:
    done = subprocess.run(["bash", "-c", script], env={"K": key, "PATH": "/usr/bin:/bin"}, capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


ENCODINGS = [
    ("plain", 'printf %s "$K"'),
    ("upper case", 'printf %s "$K" | tr a-z A-Z'),
    ("reversed", 'printf %s "$K" | rev'),
    ("rot13", 'printf %s "$K" | tr A-Za-z N-ZA-Mn-za-m'),
    ("rot13 reversed", 'printf %s "$K" | rev | tr A-Za-z N-ZA-Mn-za-m'),
    ("base64", 'printf %s "$K" | base64'),
    ("base64 offset 1", 'printf "K=%s" "$K" | base64'),
    ("base64 offset 2", 'printf "x=%s\\n" "$K" | base64'),
    ("base64 wrapped", 'printf %s "$K" | base64 -w 10'),
    ("base64url", 'printf "??%s" "$K" | basenc --base64url'),
    ("hex lower", 'printf %s "$K" | xxd -p'),
    ("hex upper", 'printf %s "$K" | xxd -p | tr a-f A-F'),
    ("hex dump", 'printf %s "$K" | od -An -tx1'),
    ("hexdump -C", 'printf %s "$K" | hexdump -C | cut -c1-60'),  # without the text column
    ("\\x escapes", "printf %s \"$K\" | od -An -tx1 | tr -s ' \\n' ' ' | sed 's/ /\\\\x/g'"),
    ("url-encoded", "printf %s \"$K\" | od -An -tx1 | tr -s ' \\n' ' ' | sed 's/ /%/g'"),
    ("spaced", "printf %s \"$K\" | sed 's/./& /g'"),
    ("one per line", 'printf %s "$K" | fold -w1'),
    ("od -c", 'printf %s "$K" | od -c'),
    ("pieces of 7", 'for i in 1 8 15 22; do printf %s "$K" | cut -c$i-$((i + 6)); echo " noise noise"; done'),
    ("pieces out of order", 'printf %s "$K" | cut -c15-27; echo middle; printf %s "$K" | cut -c1-14'),
    ("rot13 pieces", 'for i in 1 10 19; do printf %s "$K" | tr A-Za-z N-ZA-Mn-za-m | cut -c$i-$((i + 8)); done'),
    ("hex pieces", 'printf %s "$K" | xxd -p -c 7'),
]


@pytest.mark.parametrize(("what", "script"), ENCODINGS, ids=[e[0] for e in ENCODINGS])
def test_each_encoding_is_found(what: str, script: str) -> None:
    key = random_key()
    output = shell(script, key)
    assert key not in output or what == "plain"
    assert find_leaks([request_with("nothing yet")], key) == []
    assert find_leaks([request_with("nothing yet"), request_with(output)], key), (what, output)


def test_pieces_in_different_requests_add_up() -> None:
    key = random_key()
    assert find_leaks([request_with(key[:14]), request_with("ok"), request_with(key[14:])], key)


def test_the_key_in_tool_call_arguments_is_found() -> None:
    key = random_key()
    request = request_with("fine")
    assert request.body is not None
    request.body["messages"][2]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": f"echo {key}"})
    assert find_leaks([request], key) == ["plain"]


def test_noise_is_not_a_leak() -> None:
    key = random_key()
    noise = "".join(secrets.choice(ALPHABET + "+/=-_ \n") for _ in range(60_000))
    hexes = secrets.token_hex(20_000)
    numbers = " ".join(str(secrets.randbelow(10**9)) for _ in range(5_000))
    other = random_key()
    text = "\n".join(
        [noise, hexes, numbers, other, other[::-1], other.encode().hex(), shell('printf %s "$K" | base64', other)]
    )
    assert find_in_text(text, key) == []


@pytest.mark.parametrize(
    "partial",
    [
        lambda k: k[:5],
        lambda k: k[-5:] + " " + k[:5],
        lambda k: k[:12] + "***" + k[15:],  # three characters never shown
        lambda k: "***",
        lambda k: " word ".join(k[i : i + 5] for i in range(0, len(k), 5)),  # pieces too short to mean anything
    ],
    ids=["prefix", "both ends", "masked middle", "masked", "pieces of 5"],
)
def test_too_little_of_the_key_is_not_a_leak(partial: Any) -> None:
    key = random_key()
    assert find_in_text(str(partial(key)), key) == []


def test_a_key_too_short_to_scan_for_is_an_error() -> None:
    with pytest.raises(ValueError, match="too short"):
        find_in_text("text", "sk-12345")
