"""The whole-turn planner of the test client: a turn planned from the board, as a player
plans it, which may be wrong part way (the server says where)."""

from __future__ import annotations

import random
from typing import Any

Json = Any


def plan_turn(board: Json, first: Json, cards: dict[str, Json], rng: random.Random) -> list[Json]:
    """A whole turn after playing `first`, as a player plans it from the board: a floor per
    crest while floors and room last, the card to take, and `skip` for the optional steps the
    card may open. It may be wrong (a step that does not come); the server says where."""
    card = cards[first["card"]]
    city = next(c for c in board["cities"] if c["name"] == card["city"])
    me = board["players"][board["viewer"]]
    sites = [len(city["sites"][0]), len(city["sites"][1])]
    floors, capacity, supply = city["floors"], city["capacity"], me["supply"]
    plan = [first]
    for _ in range(card["crests"]):
        if supply == 0 or floors >= capacity:
            break
        choices = [0, 1]
        if floors + 1 == capacity and 0 in sites:
            choices = [sites.index(0)]
        site = rng.choice(choices)
        plan.append({"type": "place_floor", "site": site})
        sites[site] += 1
        floors += 1
        supply -= 1
    face_up = {c["name"]: c["face_up"] for c in board["cities"] if c["face_up"] is not None}
    take: list[Json] = []
    if face_up:
        if card["action"] != "take_any_faceup_card" and card["city"] in face_up:
            take = [{"type": "take_card", "city": card["city"]}]
        else:
            take = [{"type": "take_card", "city": rng.choice(sorted(face_up))}]
    move: list[Json] = [{"type": "skip"}] if card["action"] == "move_top_floor" else []
    if board["edition"] == "classic":
        plan += move + take
    else:
        plan += take + move
        if card["star"] and "trade_routes" in board["modules"]:
            plan.append({"type": "skip"})
    return plan
