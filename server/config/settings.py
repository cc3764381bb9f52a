"""What a server process is started with: its settings, from the environment (`PATRICIAN_*`,
`REDIS_URL`) or given by a test, each checked when they are made, so that settings that
cannot work stop the start rather than a request later.
"""

from __future__ import annotations

import os
import urllib.parse

import msgspec

from outbound.web_push import PushKeyError, contact_accepted
from server.config.redis_clients import redis_settings
from server.schema.limits import MAX_BODY
from server.transport.rate_limits import parse_networks, whole_number
from workers.settings import WorkerSettings
from workers.smtp import settings_repr, smtp_server


class Settings(msgspec.Struct, frozen=True):
    redis_url: str | None = None
    redis_cluster: bool = False
    """The event store is on a Redis Cluster (`PATRICIAN_REDIS_CLUSTER=1`, or a URL
    `redis+cluster://`: `server.config.redis_clients`); then `queue_url` must be given."""
    queue_url: str | None = None
    """The plain Redis of the jobs' queue (`PATRICIAN_QUEUE_URL`); by default the store's,
    which must then be a plain Redis (RQ's jobs are not cluster-safe)."""
    prefix: str = "patrician"
    shards: int = 16
    archive_dir: str | None = None
    """The folder of the archive files of finished games (`PATRICIAN_ARCHIVE_DIR`,
    `store.shelf`); None keeps each archive in Redis. The same for every process."""
    card_file: str | None = None
    snapshot_every: int = 50
    max_body: int = MAX_BODY
    gather_seconds: float = 0.001
    """How long the first Redis request of a moment waits for others to share its round trip
    (a real Redis only, plain or cluster: the embedded one answers without a round trip)."""
    embedded_workers: bool = True
    """On the embedded store, run the workers in this process (the tests of everything else
    turn them off: they double the time of a game played as fast as a test plays)."""
    webhook_allow: str = ""
    """Networks webhooks may reach despite the SSRF rules (`PATRICIAN_WEBHOOK_ALLOW`)."""
    public_url: str = "http://127.0.0.1:8000"
    """Where players reach the server (`PATRICIAN_PUBLIC_URL`): the links sent to them."""
    smtp_url: str = "smtp://127.0.0.1:25"
    """The SMTP server of the e-mails (`PATRICIAN_SMTP_URL`, docs/notifications.md)."""
    mail_from: str = "Patrician <patrician@localhost>"
    """Their sender (`PATRICIAN_MAIL_FROM`)."""
    mail_grace_seconds: float = 120.0
    """How long a turn's e-mail waits, dropped if the player plays meanwhile
    (`PATRICIAN_MAIL_GRACE_SECONDS`)."""
    signing_key_file: str | None = None
    """The server's Ed25519 key (`PATRICIAN_SIGNING_KEY_FILE`, made by `patrician keygen`);
    None: a key made at start for this process alone (docs/record.md, "Signatures")."""
    push_key_file: str | None = None
    """The server's VAPID key of Web Push (`PATRICIAN_PUSH_KEY_FILE`, made by `patrician
    push-keygen`), shared by every process; None: a key made at start by the embedded
    server, and push off on a server with its own Redis (docs/notifications.md, "Push")."""
    push_contact: str = ""
    """Who runs this server, told to push services in every push (`PATRICIAN_PUSH_CONTACT`: a
    mailto: or https: URL); "" for the public URL if it is https, else a mailto: of
    localhost."""
    analysis_iterations: int = 1500
    """The search's iterations per decision when a finished game is analysed
    (`PATRICIAN_ANALYSIS_ITERATIONS`; 0: no game is analysed; docs/bots.md, "Analysis")."""
    rate_players: int = 10_000
    """New players per client address in a rate window (`PATRICIAN_RATE_PLAYERS`; 0: no limit;
    docs/api.md, "Rate limits"). Generous: a benchmark creates thousands from one address."""
    rate_games: int = 10_000
    """New games per client address in a rate window (`PATRICIAN_RATE_GAMES`)."""
    rate_joins: int = 20_000
    """Joins per client address in a rate window (`PATRICIAN_RATE_JOINS`)."""
    rate_audits: int = 60
    """Audits (`POST /api/audit`) per client address in a rate window (`PATRICIAN_RATE_AUDITS`)."""
    rate_notifications: int = 30
    """Changes of notification settings (`PUT /api/me/notifications`, each new e-mail address
    sent a confirmation) per client address in a rate window (`PATRICIAN_RATE_NOTIFICATIONS`)."""
    rate_window_seconds: int = 60
    """The rate window (`PATRICIAN_RATE_WINDOW_SECONDS`)."""
    max_in_flight: int = 256
    """Requests (streams included) one client address may have in flight in one server
    process (`PATRICIAN_MAX_IN_FLIGHT`; 0: no limit)."""
    trusted_proxies: str = ""
    """Addresses or networks of reverse proxies whose `X-Forwarded-For` names the client
    (`PATRICIAN_TRUSTED_PROXIES`, a comma list; none: the peer is the client)."""
    cors_origins: str = ""
    """Web origins of third-party clients allowed to call the API from a browser
    (`PATRICIAN_CORS_ORIGINS`, a comma list; none: CORS is off)."""
    access_log: bool = False
    """A log line per request, under its id (`PATRICIAN_ACCESS_LOG=1`); appends and refusals
    are logged anyway."""

    def __post_init__(self) -> None:
        smtp_server(self.smtp_url)  # a URL that cannot be used stops the start (no password said)
        parse_networks(self.trusted_proxies)  # so does a proxy that is no address
        contact = self.push_contact or _contact_of(self.public_url)
        if not contact_accepted(contact):
            raise PushKeyError(
                f"PATRICIAN_PUSH_CONTACT {contact!r}: push services take a mailto: address or "
                "an https:// origin"
            )
        msgspec.structs.force_setattr(self, "push_contact", contact)
        # Settings that cannot work stop the start too; what they imply is set here, once.
        cluster, queue_url = redis_settings(self.redis_url, self.redis_cluster, self.queue_url)
        msgspec.structs.force_setattr(self, "redis_cluster", cluster)
        msgspec.structs.force_setattr(self, "queue_url", queue_url)

    def __repr__(self) -> str:
        return settings_repr(self)

    @classmethod
    def from_environment(cls) -> Settings:
        env = os.environ
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            redis_cluster=env.get("PATRICIAN_REDIS_CLUSTER", "") == "1",
            queue_url=env.get("PATRICIAN_QUEUE_URL") or None,
            prefix=env.get("PATRICIAN_PREFIX", "patrician"),
            shards=int(env.get("PATRICIAN_SHARDS", "16")),
            archive_dir=env.get("PATRICIAN_ARCHIVE_DIR") or None,
            card_file=env.get("PATRICIAN_CARD_FILE") or None,
            snapshot_every=int(env.get("PATRICIAN_SNAPSHOT_EVERY", "50")),
            gather_seconds=float(env.get("PATRICIAN_GATHER_SECONDS", "0.001")),
            webhook_allow=env.get("PATRICIAN_WEBHOOK_ALLOW", ""),
            public_url=env.get("PATRICIAN_PUBLIC_URL", "http://127.0.0.1:8000"),
            smtp_url=env.get("PATRICIAN_SMTP_URL", "smtp://127.0.0.1:25"),
            mail_from=env.get("PATRICIAN_MAIL_FROM", "Patrician <patrician@localhost>"),
            mail_grace_seconds=float(env.get("PATRICIAN_MAIL_GRACE_SECONDS", "120")),
            signing_key_file=env.get("PATRICIAN_SIGNING_KEY_FILE") or None,
            push_key_file=env.get("PATRICIAN_PUSH_KEY_FILE") or None,
            push_contact=env.get("PATRICIAN_PUSH_CONTACT", ""),
            analysis_iterations=whole_number(env, "PATRICIAN_ANALYSIS_ITERATIONS", 1500),
            rate_players=whole_number(env, "PATRICIAN_RATE_PLAYERS", 10_000),
            rate_games=whole_number(env, "PATRICIAN_RATE_GAMES", 10_000),
            rate_joins=whole_number(env, "PATRICIAN_RATE_JOINS", 20_000),
            rate_audits=whole_number(env, "PATRICIAN_RATE_AUDITS", 60),
            rate_notifications=whole_number(env, "PATRICIAN_RATE_NOTIFICATIONS", 30),
            rate_window_seconds=whole_number(env, "PATRICIAN_RATE_WINDOW_SECONDS", 60, least=1),
            max_in_flight=whole_number(env, "PATRICIAN_MAX_IN_FLIGHT", 256),
            trusted_proxies=env.get("PATRICIAN_TRUSTED_PROXIES", ""),
            cors_origins=env.get("PATRICIAN_CORS_ORIGINS", ""),
            access_log=env.get("PATRICIAN_ACCESS_LOG", "") == "1",
        )

    def workers(self) -> WorkerSettings:
        """What the workers take of these settings."""
        return WorkerSettings(
            prefix=self.prefix, shards=self.shards, archive_dir=self.archive_dir,
            webhook_allow=self.webhook_allow,
            public_url=self.public_url, smtp_url=self.smtp_url, mail_from=self.mail_from,
            mail_grace_seconds=self.mail_grace_seconds, signing_key_file=self.signing_key_file,
            push_key_file=self.push_key_file, push_contact=self.push_contact,
            analysis_iterations=self.analysis_iterations,
        )  # fmt: skip


def _contact_of(public_url: str) -> str:
    """Who runs the server by default: its https origin (push services take no port or path
    there), else a mailto: of localhost."""
    parts = urllib.parse.urlsplit(public_url)
    if parts.scheme == "https" and parts.hostname and not parts.port:
        return f"https://{parts.hostname}"
    return "mailto:patrician@localhost"
