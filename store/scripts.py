"""The Lua scripts of the store, shipped as package data and read once.

One source per script serves the sync and the asyncio clients alike. The store calls EVALSHA
with the SHA1 computed here and, on NOSCRIPT (the server forgot its scripts after a restart or
a failover), loads the script and sends again (`store.protocol.evaluate`). NOSCRIPT means the script
did not run, so that second send can never write twice.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.resources import files
from typing import Literal

ScriptName = Literal[
    "append", "snapshot", "load", "unlist", "timers", "inbox", "retire", "handed", "ratings"
]


@cache
def source(name: ScriptName) -> str:
    return files("store").joinpath(f"{name}.lua").read_text(encoding="utf-8")


@cache
def sha(name: ScriptName) -> str:
    return hashlib.sha1(source(name).encode()).hexdigest()
