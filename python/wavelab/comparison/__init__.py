"""Several runs side by side (``wavelab compare A B [C ...]``,
:func:`wavelab.compare`): simulated or emulated runs, or groups of a
sweep's runs (its seeds), their series overlaid one colour per run, their
RTT distributions, box plots over each group's runs, and a table of each
metric with its difference and ratio to the first run."""

from wavelab.comparison.entries import Entry, resolve
from wavelab.comparison.runs import Comparison, compare

__all__ = ["Comparison", "Entry", "compare", "resolve"]
