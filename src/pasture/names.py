"""What each kind of name may be: one pattern per meaning, each matched whole (`fullmatch`).

- `WORD`: a word of an app's vocabulary — a component, a column, a declared
  command, a declared argument: lowercase letters, digits and _, starting with a
  letter, at most 40 characters (`jog`, `miles`, `log_run`).
- `LOWER_WORD`: the same characters at any length — a handler's name and its
  arguments, and the kind an `id()` names; the filter grammar tells a name that is
  only too long from one that is not a name at all by it.
- `COMMAND_NAME`: a code command's name, lowercase words separated by one space
  (`cart add`); its first word names the provider.
- `SLUG`: a space's name or an app's: lowercase letters, digits and -, starting
  with a letter, at most 40 characters — a part of an address (`ada/runs`).
- `USER_NAME`: a person's name: letters, digits, _ . and -, starting with a
  letter, at most 40 characters.
- `SECRET_NAME`: an app's secret, named as an environment variable is
  (`STRIPE_KEY`), at most 64 characters.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z][a-z0-9_]{0,39}")
LOWER_WORD = re.compile(r"[a-z][a-z0-9_]*")
COMMAND_NAME = re.compile(r"[a-z][a-z0-9_]*( [a-z][a-z0-9_]*)*")
SLUG = re.compile(r"[a-z][a-z0-9-]{0,39}")
USER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

__all__ = ["COMMAND_NAME", "LOWER_WORD", "SECRET_NAME", "SLUG", "USER_NAME", "WORD"]
