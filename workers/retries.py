"""How often and how late a failed job is tried again (RQ's `Retry`, backing off)."""

from __future__ import annotations

from rq import Retry

MOVED_RETRY = Retry(max=5, interval=[1, 2, 5, 15, 30])
"""`game_moved` fails only when the store is out of reach: soon again."""
DELIVERY_RETRY = Retry(max=6, interval=[10, 30, 120, 600, 1800, 3600])
"""A webhook that does not answer: again after 10 s, 30 s, 2 min, 10 min, 30 min and 1 h
(exponential, about; RQ's `Retry` takes the list), then the notification is given up."""
LATER_RETRY = Retry(max=DELIVERY_RETRY.max - 1, interval=DELIVERY_RETRY.intervals[1:])
"""The retries of a delivery job that follows a first attempt made at once
(`workers.webhooks.send_first`), enqueued to run after the first interval: the same times."""
