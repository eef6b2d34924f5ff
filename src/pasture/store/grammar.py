"""The filter grammar: a filter line in, a `Filter` (see `syntax.py`) out, and back again.

A filter line is predicates joined by `&`, all of which must hold::

    .jog!&.doc?&.jog.miles>=5&.created.at>=2026-09-01&limit=20

Reading a line happens in two steps. First it is split on `&` — outside double
quotes, so `"a & b"` stays one value. Then each segment is read on its own by a
small hand-written reader, and every *value* in it (never a name or an operator)
is percent-decoded with `urllib.parse.unquote`: `%26` is a literal `&`, `%2C` a
literal comma, and `+` stays a plus. Decoding after the structure is read is what
lets a template splice any text in as a value (`percent_encode_value`).

The forms (DESIGN.md §4):

    .comp!  .comp=  .comp?  *                      has / lacks / bring if present / every
    .comp.col OP value     OP: = != ~= < <= > >=   a,b any-of (= and != only)
    .comp.col=20..35  .comp.col=20...35            a range with / without its high end
    .comp.col=  .comp.col~=                        empty or absent / has a value
    .a.ref.b.col~=x                                walking a reference
    .a.ref.b?  .a.ref.b!                           bring what it points at (and require it)
    .count!  .tally=comp.col  .distinct=comp.col   aggregates: the first one answers
    .comments>=2                                   reverse plural
    limit=N  .limit=N  id=<eid>                    newest N (either spelling), one entity
    sort=jog.miles  sort=-jog.miles,jog.who        in a column's order (- descending)
    after=<cursor>                                 the page after the one that gave it
    words  "a phrase"                              full text

Anything that cannot be read is refused with one sentence saying how to write it;
no other exception leaves `parse` for any input text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

from pasture.errors import Refused
from pasture.names import LOWER_WORD, WORD
from pasture.store.syntax import (
    After,
    Compare,
    Count,
    Distinct,
    Empty,
    Every,
    Filter,
    Has,
    Id,
    Lacks,
    Limit,
    Maybe,
    Path,
    Plural,
    Predicate,
    Present,
    Range,
    Reach,
    Sort,
    Tally,
    Words,
)

# Longest first, so `>=` is read before `>` and `~=` before `=`.
OPERATORS = ("~=", "!=", "<=", ">=", "=", "<", ">")
# The operators a reverse plural (`.comments>=2`) compares its count with.
COUNT_OPERATORS = ("!=", "<=", ">=", "=", "<", ">")

_WHOLE = re.compile(r"[0-9]{1,18}")  # bounded, so int() never meets a giant
_OP_CHARS = frozenset("=<>!~")
# Characters that end a name: the grammar's own punctuation and whitespace.
_NAME_STOP = frozenset('.!=?~<>&,"*')
# A bare segment that reads as a column filter written without its leading dot.
_DOTLESS = re.compile(r"([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*)\s*(~=|!=|<=|>=|=|<|>)")
_EID_EXAMPLE = "4f3c2a1b0c9d8e7f"

# Typed in place of an operator, and what was most likely meant.
_MISTYPED = {
    "=>": (">=", "at least"),
    "=<": ("<=", "at most"),
    "==": ("=", "equal to"),
    "=!": ("!=", "not equal to"),
    "<>": ("!=", "not equal to"),
    "!": ("!=", "not equal to"),
    "!==": ("!=", "not equal to"),
    "=~": ("~=", "contains"),
    "~": ("~=", "contains"),
}

# What one filter line may hold: more is refused with a sentence, never sent to a database.
MAX_PREDICATES = 100  # predicates joined by &
MAX_VALUES = 1000  # values of one any-of list (a,b,…)
MAX_FILTER = 64_000  # characters of a filter: a thousand eids in one list, and room beside

LIMIT_SENTENCE = "limit is a whole number of rows, like limit=20"
DOT_LIMIT_SENTENCE = ".limit is a whole number of rows, like .limit=20"
TALLY_SENTENCE = "tally counts rows by one column, like .tally=jog.who"
DISTINCT_SENTENCE = "distinct lists the values of one column, like .distinct=jog.who"
ID_SENTENCE = f"id= names one entity by its eid, like id={_EID_EXAMPLE}"
SORT_SENTENCE = (
    "sort= orders rows by columns, like sort=jog.miles, or sort=-jog.miles for the largest "
    "first; several are comma-separated, like sort=-jog.miles,jog.who"
)
AFTER_SENTENCE = "after= continues from the cursor an answer gave, like after=<its cursor>"
# Words other grammars order and page with (the reference platform's `.order=similar`
# among them): each is refused saying this grammar's own spelling, sort= and after=.
ORDER_WORDS = frozenset({"order", "orderby", "order_by", "sort", "sortby", "sort_by"})
PAGE_WORDS = frozenset({"offset", "skip", "page"})
MAX_SORT = 5  # columns one sort= orders by
MAX_CURSOR = 2000  # characters of a cursor: a few values and a position
_CURSOR = re.compile(r"[A-Za-z0-9_-]+")


def parse(text: str) -> Filter:
    """Read a filter line; `Refused` (one sentence saying how to write it) if it cannot be read."""
    if len(text) > MAX_FILTER:  # before any of it is read: reading costs in its length
        raise Refused(
            f"a filter is at most {MAX_FILTER:,} characters, and this one is {len(text):,} — "
            "ask for less at once, and the rest in another query"
        )
    return _parse(text)


# Filters are immutable, so a line read once is answered from a small cache after.
@lru_cache(maxsize=1024)
def _parse(text: str) -> Filter:
    if text.startswith("?"):  # pasted from a URL's query string
        text = text[1:]
    predicates: list[Predicate] = []
    for segment in _segments(text):
        segment = segment.strip()
        if segment:
            predicate = _Segment(segment).read()
            if predicate is not None:
                predicates.append(predicate)
                if len(predicates) > MAX_PREDICATES:
                    raise Refused(
                        f"a filter joins at most {MAX_PREDICATES} predicates with & — "
                        "ask for the rest in another query"
                    )
    return Filter(tuple(predicates))


def _segments(text: str) -> list[str]:
    """Split on `&` outside double quotes; inside them a backslash escapes the next character."""
    segments: list[str] = []
    start = 0
    opened = -1  # where the quote we are inside opened, or -1
    i = 0
    while i < len(text):
        ch = text[i]
        if opened >= 0:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                opened = -1
        elif ch == '"':
            opened = i
        elif ch == "&":
            segments.append(text[start:i])
            start = i + 1
        i += 1
    if opened >= 0:
        shown = _echo(text[start:].strip())
        raise Refused(f'the quote in {shown} is never closed: end the value with "')
    segments.append(text[start:])
    return segments


class _Segment:
    """Reads the predicates of one `&`-free segment, refusing what does not fit."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read(self) -> Predicate | None:
        text = self.text
        if text[0] not in ".*":
            return self._bare()
        predicate, end = self._predicate(0)
        if text[end:].strip():
            self._refuse_run_on(end)
        return predicate

    # -- the forms ---------------------------------------------------------

    def _predicate(self, start: int) -> tuple[Predicate, int]:
        """One predicate starting at `.` or `*`; returns it and where it ended."""
        if self.text[start] == "*":
            return Every(), start + 1
        names, pos = self._path(start + 1)
        pos = self._skip_space(pos)
        if len(names) == 1:
            return self._single(names[0], pos)
        return self._column(names, pos)

    def _single(self, name: str, pos: int) -> tuple[Predicate, int]:
        """`.comp!`, `.comp=`, `.comp?`, `.count!`, `.tally=comp.col`, `.distinct=comp.col`,
        `.comments>=2`."""
        text = self.text
        shown = "." + name
        if name == "limit":  # `.limit=20` is `limit=20`
            if not text.startswith("=", pos) or text.startswith("==", pos):
                raise Refused(DOT_LIMIT_SENTENCE)
            return _limit(text[pos + 1 :], DOT_LIMIT_SENTENCE), len(text)
        if text.startswith("!", pos) and not text.startswith("!=", pos):
            return (Count() if name == "count" else Has(name)), pos + 1
        if text.startswith("?", pos):
            return Maybe(name), pos + 1
        op, pos = self._operator(shown, pos)
        rest = text[pos:]
        if name == "tally" and op == "=":
            return Tally(self._aggregate_path(rest, TALLY_SENTENCE)), len(text)
        if name == "distinct" and op == "=":
            return Distinct(self._aggregate_path(rest, DISTINCT_SENTENCE)), len(text)
        if op == "=" and (not rest.strip() or rest.startswith(".")):
            # `.comp=` — a following `.` starts the next predicate (refused as run-on).
            return Lacks(name), (pos if rest.strip() else len(text))
        if op == "~=":
            raise Refused(
                f"~= needs a column: write {shown}.<column>~= for any value, "
                f"or {shown}! to have {name}"
            )
        values = self._values(shown, op, pos)
        number = _whole(_decoded(*values[0])) if len(values) == 1 else None
        if number is None and len(values) == 1 and _decoded(*values[0]).isdecimal():
            raise Refused(
                f"{shown}{op}{_echo(values[0][0])} counts entities: a whole number of at most "
                "18 digits, like .comments>=2"
            )
        if number is None and name in ORDER_WORDS:
            written = _echo(rest.strip())
            raise Refused(
                f"{_not_an_order(f'{shown}{op}{written}')} (a component named {name} is "
                f"filtered by a column, like {shown}.<column>{op}{written})"
            )
        if number is None:
            written = _echo(rest.strip()) or "2"
            raise Refused(
                f"{shown}{op}{written} needs a column: write {shown}.<column>{op}{written} "
                f"(a single name only counts, like .comments>=2)"
            )
        return Plural(name, op, number), len(text)

    def _column(self, path: Path, pos: int) -> tuple[Predicate, int]:
        """`.comp.col OP value` and its relatives: any-of, ranges, empty, present; and
        `.comp.ref.far?` / `!`, what a reference points at."""
        shown = "." + ".".join(path)
        mark = self.text[pos : pos + 1]
        if len(path) % 2 and mark in ("?", "!") and not self.text.startswith("!=", pos):
            return Reach(path, required=mark == "!"), pos + 1
        op, pos = self._operator(shown, pos)
        end = len(self.text)
        if not self.text[pos:].strip():
            if op == "=":
                return Empty(path), end
            if op == "~=":
                return Present(path), end
            raise Refused(f"{op} needs a value after it, like {shown}{op}5")
        values = self._values(shown, op, pos)
        dotted = [_echo(raw) for raw, quoted in values if not quoted and ".." in raw]
        if dotted and len(values) > 1:
            raise Refused(
                f"a range cannot be one of several values: write {shown}={dotted[0]} alone, "
                f"or quote the value if the dots are part of it"
            )
        if dotted:
            if op != "=":
                raise Refused(
                    f"a range works with = only: write {shown}={dotted[0]}, "
                    f"or quote the value if the dots are part of it"
                )
            return self._range(path, shown, values[0][0]), end
        if len(values) > 1 and op not in ("=", "!="):
            listed = _echo(",".join(raw for raw, _ in values))
            raise Refused(f"any-of works with = and !=: write {shown}={listed}")
        return Compare(path, op, tuple(_decoded(raw, quoted) for raw, quoted in values)), end

    @staticmethod
    def _range(path: Path, shown: str, raw: str) -> Range:
        at = raw.find("..")
        exclusive = raw.startswith("...", at)
        low = raw[:at].strip()
        high = raw[at + (3 if exclusive else 2) :].strip()
        if not low or not high:
            raise Refused(f"a range needs both ends, like {shown}=20..35")
        return Range(path, unquote(low), unquote(high), include_high=not exclusive)

    def _aggregate_path(self, rest: str, example: str) -> Path:
        rest = rest.strip()
        if not rest:
            raise Refused(example)
        reader = _Segment(rest if rest.startswith(".") else "." + rest)
        names, pos = reader._path(1)
        if len(names) < 2 or reader.text[pos:].strip():
            raise Refused(example)
        return names

    def _bare(self) -> Predicate | None:
        """`limit=N`, `sort=…`, `after=…`, `id=<eid>`, or words for the full-text search."""
        text = self.text
        head = re.match(r"(limit|sort|after|id)\s*(~=|!=|<=|>=|=|<|>)", text)
        if head is not None:
            if head.group(1) == "limit":
                if head.group(2) != "=":
                    raise Refused(LIMIT_SENTENCE)
                return _limit(text[head.end() :], LIMIT_SENTENCE)
            if head.group(1) == "sort":
                if head.group(2) != "=":
                    raise Refused(SORT_SENTENCE)
                return _sort(text[head.end() :])
            if head.group(1) == "after":
                cursor = unquote(text[head.end() :].strip())
                if head.group(2) != "=" or not _CURSOR.fullmatch(cursor):
                    raise Refused(AFTER_SENTENCE)
                if len(cursor) > MAX_CURSOR:
                    raise Refused(f"{AFTER_SENTENCE} — this one is longer than any cursor")
                return After(cursor)
            if head.group(2) != "=" or not text[head.end() :].strip():
                raise Refused(ID_SENTENCE)
            values = self._values("id", "=", head.end())
            if len(values) != 1:
                raise Refused(ID_SENTENCE)
            eid = _decoded(*values[0])
            if not eid.strip():
                raise Refused(ID_SENTENCE)
            return Id(eid)
        dotless = _DOTLESS.match(text)
        if dotless is not None and dotless.group(1) in ORDER_WORDS:
            raise Refused(_not_an_order(_echo(text)))
        if dotless is not None and dotless.group(1) in PAGE_WORDS:
            raise Refused(_not_a_page(_echo(text)))
        if dotless is not None:
            shown = _echo(text)
            raise Refused(
                f"write .{shown} with a dot to filter on {dotless.group(1)}, "
                f'or "{shown}" in quotes to search for the words'
            )
        if text.startswith('"'):
            phrase, pos = self._quoted(0)
            if not text[pos:].strip():
                phrase = unquote(phrase)
                if not phrase.strip():
                    raise Refused(
                        "the quoted phrase is empty: put the words to search for between "
                        "the quotes, or leave it out"
                    )
                return Words(phrase)
        words = unquote(text).strip()
        return Words(words) if words else None

    # -- the pieces --------------------------------------------------------

    def _path(self, pos: int) -> tuple[Path, int]:
        """Names joined by dots, starting just after a dot; each name checked."""
        text = self.text
        names: list[str] = []
        while True:
            end = pos
            while end < len(text) and text[end] not in _NAME_STOP and not text[end].isspace():
                end += 1
            name = text[pos:end]
            kind = "component" if len(names) % 2 == 0 else "column"
            if not name:
                raise Refused(
                    f"a name must follow every dot in {_echo(text)}: names are lowercase letters, "
                    f"digits and _, like .jog.miles"
                )
            if not WORD.fullmatch(name):
                name = _echo(name)
                if LOWER_WORD.fullmatch(name):
                    raise Refused(
                        f"{name} is too long for a {kind} name — names are at most 40 "
                        f"lowercase letters, digits and _"
                    )
                raise Refused(
                    f"{name} is not a {kind} name — names are lowercase letters, digits "
                    f"and _, starting with a letter"
                )
            names.append(name)
            if end < len(text) and text[end] == ".":
                pos = end + 1
                continue
            return tuple(names), end

    def _operator(self, shown: str, pos: int) -> tuple[str, int]:
        """The operator at `pos`; refuses a missing or mistyped one."""
        text = self.text
        end = pos
        while end < len(text) and text[end] in _OP_CHARS:
            end += 1
        run = text[pos:end]
        rest = text[end:].strip()
        if run in OPERATORS:
            return run, end
        if not run or (run == "!" and not rest):
            if "." in shown[1:]:
                raise Refused(
                    f"say what {shown} should be: {shown}=5, {shown}>=5, or {shown}~= for any value"
                )
            raise Refused(
                f"say what {shown} should be: {shown}! to have it, {shown}= to lack it, "
                f"or {shown}? to bring it along"
            )
        if run in _MISTYPED:
            good, meaning = _MISTYPED[run]
            raise Refused(f"write {good} for {meaning}: {shown}{good}{_echo(rest) or '5'}")
        raise Refused(f"{run} is not an operator: use one of = != ~= < <= > >=, like {shown}>=5")

    def _values(self, shown: str, op: str, pos: int) -> list[tuple[str, bool]]:
        """Comma-separated values from `pos` to the end: (raw text, was quoted) each.

        Raw, because a range is recognised before decoding (`%2E%2E` is two dots, not a range).
        """
        text = self.text
        values: list[tuple[str, bool]] = []
        while True:
            pos = self._skip_space(pos)
            if text.startswith('"', pos):
                value, pos = self._quoted(pos)
                pos = self._skip_space(pos)
                if pos < len(text) and text[pos] != ",":
                    raise Refused(
                        f"a quoted value ends at its closing quote: write {shown}{op}"
                        f'"…" with all of the value inside the quotes'
                    )
                values.append((value, True))
            else:
                end = text.find(",", pos)
                end = len(text) if end < 0 else end
                raw = text[pos:end]
                if '"' in raw:
                    fixed = _echo(raw.strip().replace('"', '\\"'))
                    raise Refused(
                        f'quote the whole value, writing a quote inside it as \\": '
                        f'{shown}{op}"{fixed}"'
                    )
                raw = raw.strip()
                if not raw:
                    raise Refused(
                        f"a list of values has an empty one: write them like {shown}{op}a,b"
                    )
                values.append((raw, False))
                pos = end
            if pos >= len(text):
                return values
            if len(values) >= MAX_VALUES:
                raise Refused(
                    f"a list of values holds at most {MAX_VALUES}, like {shown}{op}a,b — "
                    "ask for the rest in another query"
                )
            pos += 1  # past the comma

    def _quoted(self, pos: int) -> tuple[str, int]:
        """The text between the quote at `pos` and its closing quote; `\\"` and `\\\\` escape."""
        text = self.text
        out: list[str] = []
        i = pos + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                return "".join(out), i + 1
            out.append(ch)
            i += 1
        raise Refused(f'the quote in {_echo(text)} is never closed: end the value with "')

    def _skip_space(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        return pos

    def _refuse_run_on(self, end: int) -> None:
        """Something follows a whole predicate: say where the `&` goes, if that is all."""
        text = self.text
        pieces = [text[:end]]
        pos = end
        try:
            while pos < len(text):
                if text[pos] not in ".*":
                    raise Refused("")
                _, stop = self._predicate(pos)
                pieces.append(text[pos:stop])
                pos = stop
        except Refused:
            raise Refused(
                f"nothing may follow {_echo(text[:end])} in one filter: "
                f"remove {_echo(text[end:].strip())} or join another filter with &"
            ) from None
        raise Refused(f"join filters with &: {_echo('&'.join(pieces))}")


def _echo(text: str, room: int = 80) -> str:
    """Text a person wrote, fit to quote inside a one-line sentence: escaped, shortened."""
    shown = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )
    return shown if len(shown) <= room else shown[: room - 1] + "…"


def _decoded(raw: str, quoted: bool) -> str:
    # A bare value's surrounding spaces are not part of it; a quoted one keeps them.
    return unquote(raw if quoted else raw.strip())


def _limit(raw: str, sentence: str) -> Limit:
    """The window after `limit=`: a whole number of rows, at least one."""
    count = _whole(unquote(raw.strip()))
    if not count:
        raise Refused(sentence)
    return Limit(count)


def _sort(raw: str) -> Sort:
    """The columns after `sort=`: `comp.col` each, `-` before one that descends."""
    keys: list[tuple[Path, bool]] = []
    for part in unquote(raw).split(","):
        part = part.strip()
        descending = part.startswith("-")
        part = part[1:].strip() if descending else part
        part = part[1:] if part.startswith(".") else part  # `sort=.jog.miles` means the same
        names = tuple(part.split("."))
        if len(names) != 2 or not all(WORD.fullmatch(n) for n in names):
            raise Refused(SORT_SENTENCE)
        if any(path == names for path, _ in keys):
            raise Refused(f"sort= names {'.'.join(names)} twice — name each column once")
        keys.append((names, descending))
    if len(keys) > MAX_SORT:
        raise Refused(f"sort= orders by at most {MAX_SORT} columns, like sort=-jog.miles,jog.who")
    return Sort(tuple(keys))


def _not_an_order(written: str) -> str:
    return (
        f"{written} is not how rows are ordered here — write sort= with a column, like "
        "sort=jog.miles, or sort=-jog.miles for the largest first"
    )


def _not_a_page(written: str) -> str:
    return (
        f"{written} is not how pages are read here — an answer cut short carries a cursor, "
        "and the same filter with after=<that cursor> answers the next page"
    )


def _whole(text: str) -> int | None:
    return int(text) if _WHOLE.fullmatch(text) else None


# -- writing a filter back ---------------------------------------------------

_ALWAYS_ENCODED = frozenset('&,"%=<>!~?#*\\')


def percent_encode_value(text: str) -> str:
    """`text` made safe to splice into a filter line as a value, or as words.

    Percent-encodes the grammar's punctuation (`& , " % = < > ! ~ ? # * \\`),
    whitespace and control characters, and the dots that would read as syntax: a
    leading dot, a trailing one, and any run of two or more (a range). Letters,
    digits, `-_:` and a lone dot inside (`1.5`, `example.com`) stay readable.
    """
    out: list[str] = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        if ch == ".":
            lone = 0 < i < last and text[i - 1] != "." and text[i + 1] != "."
            out.append("." if lone else "%2E")
        elif ch in _ALWAYS_ENCODED or ch.isspace() or ord(ch) < 32 or ord(ch) == 127:
            out.append("".join(f"%{byte:02X}" for byte in ch.encode()))  # quote() keeps ~
        else:
            out.append(ch)
    return "".join(out)


def _value(text: str) -> str:
    """A value as it reads best: bare when nothing in it is syntax, else in quotes."""
    if text.isascii() and text.isalnum():  # an eid, a word, a number: nothing to look at
        return text
    if text and percent_encode_value(text) == text:
        return text
    return _quoted(text)


def _quoted(text: str) -> str:
    # Inside quotes only `"` and `\` are syntax, and `%` is decoded after: encode those three.
    inner = text.replace("%", "%25").replace('"', "%22").replace("\\", "%5C")
    return f'"{inner}"'


def _words(text: str) -> str:
    """Words for the full-text search: bare when they read back the same, else quoted."""
    bare = text == text.strip() and not text.startswith(".")
    if bare and all(_bare_word(word) for word in text.split(" ")):
        return text
    return _quoted(text)


def _bare_word(word: str) -> bool:
    # Inside words dots are harmless (no ranges here); only the punctuation counts.
    return all(
        not (ch in _ALWAYS_ENCODED or ch.isspace() or ord(ch) < 32 or ord(ch) == 127) for ch in word
    )


def _path_text(path: Path) -> str:
    return "." + ".".join(path)


def format_predicate(predicate: Predicate) -> str:
    """One predicate as text that reads back as the same predicate."""
    match predicate:
        case Has(component):
            return f".{component}!"
        case Lacks(component):
            return f".{component}="
        case Maybe(component):
            return f".{component}?"
        case Reach(path, required):
            return _path_text(path) + ("!" if required else "?")
        case Every():
            return "*"
        case Compare(path, op, values):
            return _path_text(path) + op + ",".join(_value(v) for v in values)
        case Range(path, low, high, include_high):
            dots = ".." if include_high else "..."
            return f"{_path_text(path)}={_range_end(low)}{dots}{_range_end(high)}"
        case Empty(path):
            return _path_text(path) + "="
        case Present(path):
            return _path_text(path) + "~="
        case Words(text):
            return _words(text)
        case Limit(count):
            return f"limit={count}"
        case Sort(keys):
            return "sort=" + ",".join(("-" if down else "") + ".".join(p) for p, down in keys)
        case After(cursor):
            return f"after={cursor}"
        case Id(eid):
            return f"id={_value(eid)}"
        case Count():
            return ".count!"
        case Tally(path):
            return ".tally=" + ".".join(path)
        case Distinct(path):
            return ".distinct=" + ".".join(path)
        case Plural(word, op, number):
            return f".{word}{op}{number}"
    raise TypeError(f"not a predicate: {predicate!r}")  # pragma: no cover - exhaustive


def _range_end(text: str) -> str:
    # A range's ends cannot be quoted: they are encoded (dots at their edges included).
    return percent_encode_value(text)


def format_filter(f: Filter) -> str:
    """A Filter written as a filter line that `parse` reads back as the same Filter."""
    return "&".join(format_predicate(p) for p in f.predicates)


__all__ = [
    "COUNT_OPERATORS",
    "MAX_FILTER",
    "MAX_PREDICATES",
    "MAX_VALUES",
    "OPERATORS",
    "format_filter",
    "format_predicate",
    "parse",
    "percent_encode_value",
]
