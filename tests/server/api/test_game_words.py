"""What a client needs to title a game by its players and to tell a player how a finished game
went, without its id (docs/api.md, `/api/lobby` and `/api/me/games`): the lobby names who sits
at each table; a player's list names the players in join order and seat by seat, and a game
that is over or called off says when it ended, with its result."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from tests.server.client import Api, Player, Table


def _seated(api: Api, players: list[Player], modules: tuple[str, ...] = ()) -> Table:
    """A started game of these players, the first its creator, joined in this order."""
    created = api.create_game(players[0], len(players), "towers", modules, "e0")
    for number, player in enumerate(players[1:], 1):
        api.join(player, created["game_id"], created["invite_code"], f"e{number}")
    return api.table_of(created["game_id"], players)


def _entry(api: Api, player: Player, game_id: str) -> dict[str, Any]:
    mine = api.ok(api.request("GET", "/api/me/games", player=player))
    (entry,) = [game for game in mine if game["game_id"] == game_id]
    return dict(entry)


def test_the_lobby_names_who_is_at_each_table_in_the_order_they_joined(api: Api) -> None:
    ada, bea = api.create_player("Ada"), api.create_player("Bea")
    created = api.create_game(ada, 4, "towers", ("delegates",))
    api.join(bea, created["game_id"], created["invite_code"])
    lobby = api.ok(api.request("GET", "/api/lobby"))
    (table,) = [game for game in lobby if game["game_id"] == created["game_id"]]
    assert table["names"] == ["Ada", "Bea"]
    assert table["joined"] == [ada.player_id, bea.player_id]
    waiting = _entry(api, bea, created["game_id"])
    assert waiting["names"] == ["Ada", "Bea"] and waiting["seat_names"] == []
    assert waiting["ended"] is None and waiting["phase"] == "waiting"


def test_a_finished_game_in_a_players_list_names_each_seat_its_result_and_when_it_ended(
    api: Api,
) -> None:
    players = [api.create_player(name) for name in ("Ada", "Bea", "Cyd")]
    table = _seated(api, players, ("trade_routes",))
    by_seat = [player.name for player in table.seats]
    playing = _entry(api, players[0], table.game_id)
    assert playing["names"] == ["Ada", "Bea", "Cyd"], "in the order they joined"
    assert playing["seat_names"] == by_seat, "seat 0 first"
    assert playing["ended"] is None and playing["result"] is None
    final = table.play_to_end(random.Random(3), whole_turns=0.5)
    for seat, player in enumerate(table.seats):
        over = _entry(api, player, table.game_id)
        assert over["phase"] == "over" and over["seat"] == seat
        assert over["seat_names"] == by_seat
        assert over["result"] == final["result"]
        assert over["ended"] is not None and over["ended"] == over["since"]
        assert datetime.fromisoformat(over["ended"]).tzinfo is not None, "UTC, with its offset"


def test_a_table_called_off_before_it_started_says_when(api: Api) -> None:
    ada, cyd = api.create_player("Ada"), api.create_player("Cyd")
    created = api.create_game(ada, 3)
    api.join(cyd, created["game_id"], created["invite_code"])
    api.ok(api.request("POST", f"/api/games/{created['game_id']}/cancel", player=ada))
    for player in (ada, cyd):
        entry = _entry(api, player, created["game_id"])
        assert entry["phase"] == "cancelled" and entry["result"] is None
        assert entry["names"] == ["Ada", "Cyd"] and entry["seat_names"] == []
        assert entry["ended"] is not None
