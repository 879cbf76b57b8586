"""The ``wavelab`` command line.

* :mod:`~wavelab.cli.main`: the entry point (the ``wavelab`` script,
  ``python -m wavelab``);
* :mod:`~wavelab.cli.parser`: its commands and options;
* :mod:`~wavelab.cli.run_commands`: ``run``, ``demo``, ``emulate``,
  ``compare``, ``validate``, ``scenarios``, ``algorithms``;
* :mod:`~wavelab.cli.study_commands`: ``sweep``, ``reproduce``, ``report``,
  ``plot``;
* :mod:`~wavelab.cli.tool_commands`: ``bench``, ``bpf``;
* :mod:`~wavelab.cli.pipe`: a standard output that a closed pipe cannot break.
"""

from wavelab.cli.main import main
from wavelab.cli.parser import build_parser

__all__ = ["build_parser", "main"]
