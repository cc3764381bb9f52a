"""Setting one's channels over the API: a webhook's secret is shown once, a URL that points
inside the network is refused at once with the field and the reason, quiet hours need a real
time zone, and nothing is sent to a webhook that is off."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import fakeredis
import pytest
from msgspec.structs import replace

from server.config.card_data import load_game_data
from server.schema import requests
from server.schema.errors import InvalidSetting
from server.services.bundle import build_services
from store.client import AsyncEventStore
from store.notifications import Webhook, channels_op, set_channels_op
from tests.server.client import Api

REFUSED = [
    "http://127.0.0.1/hook",
    "http://[::1]/hook",
    "http://10.1.2.3/hook",
    "http://172.16.0.9/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://localhost:8000/hook",
    "http://2130706433/hook",
    "ftp://example.com/hook",
    "file:///etc/passwd",
    "http://user:pw@example.com/hook",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_webhook_url_inside_the_network_is_refused_when_it_is_set(api: Api, url: str) -> None:
    me = api.create_player("Ada")
    answer = api.request("PUT", "/api/me/notifications", player=me, json={"webhook": {"url": url}})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"] == "invalid_setting" and body["field"] == "webhook.url"
    assert body["message"]
    assert api.ok(api.request("GET", "/api/me/notifications", player=me))["webhook"] is None


def test_a_webhook_host_not_looked_up_just_now_is_refused_with_advice_and_nothing_changes(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary failure of the name servers is not a verdict on the URL: it is refused, it
    says to try again later, and the webhook set before stays as it was."""
    looked_up = socket.getaddrinfo

    def name_servers(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example":
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host == "ok.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]
        return looked_up(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", name_servers)
    me = api.create_player("Ada")
    before = {"webhook": {"url": "https://ok.example/hook"}}
    set_before = api.ok(api.request("PUT", "/api/me/notifications", player=me, json=before))
    body = {"webhook": {"url": "https://hooks.example/hook"}}
    answer = api.request("PUT", "/api/me/notifications", player=me, json=body)
    assert answer.status_code == 422, answer.text
    refused = answer.json()
    assert refused["error"] == "invalid_setting" and refused["field"] == "webhook.url"
    assert "hooks.example" in refused["message"] and "try again later" in refused["message"]
    after = api.ok(api.request("GET", "/api/me/notifications", player=me))
    assert after["webhook"]["url"] == set_before["webhook"]["url"] == "https://ok.example/hook"


def test_other_settings_change_without_a_lookup_of_a_webhook_kept_on_but_one_turned_on_is_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A passing failure of the name servers refuses no change of quiet hours while the same
    webhook stays on (it was checked when set, and is at every connection); setting the same
    URL to turn a webhook that was turned off back on checks it again."""
    failing = [False]
    looked_up = socket.getaddrinfo

    def name_servers(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "ok.example":
            return looked_up(host, port, *args, **kwargs)
        if failing[0]:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]

    monkeypatch.setattr(socket, "getaddrinfo", name_servers)
    hook = requests.WebhookSetting(url="https://ok.example/hook")
    quiet = requests.QuietHoursSetting(start="22:00", end="07:00", time_zone="Europe/Berlin")

    async def scenario() -> None:
        services = build_services(AsyncEventStore(fakeredis.FakeAsyncRedis()), load_game_data())
        me = (await services.accounts.create_player("Ada")).player_id
        notifications = services.notifications
        first = await notifications.put(me, requests.NotificationSettings(webhook=hook))
        failing[0] = True
        kept = await notifications.put(
            me, requests.NotificationSettings(webhook=hook, quiet_hours=quiet)
        )
        assert kept.quiet_hours is not None and kept.webhook is not None
        assert kept.webhook.enabled and kept.webhook.secret is None  # the same secret, kept
        assert first.webhook is not None and first.webhook.secret is not None
        keys, channels = (
            notifications.keys,
            await services.games.run(channels_op(notifications.keys, me)),
        )
        assert channels.webhook is not None
        off = replace(channels, webhook=Webhook(channels.webhook.url, channels.webhook.secret, "x"))
        await services.games.run(set_channels_op(keys, me, off))
        with pytest.raises(InvalidSetting, match="try again later"):
            await notifications.put(me, requests.NotificationSettings(webhook=hook))
        failing[0] = False
        again = await notifications.put(me, requests.NotificationSettings(webhook=hook))
        assert again.webhook is not None and again.webhook.enabled

    asyncio.run(scenario())


def test_quiet_hours_need_a_real_time_zone_and_two_different_times(api: Api) -> None:
    me = api.create_player("Ada")
    bad_zone = {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Mars/Olympus"}}
    answer = api.request("PUT", "/api/me/notifications", player=me, json=bad_zone)
    assert answer.status_code == 422 and answer.json()["field"] == "quiet_hours.time_zone"
    for name in ("Europe", "../etc/passwd", "Europe/Berlin/", "a\u0000b"):
        zone = {"quiet_hours": {**bad_zone["quiet_hours"], "time_zone": name}}
        refused = api.request("PUT", "/api/me/notifications", player=me, json=zone)
        assert refused.status_code == 422, (name, refused.text)
    same = {"quiet_hours": {"start": "22:00", "end": "22:00", "time_zone": "Europe/Berlin"}}
    assert api.request("PUT", "/api/me/notifications", player=me, json=same).status_code == 422
    bad_time = {"quiet_hours": {"start": "25:00", "end": "07:00", "time_zone": "Europe/Berlin"}}
    assert api.request("PUT", "/api/me/notifications", player=me, json=bad_time).status_code == 400
    good = {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}}
    body = api.ok(api.request("PUT", "/api/me/notifications", player=me, json=good))
    expected = {"webhook": None, "quiet_hours": good["quiet_hours"], "reminder_hours": [24, 1]}
    assert body == {**expected, "email": None, "digest": None, "push": []}


def test_the_settings_are_the_callers_own_and_need_a_token(api: Api) -> None:
    assert api.request("GET", "/api/me/notifications").status_code == 401
    assert api.request("PUT", "/api/me/notifications", json={}).status_code == 401
    assert api.request("GET", "/api/me/deliveries").status_code == 401
    me = api.create_player("Ada")
    unknown = {"webhook": {"url": "https://example.com/h", "secret": "mine"}}
    assert api.request("PUT", "/api/me/notifications", player=me, json=unknown).status_code == 400
    assert api.ok(api.request("GET", "/api/me/deliveries", player=me)) == []


def test_the_settings_address_says_it_takes_get_and_put(api: Api) -> None:
    answer = api.request("OPTIONS", "/api/me/notifications")
    assert answer.status_code == 204 and answer.headers["allow"] == "GET, OPTIONS, PUT"


def test_reminder_hours_are_kept_once_each_the_earliest_first_and_bad_ones_refused(
    api: Api,
) -> None:
    me = api.create_player("Ada")
    chosen = {"reminder_hours": [1, 12, 1, 0.5]}
    body = api.ok(api.request("PUT", "/api/me/notifications", player=me, json=chosen))
    assert body["reminder_hours"] == [12, 1, 0.5]
    assert api.ok(api.request("GET", "/api/me/notifications", player=me)) == body
    for bad in ([0], [-1], [24 * 61], [1, 2, 3, 4, 5, 6], ["soon"]):
        answer = api.request(
            "PUT", "/api/me/notifications", player=me, json={"reminder_hours": bad}
        )
        assert answer.status_code == 400 and "reminder_hours" in answer.text, answer.text
    none = api.ok(
        api.request("PUT", "/api/me/notifications", player=me, json={"reminder_hours": []})
    )
    assert none["reminder_hours"] == []
