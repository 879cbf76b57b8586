"""Running one scenario in the simulator: stepped (a progress bar, Ctrl-C
keeps what was simulated), with packet captures.

The package is named ``runner``, not ``run``: ``wavelab.run`` is the
function, and a submodule of that name would replace it as an attribute of
the package once imported.

* :mod:`~wavelab.runner.simulate`: :func:`run`;
* :mod:`~wavelab.runner.captures`: capture targets, files and their names.
"""

from wavelab.runner.captures import add_captures, capture_file_name, check_captures
from wavelab.runner.simulate import Progress, run

__all__ = ["Progress", "add_captures", "capture_file_name", "check_captures", "run"]
