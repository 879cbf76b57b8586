"""The ``wavelab`` command's entry point."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from wavelab._util.arrow_memory import use_system_allocator
from wavelab.cli import pipe
from wavelab.cli.parser import build_parser
from wavelab.cli.signals import INTERRUPTED, interrupted_code, terminate_as_interrupt
from wavelab.errors import WavelabError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wavelab`` command."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    original = sys.stdout
    quiet = pipe.install()
    use_system_allocator()
    try:
        if not argv:
            # `wavelab` alone: what it can do, not an error
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        try:
            with terminate_as_interrupt():
                code: int = args.func(args)
        except WavelabError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return interrupted_code()
        # a command a signal stopped returns 130 as for Ctrl-C
        return interrupted_code() if code == INTERRUPTED else code
    finally:
        sys.stdout.flush()
        if not quiet.closed_by_reader:
            sys.stdout = original
