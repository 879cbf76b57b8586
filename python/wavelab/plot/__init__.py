"""Plots: the figures of a run (``wavelab run``, ``wavelab plot``) and of a
sweep (the throughput-delay plot), and how figures are written.

* :mod:`~wavelab.plot.run_plots`: a run's figures; each function draws into
  the ``ax`` it is given or a figure of its own, and returns the figure;
* :mod:`~wavelab.plot.throughput_delay`: a sweep's throughput-delay plot;
* :mod:`~wavelab.plot.style`: the palette, each algorithm's colour and
  marker, and the ``wavelab`` and ``paper`` matplotlib styles;
* :mod:`~wavelab.plot.spec`: the figures' titles and labels, which the
  report's page follows too;
* :mod:`~wavelab.plot.figure_files`: formats, resolution, atomic writes.
"""
