"""The shared argument checks: what they accept, return and say."""

import numpy as np
import pandas as pd
import pytest

from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_integer,
    check_level,
    check_n_resamples,
    check_name,
    check_no_missing,
    check_number,
    check_numbers,
    check_option,
)


def test_check_number_ranges_and_types():
    assert check_number(3, "x") == 3.0 and isinstance(check_number(3, "x"), float)
    assert check_number(0, "x", low=0) == 0.0
    with pytest.raises(
        ValueError, match=r"`x` must be in \(0, 1\), e\.g\. 0\.5; got 0\.0"
    ):
        check_number(
            0, "x", low=0, high=1, low_open=True, high_open=True, hint=", e.g. 0.5"
        )
    with pytest.raises(ValueError, match=r"`x` must be in \[1, inf\); got 0\.5"):
        check_number(0.5, "x", low=1)
    with pytest.raises(ValueError, match=r"`x` must be in \(-inf, 2\]; got 3\.0"):
        check_number(3, "x", high=2)
    for bad in (True, "1", None, np.inf, np.nan, [1]):
        with pytest.raises(ValueError, match=r"`x` must be a finite number"):
            check_number(bad, "x")


def test_check_integer():
    assert check_integer(3.0, "n") == 3 and isinstance(check_integer(3.0, "n"), int)
    for bad in (2.5, True, "3", np.inf, 0):
        with pytest.raises(ValueError, match=r"`n` must be an integer >= 1; got"):
            check_integer(bad, "n")
    with pytest.raises(ValueError, match=r">= 2 \(fix\); got 1"):
        check_integer(1, "n", low=2, hint=" (fix)")


def test_check_numbers_arrays():
    out = check_numbers([1, 2.5], "k", low=1)
    assert out.dtype == float and out.tolist() == [1.0, 2.5]
    with pytest.raises(
        ValueError, match=r"`k` must be a number or an array of numbers"
    ):
        check_numbers("0.5", "k", low=0)
    with pytest.raises(ValueError, match=r"`k` must be in \(0, 1\]; got "):
        check_numbers([0.5, 0], "k", low=0, low_open=True, high=1)


def test_level_and_resamples():
    assert check_level(0.9) == 0.9
    for bad in (0, 1, True, "0.95", np.nan):
        with pytest.raises(
            ValueError, match=r"`confidence_level` must be a number in \(0, 1\)"
        ):
            check_level(bad)
    assert check_n_resamples(np.int64(5)) == 5
    for bad in (0, 2.0, True):
        with pytest.raises(
            ValueError, match=r"`n_resamples` must be a positive integer"
        ):
            check_n_resamples(bad)


def test_check_option():
    assert check_option("less", "alternative", ("two-sided", "less")) == "less"
    with pytest.raises(
        ValueError, match=r"`alternative` must be one of \('a', 'b'\), not 'c'\."
    ):
        check_option("c", "alternative", ["a", "b"])
    with pytest.raises(ValueError, match=r"`w` must be 'a' \(first\), not 'z'\."):
        check_option("z", "w", ("a",), describe="'a' (first)")


def test_frames_and_columns():
    df = pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, np.inf]}).set_index(
        pd.Index([0, 1], name="lvl")
    )
    check_frame(df)
    with pytest.raises(
        TypeError, match=r"`data` must be a pandas DataFrame, not list; use"
    ):
        check_frame([1], "use X")
    with pytest.raises(
        TypeError, match=r"`value` must be a column name \(str\), not int"
    ):
        check_name(1, "value")
    assert as_columns("a", "by") == ["a"] and as_columns(None, "by") == []
    with pytest.raises(ValueError, match=r"`cluster` is required"):
        as_columns(None, "cluster", allow_none=False)
    check_columns(df, ["a"], "value")
    with pytest.raises(ValueError, match=r"'lvl' is an index level, not a column"):
        check_columns(df, ["lvl"], "by")
    with pytest.raises(ValueError, match=r"column 'z' is not in the DataFrame"):
        check_columns(df, ["z"], "by")
    with pytest.raises(
        ValueError, match=r"`value` column 'a' has 1 missing values; fix it\."
    ):
        check_no_missing(df, "a", "value", "fix it")
    with pytest.raises(ValueError, match=r"1 infinite values \(first: inf\)"):
        check_finite(df, ["a", "b"], "value")
