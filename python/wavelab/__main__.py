"""``python -m wavelab``: the ``wavelab`` command."""

import sys

from wavelab.cli.main import main

sys.exit(main())
