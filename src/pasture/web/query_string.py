"""The filter a query string carries: `./api/query?<filter>` as HTTP clients send it.

The filter rides as the query string, its predicates joined by `&`:
`?.jog!&.jog.miles>=5&.doc.title="a & b"`. Few clients send that byte for byte.
A browser's `fetch` percent-encodes `"`, `<`, `>` and spaces; httpx's and
requests' `params=`, curl's `--data-urlencode` and `URLSearchParams` encode
nearly everything, and write a space as `+`. So the query string is read as a
server reads any query string, part by part:

- it is split on each `&` outside double quotes, as the grammar splits a filter
  (`"a & b"` stays one value); a quote counts whether it came as `"` or `%22`,
  and a `%26` never splits: it is a literal `&`;
- each part is percent-decoded once: `%XX` is a byte of UTF-8 and `+` a space,
  so a plus is sent as `%2B`;
- what a part decodes to is the filter as written, with its values as they are:
  a `%` or an `&` in it is that character.

That last rule needs care, because the grammar percent-decodes values itself
(`.doc.title=a%26b` is the title `a&b`). A part that decodes to `50%41` must
still mean `50%41`, not `50A`; and one that decodes to `a&b` outside quotes
must not be split in two. So the decoded part is handed on with exactly those
re-encoded, and nothing else: a `%` the grammar would decode (one followed by
two hex digits) as `%25`, and an `&` outside quotes as `%26`. The grammar reads
them back as the characters they were, and a part the door need not touch
reaches it unchanged, so a refusal quotes the filter as its sender wrote it.

A filter written raw keeps its meaning: `%26` and `%25` in a value are still a
literal `&` and `%`. What no part can do is hide the grammar's own punctuation
behind an escape (an encoded `,` is a comma, an encoded `"` a quote, or no
client's encoding could be undone): a value holding them is written in quotes,
`.jog.who="Ada, Bo"`, as everywhere else.

`?filter=<the whole filter, percent-encoded>` (what client.js sends) is the
other form, decoded once, whole, and a `+` there is a space as in every part
(`encodeURIComponent` never writes one; httpx, requests and curl's
`--data-urlencode` write one for a space); `filter=…` is never a filter of its own.
Parts may follow it — `?filter=<the filter>&after=<cursor>`, as an answer cut short
says to read on — and join the filter as predicates of their own, each read as any
part is.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

_HEX = frozenset(b"0123456789abcdefABCDEF")
_AMP, _PERCENT, _PLUS, _QUOTE, _BACKSLASH = b"&", b"%", b"+", b'"', b"\\"


def filter_of(query: bytes | str) -> str:
    """The filter a query string carries (its raw bytes, or the same as text)."""
    raw = query if isinstance(query, bytes) else query.encode("utf-8", "surrogatepass")
    if raw.startswith(b"filter="):
        head, amp, rest = raw.partition(_AMP)
        whole = head[len(b"filter=") :].replace(_PLUS, b" ")
        filter = unquote_to_bytes(whole).decode("utf-8", "replace")
        # the parts after it (`&after=<cursor>`) join it, as parts
        return f"{filter}&{_as_parts(rest)}" if amp and rest else filter
    if _PERCENT not in raw and _PLUS not in raw:  # nothing encoded: the filter as written
        return query if isinstance(query, str) else raw.decode("utf-8", "replace")
    return _as_parts(raw)


def _as_parts(raw: bytes) -> str:
    """The filter of a query string of `&`-separated parts, each decoded once."""
    if _PERCENT not in raw and _PLUS not in raw:
        return raw.decode("utf-8", "replace")
    return "&".join(_handed_on(decoded, amps) for decoded, amps in _parts(raw))


def _parts(raw: bytes) -> list[tuple[bytes, set[int]]]:
    """Each `&`-separated part decoded, with where it holds an `&` outside quotes.

    Quotes are followed in the decoded bytes, as the grammar follows them in a
    filter: inside them a backslash escapes the next character. (A character of
    several UTF-8 bytes never holds `"`, `\\` or `&`, so bytes will do.)
    """
    parts: list[tuple[bytes, set[int]]] = []
    decoded = bytearray()
    amps: set[int] = set()
    quoted = escaped = False
    i = 0
    while i < len(raw):
        byte = raw[i : i + 1]
        if byte == _AMP and not quoted:
            parts.append((bytes(decoded), amps))
            decoded, amps = bytearray(), set()
            i += 1
            continue
        if byte == _PERCENT and _is_hex(raw, i + 1):
            byte = bytes([int(raw[i + 1 : i + 3], 16)])
            i += 3
        else:
            byte = b" " if byte == _PLUS else byte
            i += 1
        if escaped:
            escaped = False
        elif quoted and byte == _BACKSLASH:
            escaped = True
        elif byte == _QUOTE:
            quoted = not quoted
        elif byte == _AMP and not quoted:
            amps.add(len(decoded))  # came as %26: a literal `&`
        decoded += byte
    parts.append((bytes(decoded), amps))
    return parts


def _is_hex(raw: bytes, at: int) -> bool:
    return at + 1 < len(raw) and raw[at] in _HEX and raw[at + 1] in _HEX


def _handed_on(decoded: bytes, amps: set[int]) -> str:
    """A decoded part as the grammar should read it: its `%` and `&` kept literal."""
    out = bytearray()
    for i, ch in enumerate(decoded):
        if ch == _PERCENT[0] and _is_hex(decoded, i + 1):
            out += b"%25"
        elif i in amps:
            out += b"%26"
        else:
            out.append(ch)
    return out.decode("utf-8", "replace")


__all__ = ["filter_of"]
