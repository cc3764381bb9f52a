"""Subscribing a device to Web Push over the API: the server's public key is served to the
page; a browser's subscription is taken when its endpoint is an https URL of a public host
and its keys are what a browser makes, and refused otherwise with the field and the reason,
changing nothing; a device is shown by its name and its push service's host, never by its
endpoint (a secret of that browser); a player keeps at most ten; each is removed alone, by its
owner only; a server without a push key says push is off."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from outbound.web_push import from_b64url
from server.config.settings import Settings
from store.notifications import MAX_PUSH_DEVICES
from tests.server.client import Api, Player
from tests.server.live import build_app
from tests.workers.push_service import Device, b64url

PUBLIC_HOST = "push.example"
"""A push service's host, looked up (in these tests) as a public address."""


@pytest.fixture(autouse=True)
def public_push_service(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up = socket.getaddrinfo

    def name_servers(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == PUBLIC_HOST:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]
        return looked_up(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", name_servers)


def _subscription(device: Device, endpoint: str | None = None, **changed: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "endpoint": endpoint or f"https://{PUBLIC_HOST}{device.path}",
        "expirationTime": None,
        "keys": {"p256dh": device.p256dh, "auth": device.auth_b64},
    }
    return {**body, **changed}


def _add(api: Api, player: Player, body: dict[str, Any]) -> dict[str, Any]:
    return dict(api.ok(api.request("POST", "/api/me/push", player=player, json=body), 201))


def _devices(api: Api, player: Player) -> list[dict[str, Any]]:
    return list(api.ok(api.request("GET", "/api/me/push", player=player)))


def test_a_device_subscribed_with_the_served_key_is_listed_by_name_and_host_never_endpoint(
    api: Api,
) -> None:
    key = api.ok(api.request("GET", "/api/push/key"))["public_key"]
    assert len(from_b64url(key)) == 65 and from_b64url(key)[0] == 4, "an uncompressed P-256 point"
    ada, device = api.create_player("Ada"), Device()
    body = {**_subscription(device), "name": "  Ada's phone "}
    added = api.ok(api.request("POST", "/api/me/push", player=ada, json=body), 201)
    assert added["name"] == "Ada's phone" and added["service"] == PUBLIC_HOST
    assert added["current"] is True and set(added) == {"id", "name", "service", "created",
                                                      "current"}  # fmt: skip
    assert _devices(api, ada) == [added]
    channels = api.ok(api.request("GET", "/api/me/notifications", player=ada))
    assert channels["push"] == [added]
    for served in (channels, _devices(api, ada), added):
        assert device.path not in str(served) and device.auth_b64 not in str(served)
    # setting the other channels keeps the devices (they are set here, not there)
    quiet = {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}}
    put = api.ok(api.request("PUT", "/api/me/notifications", player=ada, json=quiet))
    assert put["push"] == [added]


def test_the_same_endpoint_again_replaces_its_keys_and_name_under_the_same_id(api: Api) -> None:
    ada, device = api.create_player("Ada"), Device()
    first = _add(api, ada, _subscription(device))
    assert first["name"] == "A device"
    fresh = Device(path=device.path)
    again = {**_subscription(fresh), "name": "Laptop"}
    second = api.ok(api.request("POST", "/api/me/push", player=ada, json=again), 201)
    assert second["id"] == first["id"] and second["name"] == "Laptop"
    assert [d["id"] for d in _devices(api, ada)] == [first["id"]]


REFUSED_ENDPOINTS = [
    f"http://{PUBLIC_HOST}/push/1",  # not https
    "https://127.0.0.1/push/1",
    "https://10.0.0.8/push/1",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/push/1",
    "https://localhost/push/1",
    "ftp://push.example/1",
    "https://user:pw@push.example/1",
    "javascript:alert(1)",
]


@pytest.mark.parametrize("endpoint", REFUSED_ENDPOINTS)
def test_an_endpoint_that_is_no_public_https_url_is_refused_and_nothing_changes(
    api: Api, endpoint: str
) -> None:
    ada = api.create_player("Ada")
    answer = api.request("POST", "/api/me/push", player=ada, json=_subscription(Device(), endpoint))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "push.endpoint" and answer.json()["message"]
    assert "webhook" not in answer.json()["message"], "said of the browser's push service"
    assert _devices(api, ada) == []


def test_keys_that_no_browser_makes_are_refused_by_field(api: Api) -> None:
    ada, device = api.create_player("Ada"), Device()
    not_on_the_curve = b64url(b"\x04" + b"\x01" * 64)
    for keys, field in (
        ({"p256dh": device.p256dh[:-4], "auth": device.auth_b64}, "push.keys.p256dh"),
        ({"p256dh": not_on_the_curve, "auth": device.auth_b64}, "push.keys.p256dh"),
        ({"p256dh": "not base64!", "auth": device.auth_b64}, "push.keys.p256dh"),
        ({"p256dh": device.p256dh, "auth": b64url(b"1" * 15)}, "push.keys.auth"),
        ({"p256dh": device.p256dh, "auth": "%%%%"}, "push.keys.auth"),
    ):
        body = {**_subscription(device), "keys": keys}
        answer = api.request("POST", "/api/me/push", player=ada, json=body)
        assert answer.status_code == 422 and answer.json()["field"] == field, answer.text
    assert _devices(api, ada) == []


def test_a_compressed_public_key_is_refused_though_it_is_a_point_of_the_curve(api: Api) -> None:
    """33 bytes (0x02 or 0x03, then x): a point of P-256 all the same, but not what a
    browser makes (`getKey("p256dh")`: the uncompressed point, 65 bytes)."""
    ada, device = api.create_player("Ada"), Device()
    compressed = device.private_key.public_key().public_bytes(
        Encoding.X962, PublicFormat.CompressedPoint
    )
    assert len(compressed) == 33
    keys = {"p256dh": b64url(compressed), "auth": device.auth_b64}
    answer = api.request("POST", "/api/me/push", player=ada, json=_subscription(device, keys=keys))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "push.keys.p256dh", answer.text
    assert _devices(api, ada) == []


def test_a_player_keeps_at_most_ten_devices(api: Api) -> None:
    ada = api.create_player("Ada")
    for _ in range(MAX_PUSH_DEVICES):
        _add(api, ada, _subscription(Device()))
    answer = api.request("POST", "/api/me/push", player=ada, json=_subscription(Device()))
    assert answer.status_code == 422 and answer.json()["field"] == "push", answer.text
    assert "remove one" in answer.json()["message"]
    assert len(_devices(api, ada)) == MAX_PUSH_DEVICES


def test_a_player_with_ten_devices_may_subscribe_one_of_them_again_with_new_keys(
    api: Api,
) -> None:
    """The same endpoint again replaces a device, so the bound does not refuse it."""
    ada = api.create_player("Ada")
    devices = [Device() for _ in range(MAX_PUSH_DEVICES)]
    added = [_add(api, ada, _subscription(device)) for device in devices]
    fresh = Device(path=devices[0].path)  # the browser subscribed again: new keys
    again = _add(api, ada, {**_subscription(fresh), "name": "Phone"})
    assert again["id"] == added[0]["id"] and again["name"] == "Phone"
    listed = _devices(api, ada)
    assert len(listed) == MAX_PUSH_DEVICES
    assert sorted(d["id"] for d in listed) == sorted(d["id"] for d in added)


def test_a_device_is_removed_alone_and_by_its_owner_only(api: Api) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    phone = _add(api, ada, _subscription(Device()))
    laptop = _add(api, ada, _subscription(Device()))
    assert api.request("DELETE", f"/api/me/push/{phone['id']}", player=bea).status_code == 404
    assert api.request("DELETE", f"/api/me/push/{phone['id']}").status_code == 401
    assert api.request("DELETE", f"/api/me/push/{phone['id']}", player=ada).status_code == 204
    assert _devices(api, ada) == [laptop]
    assert api.request("DELETE", f"/api/me/push/{phone['id']}", player=ada).status_code == 404
    assert api.request("GET", "/api/me/push").status_code == 401
    assert api.request("OPTIONS", "/api/me/push").headers["allow"] == "GET, OPTIONS, POST"


def test_a_server_without_a_push_key_says_push_is_off_and_takes_no_device(
    redis_url: str, redis_prefix: str
) -> None:
    """A server on its own Redis with no key file would make a key each process of its own:
    push is off there (the embedded server, one process, makes one at start)."""
    settings = Settings(redis_url=redis_url, prefix=redis_prefix)
    with TestClient(build_app(settings), timeout=30) as client:
        api = Api(client)
        assert api.ok(api.request("GET", "/api/push/key")) == {"public_key": None}
        ada = api.create_player("Ada")
        answer = api.request("POST", "/api/me/push", player=ada, json=_subscription(Device()))
        assert answer.status_code == 422 and answer.json()["field"] == "push", answer.text
        assert "off" in answer.json()["message"]


@pytest.fixture(scope="module")
def unlimited() -> Iterator[Api]:
    """The embedded server without a budget of changes of settings (many are tried)."""
    with TestClient(build_app(Settings(rate_notifications=0)), timeout=30) as client:
        yield Api(client)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            "endpoint": JSONISH | st.just(f"https://{PUBLIC_HOST}/p"),
            "keys": JSONISH,
            "expirationTime": JSONISH,
            "name": JSONISH,
        },
    )
)
def test_any_body_gets_an_answer_that_names_what_is_wrong_never_a_crash(
    unlimited: Api, body: dict[str, Any]
) -> None:
    api = unlimited
    ada = api.create_player("Ada")
    answer = api.request("POST", "/api/me/push", player=ada, json=body)
    assert answer.status_code in (400, 422), answer.text
    assert answer.json()["message"]
    assert _devices(api, ada) == []
