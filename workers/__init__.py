"""The workers: what follows each append, done outside the request that made it.

`dispatcher` reads every shard's outbox feed with a consumer group and turns each append's
notice into a job (`jobs.game_moved`), acknowledged only once the job is enqueued (RQ, JSON
serializer), dead-lettered after too many deliveries, trimmed once acknowledged; `jobs` holds
the small job functions, with primitive arguments, that act through the command path like a
person would (a bot's seat, as that seat, with the version it decided on); `context` the store
and settings they run with; `runner` the loops of `patrician worker` and of the embedded
server, which runs all of it in its own process.
"""
