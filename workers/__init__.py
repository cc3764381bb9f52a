"""The workers: what follows each append, done outside the request that made it.

`follower` reads every shard's outbox feed with a consumer group and runs each append's
follow-up itself, acknowledging its notice only once that succeeded (tried again, and
dead-lettered after too many deliveries, trimmed once acknowledged); `jobs` holds the small
job functions, with primitive arguments, that RQ calls by name (JSON serializer) for what
waits or is retried later; `follow_up` what
follows an append, a gather and a list of steps (the notifications, the inboxes, the timers,
a bot's seat, as that seat, with the version it decided on, the first webhooks); `context`
what the jobs run with, and `settings` how it is built; `runner` the loops of `patrician
worker` and of the embedded server, which runs all of it in its own process.
"""
