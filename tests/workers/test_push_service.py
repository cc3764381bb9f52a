"""The push service the tests and the benchmark send Web Push to (tests/workers/push_service.py)
checks what a real one checks: requests made here by hand, as an application server makes
them (http_ece encrypts, py_vapid signs), are kept when right and refused, failing the wait,
when any one thing is wrong; a test that believes the service must be able to trust it."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import http_ece  # type: ignore[import-untyped, unused-ignore]
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02  # type: ignore[import-untyped, unused-ignore]

from tests.workers.push_service import Device, PushService, b64url, point

MESSAGE = {"title": "Your turn", "body": "Game g1: play a card", "url": "/games/g1", "tag": "g1"}


def vapid() -> Any:
    """An application server's VAPID key pair."""
    keys = Vapid02()
    keys.generate_keys()
    return keys


def public(keys: Any) -> str:
    """The key a server gives browsers to subscribe with (`applicationServerKey`)."""
    return b64url(point(keys.public_key))


def push(
    service: PushService,
    device: Device,
    keys: Any,
    message: object = MESSAGE,
    *,
    claims: dict[str, Any] | None = None,
    encrypt_for: Device | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """Send `message` to `device` as an application server does, signed with `keys`."""
    target = encrypt_for or device
    body = http_ece.encrypt(
        json.dumps(message).encode(),
        private_key=ec.generate_private_key(ec.SECP256R1()),
        dh=target.public_key,
        auth_secret=target.auth,
        version="aes128gcm",
    )
    signed = {
        "aud": service.origin,
        "exp": int(time.time()) + 12 * 3600,
        "sub": "mailto:a@b.example",
    }
    sent = {"content-encoding": "aes128gcm", "ttl": "60", "urgency": "high", "topic": "g1"}
    sent |= keys.sign({**signed, **(claims or {})})
    sent |= headers or {}
    endpoint = device.subscription(service)["endpoint"]
    return httpx.post(endpoint, content=body, headers=sent, timeout=10)


def test_a_subscription_is_what_a_browser_gives() -> None:
    device = Device()
    with PushService() as service:
        subscription = device.subscription(service, expirationTime=None)
    assert subscription == {
        "endpoint": f"{service.origin}{device.path}",
        "expirationTime": None,
        "keys": {"p256dh": device.p256dh, "auth": device.auth_b64},
    }
    assert "=" not in device.p256dh + device.auth_b64
    assert len(device.public_key) == 65 and device.public_key[0] == 4
    assert len(device.auth) == 16


def test_a_message_encrypted_for_the_device_and_signed_with_the_key_is_kept() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        answer = push(service, device, keys)
        assert answer.status_code == 201
        assert answer.headers["location"].startswith(service.origin)
        [kept] = service.wait(device.path, 1)
    assert kept.message == MESSAGE
    assert (kept.ttl, kept.urgency, kept.topic) == (60, "high", "g1")
    assert kept.claims["sub"] == "mailto:a@b.example"
    assert service.requests[device.path] == 1


def test_a_message_signed_by_another_key_is_refused_and_the_wait_fails() -> None:
    with PushService(public(vapid())) as service:
        device = service.add(Device())
        assert push(service, device, vapid()).status_code == 400
        with pytest.raises(AssertionError, match=r"VAPID key .* is not the server's"):
            service.wait(device.path, 1)
    assert not service.received[device.path]


def test_a_jwt_whose_signature_does_not_hold_is_refused() -> None:
    keys = vapid()
    with PushService() as service:
        device = service.add(Device())
        forged = keys.sign({"aud": service.origin, "sub": "mailto:a@b.example"})
        token, _, _ = forged["Authorization"].partition(",k=")
        other = f"{token},k={public(vapid())}"
        assert push(service, device, keys, headers={"authorization": other}).status_code == 400
        with pytest.raises(AssertionError, match="signature does not hold"):
            service.wait(device.path, 1)


def test_a_jwt_for_another_audience_is_refused() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        answer = push(service, device, keys, claims={"aud": "https://push.example"})
        assert answer.status_code == 400
        with pytest.raises(AssertionError, match=re.escape("aud 'https://push.example'")):
            service.wait(device.path, 1)


def test_an_expired_jwt_is_refused() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        answer = push(service, device, keys, claims={"exp": int(time.time()) - 60})
        assert answer.status_code == 400
        with pytest.raises(AssertionError, match=r"exp .* not within 24 hours"):
            service.wait(device.path, 1)


def test_a_jwt_expiring_after_a_day_is_refused_unless_the_clock_is_fake() -> None:
    keys = vapid()
    late = {"exp": int(time.time()) + 25 * 3600}
    with PushService(public(keys)) as service:
        device = service.add(Device())
        assert push(service, device, keys, claims=late).status_code == 400
        with pytest.raises(AssertionError, match="not within 24 hours"):
            service.wait(device.path, 1)
    with PushService(public(keys), check_time=False) as service:
        device = service.add(Device())
        assert push(service, device, keys, claims=late).status_code == 201


def test_a_body_encrypted_for_another_device_is_refused() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        answer = push(service, device, keys, encrypt_for=Device())
        assert answer.status_code == 400
        with pytest.raises(AssertionError, match="does not decrypt"):
            service.wait(device.path, 1)


def test_a_topic_of_33_characters_is_refused() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        assert push(service, device, keys, headers={"topic": "a" * 33}).status_code == 400
        with pytest.raises(AssertionError, match="Topic"):
            service.wait(device.path, 1)


@pytest.mark.parametrize(
    ("headers", "wrong"),
    [
        ({"ttl": "-1"}, "TTL"),
        ({"urgency": "urgent"}, "Urgency"),
        ({"content-encoding": "aesgcm"}, "Content-Encoding"),
    ],
)
def test_a_wrong_header_is_refused(headers: dict[str, str], wrong: str) -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        assert push(service, device, keys, headers=headers).status_code == 400
        with pytest.raises(AssertionError, match=wrong):
            service.wait(device.path, 1)


def test_a_body_over_4096_bytes_is_too_large() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        big = {**MESSAGE, "body": "x" * 4096}
        assert push(service, device, keys, big).status_code == 413
        with pytest.raises(AssertionError, match="over 4096"):
            service.wait(device.path, 1)


def test_a_message_that_is_not_a_notification_is_refused() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        off_site = {**MESSAGE, "url": "https://elsewhere.example/"}
        assert push(service, device, keys, off_site).status_code == 400
        with pytest.raises(AssertionError, match="not a path on the site"):
            service.wait(device.path, 1)


def test_an_answer_set_for_a_path_is_given_and_such_a_message_is_not_kept() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        service.answer(device.path, 429, times=1)
        busy = push(service, device, keys)
        assert (busy.status_code, busy.headers["retry-after"]) == (429, "1")
        assert push(service, device, keys).status_code == 201
        service.answer(device.path, 410)
        assert [push(service, device, keys).status_code for _ in range(2)] == [410, 410]
        assert len(service.wait(device.path, 1)) == 1
    assert service.statuses[device.path] == [429, 201, 410, 410]
    assert len(service.received[device.path]) == 1


def test_a_forgotten_device_is_gone_without_failing() -> None:
    keys = vapid()
    with PushService(public(keys)) as service:
        device = service.add(Device())
        service.forget(device)
        assert push(service, device, keys).status_code == 410
        assert service.until(lambda: service.requests[device.path] == 1)
    assert service.failure is None


def test_an_unknown_path_is_not_found_and_fails() -> None:
    keys = vapid()
    with pytest.raises(AssertionError, match="no device subscribed"), PushService() as service:
        assert push(service, Device(), keys).status_code == 404
