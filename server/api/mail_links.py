"""The links of the e-mails: confirming an address and unsubscribing, each a small page.

Mail programs and their link scanners fetch links by themselves, so a GET only shows a page
with a button, and the button's POST does it (RFC 8058's one-click unsubscribe is a POST too,
sent by the mail program with the body `List-Unsubscribe=One-Click`). The link's secret is
its only credential: it stands for one player (kept hashed, docs/notifications.md).
"""

from __future__ import annotations

import html
from typing import Annotated, Any

from litestar import Controller, HttpMethod, MediaType, Response, get, post, route
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter

from server.api.params import Svc
from server.schema.errors import error_responses

Token = Annotated[
    str, QueryParameter(min_length=1, max_length=128, description="The link's secret")
]
HTML = MediaType.HTML


def _errors(*statuses: int) -> dict[int, Any]:
    """The error answers: JSON, but an unknown link's 404, which is a page for a person."""
    unknown = ResponseSpec(
        data_container=str, media_type=HTML, description="An unknown or used link: a page"
    )
    return {**error_responses(*statuses), **({404: unknown} if 404 in statuses else {})}


def _page(title: str, text: str, action: str | None = None, token: str = "") -> Response[str]:
    form = ""
    if action is not None:
        form = (
            f'<form method="post" action="{html.escape(action)}?token={html.escape(token)}">'
            f'<button type="submit">{html.escape(title)}</button></form>'
        )
    body = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{form}</body></html>"
    )
    return Response(body, media_type=HTML)


class MailLinkRoutes(Controller):
    """What the links of the e-mails open."""

    path = "/api/email"
    tags = ("notifications",)

    @route("/confirm", http_method=[HttpMethod.OPTIONS], include_in_schema=False,
           status_code=204)  # fmt: skip
    async def allow_confirm(self) -> Response[None]:
        """Both methods (see `MeRoutes.allow_notifications`)."""
        return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, POST"})

    @route("/unsubscribe", http_method=[HttpMethod.OPTIONS], include_in_schema=False,
           status_code=204)  # fmt: skip
    async def allow_unsubscribe(self) -> Response[None]:
        return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, POST"})

    @get("/confirm", operation_id="showEmailConfirmation", media_type=HTML, responses=_errors(400))
    async def confirmation_page(self, token: Token) -> Response[str]:
        """A page with the button that confirms the address (a GET confirms nothing)."""
        return _page("Confirm your address", "Send game notifications to this address?",
                     "/api/email/confirm", token)  # fmt: skip

    @post("/confirm", operation_id="confirmEmail", media_type=HTML, status_code=200,
          responses=_errors(400, 404))  # fmt: skip
    async def confirm(self, token: Token, services: Svc) -> Response[str]:
        """Confirm the address the link was sent to (the link then works no more)."""
        if await services.notifications.confirm_address(token):
            return _page("Address confirmed", "Game notifications will come to this address.")
        page = _page("Unknown link", "This link was used already, is too old, or never was.")
        return Response(page.content, status_code=404, media_type=HTML)

    @get("/unsubscribe", operation_id="showUnsubscribe", media_type=HTML, responses=_errors(400))
    async def unsubscribe_page(self, token: Token) -> Response[str]:
        """A page with the button that stops the e-mails."""
        return _page("No more e-mails", "Stop every e-mail from Patrician?",
                     "/api/email/unsubscribe", token)  # fmt: skip

    @post("/unsubscribe", operation_id="unsubscribeEmail", media_type=HTML, status_code=200,
          opt={"own_body": True}, responses=_errors(400, 404))  # fmt: skip
    async def unsubscribe(self, token: Token, services: Svc) -> Response[str]:
        """Stop every e-mail (one click: RFC 8058 `List-Unsubscribe=One-Click`)."""
        if await services.notifications.unsubscribe(token):
            return _page("Unsubscribed", "No more e-mails will be sent to this address.")
        page = _page("Unknown link", "This link is not one of ours.")
        return Response(page.content, status_code=404, media_type=HTML)
