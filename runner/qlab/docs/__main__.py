"""``python -m qlab.docs config > docs/config.md`` | ``--write docs [--schemas schemas]`` | ``--check docs
[--schemas schemas]``.

Exit codes: 0 done (or no drift), 1 drift found by ``--check``, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qlab.contracts import resources
from qlab.docs import PAGES, drifted, generate, schemas_drifted, write_all, write_schemas


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m qlab.docs", description="Generate qlab's reference pages."
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("page", nargs="?", choices=sorted(PAGES), help="print one page to stdout")
    group.add_argument("--write", metavar="DIR", type=Path, help="write every page into DIR")
    group.add_argument("--check", metavar="DIR", type=Path, help="exit 1 when a page in DIR is out of date")
    parser.add_argument(
        "--schemas",
        metavar="DIR",
        type=Path,
        help="with --write or --check: also the generated parts of DIR's schemas",
    )
    args = parser.parse_args(argv)
    if args.schemas is not None and args.write is None and args.check is None:
        parser.error("--schemas goes with --write or --check")
    if args.write is not None:
        if args.schemas is not None:
            for path in write_schemas(args.schemas):
                print(f"wrote {path}")
            resources.shipped_schema.cache_clear()  # the pages read the schemas just written
            resources.load_schema.cache_clear()
        for path in write_all(args.write):
            print(f"wrote {path}")
        return 0
    if args.check is not None:
        stale_schemas = schemas_drifted(args.schemas) if args.schemas is not None else []
        for name in stale_schemas:
            print(
                f"{args.schemas / name}: out of date; run `python -m qlab.docs --write docs --schemas {args.schemas}`",
                file=sys.stderr,
            )
        stale = drifted(args.check)
        for name in stale:
            print(
                f"{args.check / name}: out of date; run `python -m qlab.docs --write {args.check}`",
                file=sys.stderr,
            )
        return 1 if stale or stale_schemas else 0
    sys.stdout.write(generate(args.page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
