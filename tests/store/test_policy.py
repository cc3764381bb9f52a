"""The snapshot policy: when an append calls for a snapshot."""

from __future__ import annotations

import pytest

from store.loading import SnapshotPolicy
from store.stored import AppendResult


def test_the_policy_is_due_when_an_append_crosses_a_multiple() -> None:
    policy = SnapshotPolicy(50)
    assert policy.due(AppendResult(48, 51, ""))
    assert policy.due(AppendResult(50, 50, ""))
    assert not policy.due(AppendResult(51, 53, ""))
    assert not policy.due(AppendResult(1, 49, ""))
    with pytest.raises(ValueError, match="every"):
        SnapshotPolicy(0)
