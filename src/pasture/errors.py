"""Every error pasture raises on purpose has one root, `PastureError`.

    PastureError           every one carries a sentence for the caller, shown as it is
     ├── Refused           the caller's request cannot be served as asked (HTTP 400)
     │    ├── DeployRefused  every problem with an app in one message (.problems)
     │    │    └── BadCommand   a code command that cannot be registered
     │    │                     (`pasture.commands.registry`)
     │    ├── UsageError     arguments a person or code got wrong (exit code 2)
     │    │    ├── BadPath           a path from outside that names no file of an app
     │    │    │                     (`pasture.platform.apps.paths`)
     │    │    └── DocumentRefused   a client's OAuth metadata document that cannot be used
     │    ├── Unauthorized   no one signed in, or a secret that signs nobody in (HTTP 401)
     │    │    └── BadToken   the request's own credentials are wrong: an Authorization
     │    │                   header that is not `Bearer <token>`, or a token of no one's
     │    │                   (answered as JSON even where a page was asked for)
     │    ├── NoTable        `ctx.db.<name>` of a table the app lacks; an AttributeError
     │    │                  too (`pasture.commands.app_db`)
     │    ├── Forbidden      the caller may not do this (HTTP 403)
     │    ├── NotFound       no such app, page, command or entity (HTTP 404)
     │    ├── Conflict       a compare-and-set guard saw a value move (HTTP 409)
     │    ├── TooLarge       a body over the most one call takes (HTTP 413)
     │    ├── NotJson        a body not declared as JSON where only JSON is taken (HTTP 415)
     │    ├── Cancelled      a call its caller stopped while it ran: Ctrl-C, an agent's
     │    │                  cancel, a request gone (exit code 130; `pasture.long_calls`)
     │    ├── InputRequired  a command asked its client what is not answered yet: the door
     │    │                  asks, and runs the call again with the answers
     │    │                  (`pasture.client_asks`)
     │    ├── CannotAsk      the caller's client said it cannot be asked what the command
     │    │                  asks: a form, its model, its roots (`pasture.client_asks`)
     │    └── TooMany        too many calls or tries in too short a time (HTTP 429);
     │                       .retry_after is the seconds to wait (`pasture.platform.access.limits`)
     └── Fault             nothing the caller did wrong: something on the server's side
          │                failed, and the sentence says what (HTTP 500 unless a kind says)
          ├── CommandFailed  an app's own code failed: it crashed, answered with what is
          │                  not JSON, or went past its limits (HTTP 424;
          │                  `pasture.commands.registry`)
          └── Unavailable    the machine cannot do it now: a full disk, a read-only data
                             directory, data held by another process, a database gone
                             (HTTP 503); the sentence names the cause (`pasture.faults`)

A door turns a `PastureError` into its own form once, in its own module: an
`isError` tool result over MCP, a status code and `{"error": sentence}` over
HTTP (a 429 with `Retry-After`), the sentence and a non-zero exit on the command
line. A `Fault` is answered so too: its sentence names what failed and carries
nothing of the server's insides. Anything that is not a `PastureError` is a bug,
and a door reports it with a sentence of its own and without a traceback.

A sentence often quotes what the caller sent (`no command …`); a lone UTF-16
surrogate in it (half a character, which no door can encode) is written as its
escape, `\\ud800`, so every door can send the sentence as it is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class PastureError(Exception):
    """The root of every error pasture raises on purpose; the message is the caller's
    sentence, which every door shows as it is."""

    status = 500
    exit_code = 1

    def __init__(self, sentence: str) -> None:
        if not sentence.isascii():
            sentence = sentence.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(sentence)
        self.sentence = sentence

    def __str__(self) -> str:
        return self.sentence


class Refused(PastureError):
    """A request that cannot be served as it was asked: the caller's to change."""

    status = 400


class Fault(PastureError):
    """Something on the server's side failed, not the caller's request; the sentence says
    what, with nothing of the server's insides (those go to its log)."""

    status = 500


def echo(text: str, room: int = 80) -> str:
    """Text a caller sent, fit to quote inside a one-line sentence: escaped, shortened."""
    shown = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )
    return shown if len(shown) <= room else shown[: room - 1] + "…"


class DeployRefused(Refused):
    """Every problem found in an app, reported together in one message.

    `prefix` names the file the problems are in (`tools.json: …`); the problems
    are joined with `; ` so an agent can fix them all in one go.
    """

    def __init__(self, problems: Iterable[str], prefix: str = "") -> None:
        self.problems = list(problems)
        self.prefix = prefix
        text = "; ".join(self.problems)
        super().__init__(f"{prefix}: {text}" if prefix else text)


class UsageError(Refused):
    """Arguments that do not fit what the command declares."""

    exit_code = 2


class Unauthorized(Refused):
    """Nobody is signed in where someone must be, or a token or password signs nobody in."""

    status = 401


class Forbidden(Refused):
    """The caller may not do this here."""

    status = 403


class NotFound(Refused):
    """Nothing of that name is here."""

    status = 404


class Conflict(Refused):
    """A `$was` guard found the value had moved since it was read."""

    status = 409


class TooMany(Refused):
    """Too many calls, or tries to sign in, in too short a time; `retry_after` is how many
    seconds (a whole number, at least 1) until one more is taken."""

    status = 429

    def __init__(self, sentence: str, retry_after: float) -> None:
        super().__init__(sentence)
        self.retry_after = max(1, math.ceil(retry_after))


class Unavailable(Fault):
    """The server's storage cannot do this now; the sentence names the cause, and nothing
    was written."""

    status = 503


class BadToken(Unauthorized):
    """The request's own credentials are wrong: an Authorization header that is not
    `Bearer <token>`, or a token that signs nobody in.

    The web door answers it as JSON even where a page was asked for: the caller is a program.
    """


class DocumentRefused(UsageError):
    """A client's metadata document that cannot be used; the sentence says why."""


class TooLarge(Refused):
    """A body over the most one call takes: HTTP's 413."""

    status = 413


class NotJson(Refused):
    """A body that is not declared as JSON, where only JSON is taken: HTTP's 415."""

    status = 415


class Cancelled(Refused):
    """A call its caller asked to stop while it ran (`pasture.long_calls`); the sentence says
    what became of what it wrote. At a terminal, the exit code of Ctrl-C."""

    exit_code = 130
