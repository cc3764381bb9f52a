"""The one format the command path writes times in (`store.clock.iso`): UTC to the
millisecond, truncated, whatever the zone of the moment given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from store.clock import iso

ZONES = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60, 23 * 60)
)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=ZONES))
def test_a_moment_is_written_in_utc_to_the_millisecond_in_one_fixed_shape(moment: datetime) -> None:
    utc = moment.astimezone(UTC)
    written = iso(moment)
    assert written == f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z".rjust(24, "0")
    assert len(written) == 24 and datetime.fromisoformat(written) == utc.replace(
        microsecond=utc.microsecond // 1000 * 1000
    )
