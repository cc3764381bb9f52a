"""What a person chooses: one command per decision (R44), as tagged, frozen msgspec Structs.

The tags are the wire names of the API and of game records; they never change. A command
names things the way a player does (card ids, city names, site 0 or 1), never by index.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Site = Literal[0, 1]
Side = Literal["trader", "bandit"]


class _Command(msgspec.Struct, frozen=True, gc=False, tag_field="type", forbid_unknown_fields=True):
    pass


class PlayCard(_Command, tag="play_card", frozen=True):
    """R10: play a card from the hand."""

    card: str


class PlaceFloor(_Command, tag="place_floor", frozen=True):
    """R11: place one floor of the played card's city on site 0 or 1."""

    site: Site


class TakeCard(_Command, tag="take_card", frozen=True):
    """R14: take the face-up card of a city."""

    city: str


class MoveFloor(_Command, tag="move_floor", frozen=True):
    """R15: move the top floor of `from_site` in `city` onto the other site."""

    city: str
    from_site: Site


class PlaceTradeRoute(_Command, tag="place_trade_route", frozen=True):
    """R30: put a marker on the signpost between two cities, Trader or Bandit side up."""

    cities: tuple[str, str]
    side: Side


class ChooseArchitettoSite(_Command, tag="choose_architetto_site", frozen=True):
    """R21b: choose the site of the Architetto's floor where both sites are equal."""

    site: Site


class Skip(_Command, tag="skip", frozen=True):
    """Decline an optional step: the move (R15) or the trade route (R30)."""


Command = (
    PlayCard | PlaceFloor | TakeCard | MoveFloor | PlaceTradeRoute | ChooseArchitettoSite | Skip
)

command_decoder = msgspec.json.Decoder(Command)
