"""The counters the worker processes (and the server's, for the appends it makes) add to:
kept by `prometheus_client` in the process, or, when `PROMETHEUS_MULTIPROC_DIR` names a
folder, in files there that the server's `/metrics` adds up across every process of the
machine (`server.transport.metrics`). The gauges read from Redis (the outbox's lag, the queue, the
deadlines, the dead letters) are not kept here: the server reads them when it is scraped.

Labels are small fixed sets (a channel, a status, a function's name), never a game, a
player or an address.
"""

from __future__ import annotations

from prometheus_client import Counter

DELIVERIES = Counter(
    "patrician_deliveries",
    "Delivery attempts of notifications, by channel (webhook, email) and outcome (the "
    "status of the player's delivery log: delivered, failed, refused, deferred, disabled, "
    "dropped)",
    ["channel", "status"],
)
APPENDS = Counter(
    "patrician_appends",
    "Appends to games' streams, by kind (create, join, leave, cancel, commands) and by who "
    "acted (player, bot, clock); requests answered again with their first result not counted",
    ["kind", "by"],
)
JOBS = Counter(
    "patrician_jobs",
    "Jobs run by the workers, by function and outcome (ok, failed: a failed job is tried "
    "again later or, out of retries, kept in the failed job registry)",
    ["function", "outcome"],
)
FOLLOWED = Counter(
    "patrician_followed_notices",
    "Outbox notices whose follow-up the followers ran, by outcome (ok: acknowledged; failed: "
    "left pending, to try again; dead: given up, moved to the dead letters)",
    ["outcome"],
)
