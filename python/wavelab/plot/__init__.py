"""Plots: the figures of a run (``wavelab run``, ``wavelab plot``) and of a
sweep (the throughput-delay plot), and how figures are written."""
