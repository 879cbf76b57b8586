"""Helpers every stage shares and nobody imports from outside the package:
safe file names and atomic writes, pyarrow's allocator."""
