"""The workers: what follows each append, done outside the request that made it.

`dispatcher` reads every shard's outbox feed with a consumer group and turns each append's
notice into a job (`jobs.game_moved`), acknowledged only once the job is enqueued (RQ, JSON
serializer), dead-lettered after too many deliveries, trimmed once acknowledged; `jobs` holds
the small job functions, with primitive arguments, that RQ calls by name; `follow_up` what
follows an append, a gather and a list of steps (the notifications, the inboxes, the timers,
a bot's seat, as that seat, with the version it decided on, the first webhooks); `context`
what the jobs run with, and `settings` how it is built; `runner` the loops of `patrician
worker` and of the embedded server, which runs all of it in its own process.
"""
