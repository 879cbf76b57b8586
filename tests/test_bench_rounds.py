"""What `wavelab bench` reports for its comparisons inside wavelab: the
per-round ratio's median and range, not the fastest run of each side."""

from __future__ import annotations

from wavelab.bench.python_layer import CustomCcFigures, Rounds, custom_cc


def test_rounds_give_the_median_and_range() -> None:
    assert Rounds([3.0, 1.0, 2.0]).text() == "median 2.00 (range 1.00-3.00, 3 rounds)"
    assert Rounds([0.1, 0.3]).text(percent=True) == "median 20.00 % (range 10.00-30.00 %, 2 rounds)"


def test_custom_cc_pairs_each_round_not_the_fastest_of_each_side() -> None:
    # the fastest of each side would give 1.0 / 0.5 = 2.0; the rounds say 4 and 1.5
    f = CustomCcFigures(rust_s=[0.5, 2.0], python_s=[2.0, 3.0], calls=1_000_000, simulated_s=60)
    text = f.lines()
    assert "Python / Rust per round: median 2.75 (range 1.50-4.00, 2 rounds)" in text
    assert "extra us per ACK per round: median 1.25 (range 1.00-1.50, 2 rounds)" in text


def test_custom_cc_runs_both_sides_in_every_round() -> None:
    f = custom_cc(repeat=2)
    assert len(f.rust_s) == len(f.python_s) == 2
    assert f.calls > 0 and f.simulated_s == 60
