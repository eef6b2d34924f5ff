"""`python -m pasture` is the `pasture` command."""

from pasture.cli import main

raise SystemExit(main())
