"""Read models folded from the events, for people: what a notification says and to whom
(`notices`, and as an e-mail, `mail`), a player's inbox entry of a game (`inbox`), a game's
replay step by step (`replay`) and a timed game's clocks from the times of its appends
(`timekeeping`). Each is redacted through the domain's one gate (`domain.view.visible`) for
the seat it is for. What a finished game is as evidence lives beside this, in `evidence`.
"""
