"""The event store: the only place where events are written and read.

Every player action becomes events appended to the game's Redis stream by one Lua script
(expected version, command-id idempotency, hash chain, outbox, all or nothing); everything
else (state, boards, replays, inboxes, audits) is derived from these streams. See
docs/store.md for the key layout, the entry format and the chain.

The modules, each with one job: `protocol` (operations as generators of Redis requests),
`stepping` (an operation driven request by request, for the stores' loops),
`context` (what a store's operations share), `appending` (the append), `streams` (reading a
stream), `loading` (a game's state from a snapshot and the events after it), `client` (the
sync and asyncio stores that carry requests to a Redis client), `command_path` (what the
command path works with), `games`, `tables` and `reads` (the command path: commands, setting a
table, reads), `accounts` (players and listings),
`chain`, `keys`, `stored`, `errors`, `scripts`. Nothing here makes a client, and importing
this package imports none of them: the offline audit uses `chain` without Redis installed.
"""
