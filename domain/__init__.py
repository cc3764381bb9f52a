"""The game of Patrician: pure functions over frozen msgspec Structs.

`decide.decide(state, seat, command) -> (events, state)` judges a command; `evolve.evolve`
applies a fact and `evolve.fold` rebuilds a game; `legal.legal_commands`, `view.view` and
`scoring.final_scores` read a state; `setup` creates, joins, leaves and cancels games. This
package imports only the standard library and msgspec: no clock, no randomness, no I/O, so
that everything above it can be replayed and verified anywhere. Import each name from the
module that holds it (this package re-exports nothing).
"""
