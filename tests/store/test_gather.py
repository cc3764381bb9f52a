"""`EventStore.gather`: independent operations carried out together, in one round trip per
round, each with exactly the result (or the error) it has when run alone."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.client import EventStore
from store.protocol import Call, Op
from tests.store.conftest import BACKENDS

on_every_backend = pytest.mark.parametrize("backend", BACKENDS, indirect=True)


def _steps(key: str, values: list[int]) -> Op[list[Any]]:
    """An operation of as many round trips as `values`: each adds one to a counter."""
    seen = []
    for value in values:
        seen.append((yield Call("incrby", (key, value))))
    return seen


class Refused(Exception):
    pass


def _refusing(key: str) -> Op[None]:
    """An operation that raises once it has read."""
    yield Call("get", (key,))
    raise Refused(key)


def _failing(key: str) -> Op[str]:
    """An operation whose second request is an error reply, which it handles."""
    yield Call("set", (key, "text"))
    try:
        yield Call("incrby", (key, 1))
    except Exception as error:  # the error reply thrown into the operation
        return type(error).__name__
    return "no error"


@on_every_backend
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lengths=st.lists(st.lists(st.integers(-5, 5), max_size=4), max_size=5))
def test_gathered_operations_each_get_what_they_get_alone(
    store: EventStore, prefix: str, lengths: list[list[int]]
) -> None:
    tag = str(abs(hash(str(lengths))))
    alone = [store.run(_steps(f"{prefix}:a{tag}:{n}", values)) for n, values in enumerate(lengths)]
    together = store.gather(
        *(_steps(f"{prefix}:b{tag}:{n}", values) for n, values in enumerate(lengths))
    )
    assert together == alone


@on_every_backend
def test_an_error_reply_goes_to_its_own_operation_and_an_error_raised_leaves(
    store: EventStore, prefix: str
) -> None:
    handled, counted = store.gather(_failing(f"{prefix}:x"), _steps(f"{prefix}:y", [2, 3]))
    assert handled == "ResponseError"
    assert counted == [2, 5]
    with pytest.raises(Refused):
        store.gather(_refusing(f"{prefix}:r"), _steps(f"{prefix}:z", [1]))


@on_every_backend
def test_nothing_to_gather_is_nothing(store: EventStore) -> None:
    assert store.gather() == []
