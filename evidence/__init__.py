"""What a finished game is as evidence, for whoever has to settle a dispute: the game record
(`record`, and a stored append as the record tells it, `appends`), the server's signatures on
receipts and records and the keys it signs with (`signatures`, `signing_keys`), the notation
people read (`notation`, `notation_parse`), every append decided again from nothing
(`redecide`) and the offline audit that trusts nothing in a record (`audit`, with the checks of
what the server signed in `signature_checks`, and of JSON every reader reads alike in
`json_alike`, which the API's reading of a request shares); `rules_check` decides the stored
games again before new code is deployed. The audit and the record need no server, no Redis
and no worker: an import-linter contract keeps them so.
"""
