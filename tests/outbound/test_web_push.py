"""The server's Web Push key and messages: a key file is written once, readable by its owner
only, and read back as the same key; a file that holds no P-256 key stops the start with a
line that says so (never a traceback); the contact push services are told must be one they
take; a message is encrypted so that the browser's keys, and only they, read it; a game's
topic is short, the same for the game, and says nothing of it."""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import http_ece
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from evidence.signing_keys import write_key_file
from outbound.web_push import (
    MAX_PLAINTEXT,
    TOPIC_LENGTH,
    PushKey,
    PushKeyError,
    contact_accepted,
    encrypted,
    read_push_key,
    topic_of,
    write_push_key_file,
)
from server.cli.main import main
from server.config.settings import Settings
from tests.workers.push_service import Device


def test_a_key_file_is_written_once_for_its_owner_and_read_back_as_the_same_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "push-key.pem"
    made = write_push_key_file(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert read_push_key(path).public_key == made.public_key
    with pytest.raises(FileExistsError):
        write_push_key_file(path)
    assert read_push_key(path).public_key == made.public_key, "never written over"


def test_the_command_writes_a_key_and_refuses_to_write_over_one(tmp_path: Path) -> None:
    path = tmp_path / "push-key.pem"
    first = CliRunner().invoke(main, ["push-keygen", str(path)])
    assert first.exit_code == 0 and read_push_key(path).public_key in first.output
    again = CliRunner().invoke(main, ["push-keygen", str(path)])
    assert again.exit_code == 2 and "never written over" in again.output


@pytest.mark.parametrize("content", ["ed25519", "p384", "text", "missing"])
def test_a_file_without_a_p256_key_is_refused_with_a_sentence(tmp_path: Path, content: str) -> None:
    path = tmp_path / "key.pem"
    if content == "ed25519":
        write_key_file(path)
    elif content == "p384":
        key = ec.generate_private_key(ec.SECP384R1())
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    elif content == "text":
        path.write_text("not a key")
    with pytest.raises(PushKeyError, match=str(path)):
        read_push_key(path)


def test_a_server_started_with_a_bad_key_file_or_contact_stops_with_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "key.pem"
    bad.write_text("nothing")
    # `serve` sets the embedded server's public URL in the environment: restored after
    monkeypatch.setenv("PATRICIAN_PUBLIC_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("PATRICIAN_PUSH_KEY_FILE", str(bad))
    said = CliRunner().invoke(main, ["serve", "--port", "1"])
    assert said.exit_code == 2 and "push key" in said.output and "Traceback" not in said.output
    monkeypatch.delenv("PATRICIAN_PUSH_KEY_FILE")
    monkeypatch.setenv("PATRICIAN_PUSH_CONTACT", "ops at example")
    said = CliRunner().invoke(main, ["serve", "--port", "1"])
    assert said.exit_code == 2 and "PATRICIAN_PUSH_CONTACT" in said.output


def test_the_contact_is_one_push_services_take_and_defaults_from_the_public_url() -> None:
    assert contact_accepted("mailto:ops@example.org")
    assert contact_accepted("https://play.example.org")
    assert not contact_accepted("http://play.example.org")
    assert not contact_accepted("ops@example.org")
    assert Settings(public_url="https://play.example.org").push_contact == (
        "https://play.example.org"
    )
    assert Settings(public_url="http://127.0.0.1:8000").push_contact == (
        "mailto:patrician@localhost"
    )


def test_a_message_is_read_with_the_browsers_keys_only() -> None:
    device, stranger = Device(), Device()
    body = encrypted(b'{"title":"t"}', device.public_key, device.auth)
    assert len(body) <= 4096
    read = http_ece.decrypt(body, private_key=device.private_key, auth_secret=device.auth,
                            version="aes128gcm")  # fmt: skip
    assert read == b'{"title":"t"}'
    with pytest.raises(Exception):  # noqa: B017, PT011  (http_ece's own errors, or InvalidTag)
        http_ece.decrypt(body, private_key=stranger.private_key, auth_secret=stranger.auth,
                         version="aes128gcm")  # fmt: skip
    assert encrypted(b"x", device.public_key, device.auth) != encrypted(
        b"x", device.public_key, device.auth
    ), "a key pair of its own for each message"
    assert len(encrypted(b"x" * MAX_PLAINTEXT, device.public_key, device.auth)) == 4096
    with pytest.raises(ValueError, match="at most"):
        encrypted(b"x" * (MAX_PLAINTEXT + 1), device.public_key, device.auth)


def test_a_token_names_the_push_service_and_expires_within_a_day() -> None:
    key = PushKey.generate()
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    header = key.authorization("https://fcm.googleapis.com/fcm/send/abc", "mailto:a@b.example", now)
    scheme, _, rest = header.partition(" ")
    parts = dict(part.split("=", 1) for part in rest.split(","))
    assert scheme == "vapid" and parts["k"] == key.public_key
    payload = parts["t"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["aud"] == "https://fcm.googleapis.com" and claims["sub"] == "mailto:a@b.example"
    assert 0 < claims["exp"] - now.timestamp() <= 86400


def test_a_games_topic_is_short_stable_and_says_nothing_of_the_game() -> None:
    topic = topic_of("g12ab")
    assert len(topic) == TOPIC_LENGTH and topic == topic_of("g12ab") != topic_of("g12ac")
    assert "g12ab" not in topic
    assert set(topic) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
