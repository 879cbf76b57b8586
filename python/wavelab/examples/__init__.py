"""Worked examples to copy: congestion controls written in Python
(docs/custom-cc.md). Importing one registers it."""
