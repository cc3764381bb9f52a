"""Players that play fair: bots that see exactly what their seat may see, nothing more.

A bot is given its seat's view of the game and the events redacted for its seat (`seen.Seen`,
exactly what the API serves that seat) and returns one of its legal commands; it never
receives the game's `State`. Levels (`levels.make`): `random` (uniform over the legal
commands), `greedy` (one turn of look-ahead read by its outlook, `outlook`) and
`ismcts` (Information Set Monte Carlo Tree Search over determinizations of what the seat does
not know, `belief` and `ismcts`). Pure like the domain it stands on: no I/O, no clock but one
passed in, no randomness but the seeded generator passed in. docs/bots.md tells more.
"""
