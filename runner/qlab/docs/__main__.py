"""``python -m qlab.docs config > docs/config.md`` | ``--write docs`` | ``--check docs``.

Exit codes: 0 done (or no drift), 1 drift found by ``--check``, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qlab.docs import PAGES, drifted, generate, write_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m qlab.docs", description="Generate qlab's reference pages."
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("page", nargs="?", choices=sorted(PAGES), help="print one page to stdout")
    group.add_argument("--write", metavar="DIR", type=Path, help="write every page into DIR")
    group.add_argument("--check", metavar="DIR", type=Path, help="exit 1 when a page in DIR is out of date")
    args = parser.parse_args(argv)
    if args.write is not None:
        for path in write_all(args.write):
            print(f"wrote {path}")
        return 0
    if args.check is not None:
        stale = drifted(args.check)
        for name in stale:
            print(
                f"{args.check / name}: out of date; run `python -m qlab.docs --write {args.check}`",
                file=sys.stderr,
            )
        return 1 if stale else 0
    sys.stdout.write(generate(args.page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
