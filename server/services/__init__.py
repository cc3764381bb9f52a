"""What the API does, behind its thin controllers: one service per feature (accounts, games,
their clocks, history, listings, notifications, vacations, talk, hand-overs, previews, stream
tickets), each over the store's operations, each answer redacted for its caller; `bundle`
builds them all over one store, the one object a request resolves.
"""
