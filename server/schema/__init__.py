"""The shapes of the HTTP API, contracts with independent clients: request bodies
(`requests`), answers (`answers`), the limits of what is accepted (`limits`) and the refusals
with the body of every error answer (`errors`). The OpenAPI document is built from them.
"""
