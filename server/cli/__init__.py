"""The `patrician` command (`main` gathers the subcommands): running the server and the
workers (`running`), looking after a store (`upkeep`), records, keys and formats (`records`),
simulations (`simulate`, over the games of `simulation`), and what they share (`options`).
"""
