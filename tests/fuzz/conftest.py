"""Shared settings of the fuzz suite: a fixed, derandomized example budget, so a run is repeatable and
its time is bounded (the whole suite is budgeted at about 40 s on the 2-core CI machine)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,  # nothing written into the repository; derandomize makes failures reproducible anyway
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,
)

# Text that includes what broke things before: lone surrogates, NUL, Unicode digits, huge numbers.
NASTY_TEXT = st.one_of(
    st.text(),
    st.sampled_from(["\ud800", "\udfff", "a\ud800b", "\x00", "¹²", "٣", "9" * 5000, "NaN", "Infinity", "-1"]),
)


def json_values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Arbitrary JSON-like values (NaN and infinities included: Python's json writes them)."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), NASTY_TEXT
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(NASTY_TEXT, children, max_size=4)),
        max_leaves=max_leaves,
    )
