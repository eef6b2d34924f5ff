"""The `pasture` command line (filled in by the platform's front door)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: pasture COMMAND …")
        return 0
    print(f"pasture: no command {args[0]}", file=sys.stderr)
    return 2
