"""The one writer of the studies' tables: CSV files and Markdown documents,
each written whole or not at all (:func:`wavelab._util.files.write_atomically`:
a reproduction killed while it writes leaves the previous file, never half
of one)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from wavelab._util.files import write_atomically


class Markdown:
    """A Markdown document built block by block; every block is followed by
    a blank line."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def lines(self, *lines: str) -> Markdown:
        """Lines as they are (a heading, a paragraph)."""
        self._lines += [*lines, ""]
        return self

    def table(self, frame: pd.DataFrame, index: bool = False, floatfmt: str = "") -> Markdown:
        """``frame`` as a table (its index as the first column if ``index``;
        numbers in ``floatfmt``, e.g. ``".3g"``, or as they are)."""
        text = (
            frame.to_markdown(index=index, floatfmt=floatfmt)
            if floatfmt
            else frame.to_markdown(index=index)
        )
        return self.lines(text)

    def text(self) -> str:
        """The document."""
        return "\n".join(self._lines)


class Tables:
    """Writes a study's tables into its output directory."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def csv(self, name: str, frame: pd.DataFrame, index: bool = False) -> Path:
        """``frame`` as CSV (with its index as the first column if ``index``)."""
        return write_atomically(self.out / name, frame.to_csv(index=index).encode("utf-8"))

    def markdown(self, name: str, doc: Markdown) -> Path:
        """A Markdown document."""
        return write_atomically(self.out / name, doc.text().encode("utf-8"))

    def text(self, name: str, text: str) -> Path:
        """A text file as it is (a scenario to run again)."""
        return write_atomically(self.out / name, text.encode("utf-8"))
