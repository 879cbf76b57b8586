"""``python -m wavelab.bench -``: runs one engine case given on standard
input and prints its figures (:func:`wavelab.bench.engine.child_main`)."""

from wavelab.bench.engine import child_main

child_main()
