"""What the jobs of a worker process run with: the store, the command path, the keys of the
accounts and of the notifications, the queue, the webhooks' sender (where they may go), the
clock and the budget of the bots. Set once when the process starts (RQ calls job functions by
name, with primitive arguments only), read by every job."""

from __future__ import annotations

from dataclasses import dataclass, field

from rq import Queue

from evidence.signatures import Signer
from outbound.targets import Allowlist
from outbound.web_push import PushKey
from store.accounts import Accounts
from store.client import EventStore
from store.clock import Clock, system_clock
from store.command_path import CommandPath
from store.notifications import NotificationKeys
from workers.webhook_sending import WebhookSender


@dataclass
class WorkerContext:
    store: EventStore
    path: CommandPath
    accounts: Accounts
    queue: Queue
    signer: Signer = field(repr=False)
    """The server's signing key, listed before it signs: the receipt in each webhook
    (`evidence.signing_keys`)."""
    push_key: PushKey | None = field(default=None, repr=False)
    """The server's VAPID key, shared by every process (`outbound.web_push`; None: push off)."""
    push_contact: str = "mailto:patrician@localhost"
    """Who runs the server, as push services are told (`PATRICIAN_PUSH_CONTACT`)."""
    webhooks: WebhookSender = field(default_factory=lambda: WebhookSender(Allowlist()))
    """What sends the webhooks, keeping their connections open a few seconds, to targets
    checked against the networks the operator lets webhooks reach despite the SSRF rules
    (`PATRICIAN_WEBHOOK_ALLOW`)."""
    public_url: str = "http://127.0.0.1:8000"
    """Where players reach the server (`PATRICIAN_PUBLIC_URL`): the links in notifications."""
    clock: Clock = system_clock
    smtp_url: str = field(default="smtp://127.0.0.1:25", repr=False)
    """The SMTP server e-mails go through (`PATRICIAN_SMTP_URL`, `workers.smtp`); out of the
    repr: it may hold a password."""
    mail_from: str = "Patrician <patrician@localhost>"
    mail_grace_seconds: float = 120.0
    """How long a turn's e-mail waits: dropped if the player plays meanwhile."""
    bot_options: dict[str, dict[str, object]] = field(
        default_factory=lambda: {"ismcts": {"iterations": 300}}
    )
    """The options of each level of bot (the search's budget: iterations, so that a bot's
    move does not depend on how busy the machine is)."""
    later_queue: Queue | None = None
    """The queue of the work nobody waits on (`workers.settings.later_queue_of`; None: the
    jobs' queue)."""
    analysis_iterations: int = 1500
    """The search's iterations per decision of a finished game's analysis
    (`workers.analysis`; `PATRICIAN_ANALYSIS_ITERATIONS`; 0: no game is analysed)."""
    levels: dict[str, str] = field(default_factory=dict)
    """The bot level of each player seen (a player never changes: kept)."""

    @property
    def notifications(self) -> NotificationKeys:
        return NotificationKeys(self.accounts)


_current: list[WorkerContext] = []


def configure(context: WorkerContext) -> None:
    _current[:] = [context]


def current() -> WorkerContext:
    if not _current:
        raise RuntimeError("no worker context: call workers.context.configure first")
    return _current[0]
