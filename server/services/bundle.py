"""The services behind the routes, built over one store: the app's (`server.app`) or a
test's. One object, so that a request resolves one dependency for all of them (each more
costs the busiest read a tenth of its time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from domain.gamedata import GameData
from evidence.signatures import Signer
from evidence.signing_keys import signer_for
from outbound.targets import Allowlist
from outbound.web_push import PushKey
from server.services.accounts import AccountService
from server.services.analysis import AnalysisService
from server.services.games import GameService
from server.services.handovers import Enqueue, HandoverService
from server.services.history import HistoryService
from server.services.listings import ListingService
from server.services.notifications import NotificationService
from server.services.previews import PreviewService
from server.services.profiles import ProfileService
from server.services.push_devices import PushDeviceService
from server.services.ratings import RatingService
from server.services.rematch import RematchService
from server.services.stream_tickets import StreamTicketService
from server.services.talk import TalkService
from server.services.vacations import VacationService
from store.accounts import Accounts
from store.client import AsyncEventStore
from store.clock import Clock, system_clock
from store.cluster import on_cluster
from store.command_path import CommandPath, StateCache
from store.loading import SnapshotPolicy
from store.notifications import NotificationKeys


class Services(NamedTuple):
    accounts: AccountService
    games: GameService
    history: HistoryService
    listings: ListingService
    notifications: NotificationService
    handovers: HandoverService
    vacations: VacationService
    talk: TalkService
    previews: PreviewService
    tickets: StreamTicketService
    signer: Signer
    push: PushDeviceService
    rematch: RematchService
    ratings: RatingService
    profiles: ProfileService
    analysis: AnalysisService


def build_services(
    store: AsyncEventStore,
    game_data: GameData,
    *,
    prefix: str = "patrician",
    snapshot_every: int = 50,
    follow_store: AsyncEventStore | None = None,
    clock: Clock = system_clock,
    webhook_allow: str = "",
    enqueue: Enqueue | None = None,
    confirm_email: Callable[[str, str], None] | None = None,
    away: Callable[[str], None] | None = None,
    analyse: Callable[[str, int], None] | None = None,
    signer: Signer | None = None,
    push_key: PushKey | None = None,
) -> Services:
    """The services behind the routes, over one store (the app's, or a test's)."""
    path = CommandPath(
        store.context, game_data, cache=StateCache(), snapshots=SnapshotPolicy(snapshot_every)
    )
    keys = Accounts(prefix, cluster=on_cluster(store.client))
    accounts = AccountService(store, keys, clock=clock)
    signer = signer or signer_for(None)
    games = GameService(store, path, keys, accounts, signer, follow_store=follow_store, clock=clock)
    allow = Allowlist.parse(webhook_allow)
    push = PushDeviceService(
        store, NotificationKeys(keys), allow=allow, push_key=push_key, clock=clock
    )
    notifications = NotificationService(
        store, NotificationKeys(keys), allow=allow, confirm=confirm_email or _no_mail,
        devices=push,
    )  # fmt: skip
    handovers = HandoverService(store, path, enqueue or _no_workers)
    ratings = RatingService(store, keys)
    listings = ListingService(
        store, path, keys, clock=clock, clocks=games.timing.clocks, ratings=ratings.shown_for
    )
    vacations = VacationService(store, keys, away or _no_clocks, clock=clock)
    talk = TalkService(games, accounts)
    profiles = ProfileService(store, path, keys, listings, ratings)
    games.admit = profiles.admit
    return Services(
        accounts, games, HistoryService(games), listings, notifications, handovers, vacations, talk,
        PreviewService(games), StreamTicketService(games), signer, push,
        RematchService(games, accounts), ratings, profiles, AnalysisService(games, prefix, analyse),
    )  # fmt: skip


def _no_clocks(player_id: str) -> None:
    """Services without workers (some tests): no deadline is moved."""


def _no_mail(player_id: str, address: str) -> None:
    """Services without workers (some tests): no confirmation is sent."""


def _no_workers(game_id: str, player_id: str, seat: int) -> None:
    """Services without workers (some tests): the bot plays from the next append on."""
