"""The HTTP routes of Web Push (`server.services.push_devices`), thin as the others: the
server's public push key, and the caller's devices that get their notifications."""

from __future__ import annotations

from litestar import Controller, HttpMethod, Response, delete, get, post, route
from litestar.params import FromPath, JSONBody

from server.api.params import BEARER, PLAYER, PlayerId, Svc
from server.schema import answers, requests
from server.schema.errors import error_responses


@get("/api/push/key", tags=["notifications"], operation_id="getPushKey")
async def push_key(services: Svc) -> answers.PushKeyInfo:
    """The server's public VAPID key, which a browser subscribes with
    (`applicationServerKey`); null when Web Push is off on this server."""
    return services.push.key()


class PushRoutes(Controller):
    """The caller's devices subscribed to Web Push."""

    path = "/api/me/push"
    tags = ("notifications",)
    dependencies = PLAYER
    security = BEARER

    @route("/", http_method=[HttpMethod.OPTIONS], include_in_schema=False, status_code=204)
    async def allow_push(self) -> Response[None]:
        """Both methods (see `MeRoutes.allow_notifications`)."""
        return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, POST"})

    @get("/", operation_id="listMyPushDevices", responses=error_responses(401))
    async def my_devices(self, player: PlayerId, services: Svc) -> list[answers.PushDeviceInfo]:
        """Your devices that get your notifications by Web Push."""
        return await services.push.list(player)

    @post("/", operation_id="addMyPushDevice", status_code=201,
          responses=error_responses(400, 401, 413, 415, 422))  # fmt: skip
    async def subscribe_device(
        self, data: JSONBody[requests.PushSubscription], player: PlayerId, services: Svc
    ) -> answers.PushDeviceInfo:
        """Get your notifications on this device: its browser's subscription
        (`PushSubscription.toJSON()`, made with the key of `GET /api/push/key`) and a name. The
        same endpoint again replaces its keys and name."""
        return await services.push.add(player, data)

    @delete("/{device_id:str}", operation_id="removeMyPushDevice",
            responses=error_responses(400, 401, 404))  # fmt: skip
    async def remove_device(
        self, device_id: FromPath[str], player: PlayerId, services: Svc
    ) -> None:
        """No more notifications on that device."""
        await services.push.remove(player, device_id)
