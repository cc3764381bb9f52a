"""The bot clients of the load benchmark (bench/load.py): players that play whole games over
the HTTP API alone, woken by their webhooks, in one asyncio process per share of the games.

Why a module of its own: the load script starts the stack, kills parts of it and prints the
figures; this is what runs in each client process (spawned), and nothing in it knows about
the processes of the stack but the API's base URLs.

Each human seat is a player with a webhook to this process's sink (a real loopback HTTP
server that checks every Standard Webhooks signature with `standardwebhooks`). A player acts
only when told: `turn.started` (the first turn's too) makes it read its board (`legal_commands`)
and play its turn, either one command per request or the whole turn staged with
`/preview` and sent in one request; `game.ended` ends it. With a think time (`Share.think`,
`--think` of the load script) a player waits before each turn it is told of, a random while
of that mean (exponential, as people answer), and the games may be set up over a while
(`Share.ramp`, `--ramp`) rather than all at once: the paced load of correspondence. Without
them the load is closed: every game waits only on the stack. So every turn start at a human seat
must be notified, or its game stalls (after `PROMPT_SECONDS` without one the game's boards are
read anyway, and the turn played is counted as unprompted). Every request that finds the
stack down is sent again (bench/loadapi.py, `Api`): that is a retry, not an error. Every other
refusal is an error.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from bench.loadapi import Api, Figures, Game, Player, Refused, decode, encode
from bench.loadchecks import check_games

PROMPT_SECONDS = 300.0
"""How long a game waits for a notification before reading its boards anyway. A player by
correspondence waits hours; here long enough for a notification that is late, not lost (a
worker killed mid-job leaves its follow-up to another after 15-50 s, docs/workers.md; on a
saturated machine a bot's turn of several appends, a job each, queued behind thousands, took
over 90 s): a turn played unprompted is one whose notification never came in that time."""


class Sink:
    """The webhook receiver: checks each signature, drops a copy whose `webhook-id` it has
    seen (docs/notifications.md), and hands each message to its player's game."""

    def __init__(self, figures: Figures) -> None:
        self.figures = figures
        self.players: dict[str, tuple[Player, Game]] = {}
        self.seen: set[str] = set()
        self.runner: web.AppRunner | None = None
        self.base = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{player}", self._receive)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _receive(self, request: web.Request) -> web.Response:
        body = await request.read()
        found = self.players.get(request.path)
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            if found is None or found[0].webhook is None:
                raise WebhookVerificationError("no such player")
            found[0].webhook.verify(body, headers)
        except WebhookVerificationError:
            self.figures.bad_signatures += 1
            return web.Response(status=400)
        webhook_id = headers["webhook-id"]
        if webhook_id in self.seen:
            self.figures.duplicates += 1
            return web.Response()
        self.seen.add(webhook_id)
        message = decode(body)
        self.figures.delivered[message["type"]] += 1
        if message.get("receipt"):
            accepted = datetime.fromisoformat(message["receipt"]["time"].replace("Z", "+00:00"))
            self.figures.delays.append((datetime.now(UTC) - accepted).total_seconds())
        player, game = found
        game.told.add((message["type"], message["version"], player.player_id))
        game.inbox.put_nowait((player, message))
        return web.Response()


class Clients:
    """The games of one client process, set up and played concurrently."""

    def __init__(self, api: Api, sink: Sink, rng: random.Random, think: float = 0.0) -> None:
        self.api, self.sink, self.rng, self.figures = api, sink, rng, api.figures
        self.think = think
        """The mean seconds a player waits before each turn it is told of (0: none)."""

    async def player(self, game: Game, number: int) -> Player:
        made = await self.api.call("POST", "/api/players", None, {"name": f"load {number}"})
        player = Player(made["token"], made["player_id"], f"/{uuid.uuid4().hex}")
        self.sink.players[player.path] = (player, game)
        setting = {"webhook": {"url": self.sink.base + player.path}}
        answer = await self.api.call("PUT", "/api/me/notifications", player.token, setting)
        player.webhook = Webhook(answer["webhook"]["secret"])
        return player

    async def set_up(self, game: Game) -> None:
        """Players with webhooks, the game created (with the server's bots) and joined."""
        humans = game.seats - len(game.bots)
        game.humans = [await self.player(game, number) for number in range(humans)]
        body = {
            "seats": game.seats,
            "edition": game.edition,
            "modules": game.modules,
            "bots": [{"level": level} for level in game.bots],
            "command_id": uuid.uuid4().hex,
            "entropy": uuid.uuid4().hex,
        }
        created = await self.api.call("POST", "/api/games", game.humans[0].token, body)
        game.game_id = created["game_id"]
        game.receipts.append(encode(created["receipt"]))
        for player in game.humans[1:]:
            joined = await self.api.call(
                "POST",
                f"/api/games/{game.game_id}/join",
                player.token,
                {"invite_code": created["invite_code"], "entropy": uuid.uuid4().hex},
                home=game.home,
            )
            game.receipts.append(encode(joined["receipt"]))

    async def play(self, game: Game, progress: Any) -> None:
        """Play every human turn as it is notified, until every human was told the end."""
        while len(game.ended) < len(game.humans):
            try:
                player, message = await asyncio.wait_for(game.inbox.get(), PROMPT_SECONDS)
            except TimeoutError:
                if await self._unprompted(game, progress):
                    return
                continue
            if message["type"] == "game.ended":
                game.ended.add(player.player_id)
            elif message["type"] == "turn.started":  # the first turn too, with game.started
                if self.think:
                    await asyncio.sleep(self.rng.expovariate(1 / self.think))
                await self.turn(game, player, progress, told=message["version"])
        game.finished = True

    async def _unprompted(self, game: Game, progress: Any) -> bool:
        """No notification for a long while: read the boards; whether the game is over."""
        for player in game.humans:
            board = await self._board(game, player)
            if board["phase"] == "over":
                game.finished = True
                return True
            if _mine(board):
                self.figures.unprompted += 1
                await self.turn(game, player, progress, board)
        return False

    async def _board(self, game: Game, player: Player) -> Any:
        return await self.api.call(
            "GET", f"/api/games/{game.game_id}", player.token, home=game.home
        )

    async def turn(
        self, game: Game, player: Player, progress: Any, board: Any = None, told: int = -1
    ) -> None:
        """The player's decisions while they are theirs: one command a request, or the whole
        turn staged by previews and sent at once (a request ends where a card is revealed).
        `told`: the version of the notification that woke the player; if the game has moved
        since, the turn it told of is over (the player played it, woken by an earlier one
        late), and a later turn of theirs is told of on its own: played when that comes."""
        board = board or await self._board(game, player)
        if told >= 0 and board["version"] != told:
            return
        whole = self.rng.random() < 2 / 3  # one append a turn: the workers' job per append
        while _mine(board):
            commands = [self.rng.choice(board["legal_commands"])]
            while whole and len(commands) < 30:
                seen = await self.api.call(
                    "POST",
                    f"/api/games/{game.game_id}/preview",
                    player.token,
                    {"expected_version": board["version"], "commands": commands},
                    home=game.home,
                )
                if seen["ends_batch"] or not _mine(seen["view"]):
                    break
                commands.append(self.rng.choice(seen["view"]["legal_commands"]))
            board = await self._send(game, player, board["version"], commands, progress)
            if board is None:
                return  # others moved after these commands: a later turn is told of

    async def _send(
        self, game: Game, player: Player, version: int, commands: list[Any], progress: Any
    ) -> Any | None:
        """Send the commands; the board after them, which the answer carries (asked for), or
        None when it shows the game moved on past them already (a bot's turn appended
        meanwhile): the player's next decision then comes with its own notification, which
        the server sends only if the turn is still to play when it follows that append."""
        command_id = uuid.uuid4().hex
        body = {"expected_version": version, "command_id": command_id, "commands": commands}
        started = time.perf_counter()
        path = f"/api/games/{game.game_id}/commands?include=board"
        accepted = await self.api.call("POST", path, player.token, body, home=game.home)
        self.figures.latencies.append(time.perf_counter() - started)
        self.figures.commands += len(commands)
        game.receipts.append(encode(accepted["receipt"]))
        game.acknowledged[command_id] = commands
        with progress.get_lock():
            progress.value += len(commands)
        board = accepted["board"]
        return board if board["version"] == accepted["version"] else None


def _mine(board: Any) -> bool:
    pending = board.get("pending")
    return pending is not None and pending["seat"] == board.get("viewer")


@dataclass
class Share:
    """What the load script hands one client process: the games to play and where."""

    bases: list[str]
    games: list[tuple[int, str, list[str], list[str]]]
    """(seats, edition, modules, the server's bot levels) of each game."""
    seconds: float
    seed: int
    sample_dir: str
    """Where the records and receipts of a few games are written, for the real CLI's audit."""
    connections: int = 48
    think: float = 0.0
    """The mean seconds a player waits before each turn it is told of (0: a closed load)."""
    ramp: float = 0.0
    """The seconds over which the games are set up, evenly (0: all at once)."""


@dataclass
class Outcome:
    figures: Figures
    game_ids: list[str]
    finished: int
    problems: list[str]
    expected: Counter[str]
    told: Counter[str]
    """The notifications delivered to the players of the finished games, by type."""
    play_seconds: float
    receipts: int


def run_share(share: Share, progress: Any, ended: Any, set_up: Any, results: Any) -> None:
    """The body of one client process (spawned): set up, play, check; the outcome queued."""
    import uvloop

    uvloop.install()
    try:
        results.put(asyncio.run(_run(share, progress, ended, set_up)))
    except BaseException as error:  # the load script must hear of it, not wait for ever
        set_up.set()
        results.put(
            Outcome(
                Figures(),
                [],
                0,
                [f"a client process failed: {error!r}"],
                Counter(),
                Counter(),
                0.0,
                0,
            )
        )
        raise


async def _run(share: Share, progress: Any, ended: Any, set_up: Any) -> Outcome:
    """`progress` counts the commands acknowledged, `ended` the games finished (shared with
    the load script, which drills while games are in play); `set_up` is set once every
    table of the share is full."""
    figures = Figures()
    sink = Sink(figures)
    await sink.start()
    rng = random.Random(share.seed)
    connector = aiohttp.TCPConnector(limit=share.connections)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        api = Api(session, share.bases, figures)
        clients = Clients(api, sink, rng, share.think)
        games = [
            Game(seats, edition, modules, bots, home=number % len(share.bases))
            for number, (seats, edition, modules, bots) in enumerate(share.games)
        ]
        started = time.monotonic()
        gate = asyncio.Semaphore(share.connections)

        async def one(number: int, game: Game) -> None:
            await asyncio.sleep(share.ramp * number / len(games))  # the games spread out
            try:
                async with gate:
                    try:
                        await clients.set_up(game)
                    finally:
                        game.joined.set()
                await clients.play(game, progress)
                with ended.get_lock():
                    ended.value += 1
            except Refused as refused:
                figures.errors.append(f"{game.game_id or 'a new game'}: {refused}")

        tasks = [asyncio.ensure_future(one(n, game)) for n, game in enumerate(games)]
        setting_up = asyncio.ensure_future(asyncio.gather(*(g.joined.wait() for g in games)))
        await asyncio.wait([setting_up], timeout=share.seconds)
        set_up.set()
        left = share.seconds - (time.monotonic() - started)
        _, pending = await asyncio.wait(tasks, timeout=max(left, 0.0))
        for task in pending:
            task.cancel()
        play_seconds = time.monotonic() - started
        await asyncio.sleep(2.0)  # notifications still on their way (the last game.ended)
        problems, expected, told, receipts = await check_games(api, games, share.sample_dir)
    await sink.stop()
    return Outcome(
        figures,
        [game.game_id for game in games if game.game_id],
        sum(game.finished for game in games),
        problems,
        expected,
        told,
        play_seconds,
        receipts,
    )
