"""Screenshot of a `wavelab report` page in headless Chromium (for docs/).

    python scripts/report_screenshot.py RESULTS_DIR OUT.png [--select TEXT | --point N]

Writes RESULTS_DIR/report.html, opens it, optionally clicks the first table
row containing TEXT or the row of point N (to show that run's series),
checks that the page has no console errors, and saves a full-page PNG.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser import Browser, find_chromium


def main() -> int:
    p = argparse.ArgumentParser(allow_abbrev=False)
    p.add_argument("results")
    p.add_argument("out")
    p.add_argument("--select", help="click the first table row containing this text")
    p.add_argument("--point", type=int, help="click the table row of this point")
    p.add_argument("--width", type=int, default=1400)
    args = p.parse_args()
    subprocess.run([sys.executable, "-m", "wavelab.cli", "report", args.results], check=True)
    html = Path(args.results) / "report.html"
    binary = find_chromium()
    if binary is None:
        print("no chromium", file=sys.stderr)
        return 1
    with Browser(binary, width=args.width, height=1000) as b:
        b.open(html.resolve().as_uri())
        b.wait_for("window.wavelabReport && window.wavelabReport.plots() >= 4")
        if args.select or args.point is not None:
            first = b.evaluate("document.body.getAttribute('data-plotted-run')")
            match = (
                f"r.textContent.includes({args.select!r})"
                if args.select
                else f"r.cells[0].textContent === '{args.point}'"
            )
            b.evaluate(
                f"Array.from(document.querySelectorAll('tbody tr.clickable')).find(r => {match})"
                ".click()"
            )
            b.wait_for(f"document.body.getAttribute('data-plotted-run') !== '{first}'")
        problems = b.problems()
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        b.screenshot(Path(args.out))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
