"""One validation per run-request value: metaeval.core.options.Option, the PerSEval parameters, report settings."""
from __future__ import annotations

import math
import re

import pytest

from metaeval.core.options import Option, OptionError, check_all
from metaeval.core.perseval.measure import PARAMETERS, Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.core.perseval.report import REPORT_OPTIONS, check_settings

BETA = Option("beta", 1.0, "EDP beta", low=-10, high=10)


@pytest.mark.parametrize(("given", "expected"), [("1.7", 1.7), (2, 2.0), (-10, -10.0), (10.0, 10.0)])
def test_numbers_are_parsed_and_made_floats(given: object, expected: float) -> None:
    value = BETA.check(given)
    assert value == expected and type(value) is float


@pytest.mark.parametrize("bad", ["steep", "", math.nan, math.inf, 10.000001, -11, True, None, [1.0]])
def test_bad_numbers_name_the_option_and_the_range(bad: object) -> None:
    with pytest.raises(OptionError) as caught:
        BETA.check(bad)
    assert caught.value.name == "beta"
    assert str(caught.value) == f"beta must be a finite number from -10 to 10; got {bad!r}"


def test_integers_words_booleans_and_lists() -> None:
    count = Option("n", 5, "count", kind=int, low=1)
    assert count.check("7") == 7 and count.check(7.0) == 7
    for bad in ("7.5", 7.5, 0, "x"):
        with pytest.raises(OptionError, match="n must be an integer >= 1"):
            count.check(bad)
    word = Option("w", "a", "word", kind=str, choices=("a", "b"))
    assert word.check("b") == "b"
    with pytest.raises(OptionError, match="w must be one of a, b; got 'c'"):
        word.check("c")
    flag = Option("f", False, "flag", kind=bool)
    assert flag.check(True) is True and flag.check("false") is False
    with pytest.raises(OptionError):
        flag.check(1)
    levels = Option("levels", (80, 60), "levels", kind=int, low=1, high=100, many=True)
    assert levels.check("80, 40") == (80, 40) and levels.check([20]) == (20,)
    for bad in ("", [], "80,0", {"a": 1}):
        with pytest.raises(OptionError):
            levels.check(bad)
    assert levels.describe() == "levels (comma-separated, each an integer from 1 to 100; default 80,60)"
    assert BETA.describe(default=1.7) == "EDP beta (a finite number from -10 to 10; default 1.7)"
    edges = Option("edges", (0.0, 0.05), "edges", low=0, many=True, increasing=True)
    assert edges.check("0, 0.02,0.1") == (0.0, 0.02, 0.1) and edges.check([0.3]) == (0.3,)
    for bad in ("0.1,0.05", "0,0", [0.2, 0.1, 0.3]):
        with pytest.raises(OptionError, match=re.escape(f"edges must increase strictly; got {bad!r}")):
            edges.check(bad)
    assert edges.describe() == "edges (comma-separated, increasing, each a finite number >= 0; default 0,0.05)"


def test_params_validate_every_field_with_the_table() -> None:
    assert Params().as_dict() == {option.name: option.default for option in PARAMETERS}
    assert Params(beta=2).beta == 2.0 and type(Params(beta=2).beta) is float
    for name, bad in [("beta", 10.5), ("alpha", math.nan), ("gamma", "x"), ("pacc_beta", math.inf),
                      ("simplified", "maybe")]:
        with pytest.raises(OptionError) as caught:
            Params(**{name: bad})
        assert caught.value.name == name


def test_run_options_round_trip_and_reject_bad_parameters() -> None:
    options = RunOptions(measures=["jsd"], params=Params(beta=1.7, simplified=True), aux=["rouge_l"],
                         systems=["A"], workers=3, skip_unavailable=True,
                         measure_options={"infolm": {"temperature": 0.5}})
    assert RunOptions.from_dict(options.as_dict()) == options
    with pytest.raises(ValueError, match="beta must be a finite number from -10 to 10"):
        RunOptions.from_dict({"beta": 40})


def test_report_settings_checked_and_converted() -> None:
    assert check_settings({"n_boot": "50", "betas": "1,1.5", "resample": "systems"}) == {
        "n_boot": 50, "betas": (1.0, 1.5), "resample": "systems"
    }
    with pytest.raises(OptionError, match="unknown report setting 'nboot'; choose from n_boot, resample"):
        check_settings({"nboot": 1})
    with pytest.raises(OptionError, match="stability_levels must be"):
        check_settings({"stability_levels": [0]})
    with pytest.raises(OptionError, match="missing_system must be one of discard-sample, drop-system"):
        check_settings({"missing_system": "ignore"})
    assert check_all(REPORT_OPTIONS, {}, what="report setting") == {}


def test_an_integer_option_never_exceeds_a_bigint() -> None:
    """Whatever its own bounds, an integer option refuses what no database integer column holds (2**70 reached
    PostgreSQL as "bigint out of range", SQLite as OverflowError)."""
    from metaeval.core.options import BIGINT_MAX

    free = Option("k", 1, "any integer", kind=int)
    assert free.check(BIGINT_MAX) == BIGINT_MAX and free.check(-BIGINT_MAX - 1) == -BIGINT_MAX - 1
    for bad in (2**70, str(2**63), -(2**63) - 1):
        with pytest.raises(OptionError, match=r"k must be an integer of at most 19 digits \(from -9223372036854775808 "
                                              r"to 9223372036854775807\)"):
            free.check(bad)
    with pytest.raises(OptionError, match="n must be an integer >= 1 of at most 19 digits"):
        Option("n", 5, "count", kind=int, low=1).check(2**70)
