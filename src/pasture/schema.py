"""Checking a code command's arguments against its JSON Schema, and converting console text.

A code command declares its input as a JSON Schema of an object. Only the
keywords that apply to one value are checked (the registry document's list):

    type, required, enum, const, format
    minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf
    minLength, maxLength (in characters), pattern
    items (one level), minItems, maxItems, uniqueItems
    type: ["string", "null"] and the like, for a value that may be left out

`InputSchema(schema)` keeps those keywords (`unchecked` names the ones it
left out: oneOf, $ref, a nested object's properties, …), and jsonschema's
Draft 2020-12 validator, with format checking, does the checking. What this
module adds is what JSON Schema leaves to the caller:

- null or a missing value is "not given": the default applies, or `required`
  reports it; an empty string is a value for a string, and for a number, a
  true/false or a list it is "not given" (`--qty=`);
- an argument the schema does not declare is refused;
- text typed by a person (`typed_text=True`) is converted to the declared
  type: "2" → 2, yes/no/true/false → a bool, "a,b" → a list; values that
  arrive typed (an agent, code) are never converted;
- every problem comes back in one `UsageError`, in plain words
  (`qty is at least 1`, `sku is required`, `color is one of red, green`).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from fractions import Fraction
from typing import Any, cast
from urllib.parse import urlsplit

import re2
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import SchemaError
from jsonschema.validators import extend

from pasture import jsontext
from pasture.errors import Refused, UsageError

# Keywords checked on one value (a property, or an item of a list property).
VALUE_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
    }
)
# Keywords that describe and check nothing: kept quietly, never warned about.
NOTES = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
    }
)
TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
# The types a value is checked against by hand (`InputSchema._plainly_valid`), as JSON
# Schema 2020-12 reads them: a bool is no number, and 2.0 is an integer.
_PLAIN: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}
TRUE_WORDS = frozenset({"true", "yes"})
FALSE_WORDS = frozenset({"false", "no"})
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

# -- the validator ----------------------------------------------------------------

_formats = FormatChecker()


@_formats.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # RFC 3339: a date, a time and an offset (jsonschema checks it only with an extra package).
    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", value):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


@_formats.checks("time", raises=ValueError)
def _time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return re.fullmatch(r"\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", value) is not None and (
        datetime.strptime(value[:8], "%H:%M:%S") is not None
    )


@_formats.checks("uri")
def _uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parts = urlsplit(value)
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme)) and " " not in value


# The draft's own multipleOf, which the one below wraps.
_MULTIPLE_OF: Any = Draft202012Validator.VALIDATORS["multipleOf"]


def _multiple_of(validator: Any, d_b: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    # jsonschema divides first and only then guards the overflow; a huge whole
    # number over a fraction overflows in the division itself.
    try:
        found: Any = _MULTIPLE_OF(validator, d_b, instance, schema)
        yield from found or ()
    except OverflowError:
        if (Fraction(instance) / Fraction(d_b)).denominator != 1:
            yield ValidationError(f"{instance!r} is not a multiple of {d_b}")


# An app's `pattern` is matched by RE2, in time linear in the text: Python's own engine
# backtracks, and a pattern like ^(a+)+$ would hold the server for hours on 40 letters.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the deploy's sentence, not stderr's


@functools.lru_cache(maxsize=1024)
def linear_pattern(pattern: str) -> Any:
    """An app's pattern compiled to match in linear time; `re2.error` when RE2 cannot run it
    (a backreference, a lookaround)."""
    return re2.compile(pattern, _RE2_OPTIONS)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not isinstance(instance, str) or not isinstance(pattern, str):
        return
    try:
        found = linear_pattern(pattern).search(instance)
    except (re2.error, UnicodeEncodeError):  # not one it can run; half a character
        found = None
    if found is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator: Any = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"multipleOf": _multiple_of, "pattern": _pattern}
)

EXAMPLE_OF_FORMAT = {
    "date": "a date, like 2026-09-01",
    "date-time": "a date and time, like 2026-09-01T10:00:00Z",
    "time": "a time of day, like 10:00:00Z",
    "email": "an email address, like ada@example.org",
    "idn-email": "an email address, like ada@example.org",
    "uri": "an address, like https://example.org/",
    "uuid": "a UUID, like 123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "an IPv4 address, like 192.0.2.1",
    "ipv6": "an IPv6 address, like 2001:db8::1",
    "regex": "a regular expression",
}

# -- words ----------------------------------------------------------------------------


def shown(value: Any) -> str:
    """A value as a person would write it: text bare, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _listed(values: Sequence[Any]) -> str:
    return ", ".join(shown(v) for v in values)


def _type_words(kind: str) -> str:
    return {
        "string": "text",
        "integer": "a whole number",
        "number": "a number",
        "boolean": "true or false",
        "array": "a list",
        "object": "an object",
        "null": "left out",
    }.get(kind, kind)


def _types_of(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _plural(n: Any, one: str, many: str) -> str:
    return f"{shown(n)} {one if n == 1 else many}"


def sentence(who: str, keyword: str, expected: Any) -> str:
    """The plain sentence for one keyword a value broke: `qty is at least 1`."""
    return f"{who} {requirement(keyword, expected)}"


def requirement(keyword: str, expected: Any) -> str:
    """What one keyword asks of a value, said after its name: `is at least 1`, `has at
    most 3 items`, `matches the pattern ^[a-z]+$` (refusals and the console's `man`)."""
    if keyword == "type":
        kinds = [expected] if isinstance(expected, str) else list(expected)
        words = [_type_words(k) for k in kinds if k != "null"] or ["left out"]
        return f"is {' or '.join(words)}"
    if keyword == "enum":
        return f"is one of {_listed(expected)}"
    if keyword == "const":
        return f"is {shown(expected)}"
    if keyword == "format":
        return f"is {EXAMPLE_OF_FORMAT.get(expected, f'in the {expected} format')}"
    if keyword == "minimum":
        return f"is at least {shown(expected)}"
    if keyword == "maximum":
        return f"is at most {shown(expected)}"
    if keyword == "exclusiveMinimum":
        return f"is more than {shown(expected)}"
    if keyword == "exclusiveMaximum":
        return f"is less than {shown(expected)}"
    if keyword == "multipleOf":
        return f"is a multiple of {shown(expected)}"
    if keyword == "minLength":
        if expected == 1:
            return "is not empty"
        return f"is at least {_plural(expected, 'character', 'characters')}"
    if keyword == "maxLength":
        return f"is at most {_plural(expected, 'character', 'characters')}"
    if keyword == "pattern":
        return f"matches the pattern {expected}"
    if keyword == "minItems":
        return f"has at least {_plural(expected, 'item', 'items')}"
    if keyword == "maxItems":
        return f"has at most {_plural(expected, 'item', 'items')}"
    if keyword == "uniqueItems":
        return "has no item twice"
    if keyword == "required":
        return "is required"
    return f"does not fit its schema ({keyword})"


def _where(path: Sequence[Any], root: str = "") -> str:
    """`qty`, or `item 2 of tags` for a list's item (counted from 1, as people count)."""
    name = root
    for part in path:
        if isinstance(part, int):
            name = f"item {part + 1} of {name}"
        else:
            name = f"{name}.{part}" if name else str(part)
    return name


# -- the schema -----------------------------------------------------------------------


def _strip_value(
    schema: Mapping[str, Any], where: str, unchecked: list[str], *, nested: bool
) -> dict[str, Any]:
    """One property's schema with only the one-value keywords (and `items` one level down)."""
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in VALUE_KEYWORDS:
            kept[key] = value
        elif key == "items" and not nested and isinstance(value, Mapping):
            kept["items"] = _strip_value(value, f"{where}.items", unchecked, nested=True)
        elif key not in NOTES:
            unchecked.append(f"{where}.{key}")
    return kept


# What a command's or a handler's args look like, in the one sentence that says so.
_ARGS_EXAMPLE = {"command": '{"who": "Ada"}', "handler": '{"text": "…"}'}


def args_object(args: Any, of: str = "command") -> Mapping[str, Any]:
    """`args` when it is an object of argument names to values; UsageError otherwise, with
    the one sentence every door gives for that mistake (`of`: a command's or a handler's)."""
    if not isinstance(args, Mapping):
        example = _ARGS_EXAMPLE.get(of, _ARGS_EXAMPLE["command"])
        raise UsageError(f"args is an object of the {of}'s arguments, like {example}")
    return cast(Mapping[str, Any], args)


class InputSchema:
    """A code command's input schema, checked once at registration and used on every call.

    `problems` lists what is wrong with the schema itself (empty for a good
    one); `unchecked` the keywords left to the command's own code.
    """

    def __init__(self, schema: Mapping[str, Any] | None, *, reserved: Sequence[str] = ()) -> None:
        self.written: dict[str, Any] = (
            dict(schema) if isinstance(schema, Mapping) else {"type": "object", "properties": {}}
        )
        self.problems: list[str] = []
        self.unchecked: list[str] = []
        self.properties: dict[str, dict[str, Any]] = {}
        self.required: list[str] = []
        self.defaults: dict[str, Any] = {}
        if not isinstance(schema, Mapping | None):
            self.problems.append('input is a JSON Schema of an object, like {"type": "object", …}')
            self.written = {"type": "object", "properties": {}}
        self._read(reserved)
        stripped: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            stripped["required"] = self.required
        self.checked = stripped
        self._validator = _Validator(stripped, format_checker=_formats)
        # When every argument is only a type (and notes), a value of that type is all
        # there is to check: done by hand, and JSON Schema is asked only to word a problem.
        self._plain: dict[str, str] | None = {}
        for name, prop in self.properties.items():
            kind = prop.get("type")
            # `"type": ["string", "null"]` (a list) is for JSON Schema to check, not by hand.
            if set(prop) - NOTES - {"type"} or not isinstance(kind, str) or kind not in _PLAIN:
                self._plain = None
                break
            self._plain[name] = str(kind)
        self._check_defaults()

    # -- reading the schema ------------------------------------------------------------
    def _read(self, reserved: Sequence[str]) -> None:
        doc = self.written
        if doc.get("type", "object") != "object":
            self.problems.append('input is the schema of an object: "type": "object"')
        properties = doc.get("properties", {})
        if not isinstance(properties, Mapping):
            self.problems.append("input's properties is an object of argument names to schemas")
            properties = {}
        for key in doc:
            if key not in ("type", "properties", "required", "additionalProperties", *NOTES):
                self.unchecked.append(key)
        if doc.get("additionalProperties", False) is not False:
            # Arguments the schema does not declare are refused all the same.
            self.unchecked.append("additionalProperties")
        for name, prop in properties.items():
            if not isinstance(name, str) or not name:
                self.problems.append(f"{shown(name)} is not an argument name")
                continue
            if name in reserved:
                self.problems.append(
                    f"an input named {name} is refused — {', '.join(reserved)} belong to "
                    "clients; name it otherwise"
                )
            if not isinstance(prop, Mapping):
                self.problems.append(f'{name}\'s schema is an object, like {{"type": "string"}}')
                continue
            self.properties[name] = _strip_value(prop, name, self.unchecked, nested=False)
            self._check_property(name, self.properties[name])
            if "default" in prop:
                self.defaults[name] = prop["default"]
        required = doc.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            self.problems.append("input's required is a list of argument names")
            required = []
        for name in required:
            if name not in self.properties:
                self.problems.append(f"required names {name}, which is not in properties")
            elif name not in self.required:
                self.required.append(name)

    def _check_property(self, name: str, prop: dict[str, Any]) -> None:
        """The property's schema: the common mistakes in words, then the metaschema."""
        found = _mistakes(name, prop)
        if not found and isinstance(prop.get("items"), Mapping):
            found = _mistakes(f"{name}.items", prop["items"])
        if found:
            self.problems.extend(found)
            prop.clear()  # a schema that is wrong checks nothing, and no call gets this far
            return
        try:
            _Validator.check_schema(prop)
        except SchemaError as bad:
            where = ".".join([name, *(str(p) for p in bad.path)])
            self.problems.append(f"{where} is not valid JSON Schema — see the keyword's rules")
            prop.clear()
            return

    def _check_defaults(self) -> None:
        for name, default in self.defaults.items():
            if name not in self.properties or default is None:
                continue
            found = [
                sentence(_where(e.path, name), str(e.validator), e.validator_value)
                for e in _Validator(self.properties[name], format_checker=_formats).iter_errors(
                    default
                )
            ]
            if found:
                self.problems.append(
                    f"{name}'s default {shown(default)} does not fit: {'; '.join(found)}"
                )

    # -- checking arguments ------------------------------------------------------------
    def check(self, args: Mapping[str, Any], *, typed_text: bool = False) -> dict[str, Any]:
        """The arguments, defaults applied, typed text converted; UsageError names every problem."""
        args = args_object(args)
        problems: list[str] = []
        given: dict[str, Any] = {}
        bad: set[str] = set()  # reported already: not "required" as well
        undeclared = [str(k) for k in args if k not in self.properties]
        for name, prop in self.properties.items():
            value = args.get(name)
            if value is not None and not isinstance(value, str | bool | int | float | list | dict):
                problems.append(f"{name} is {self._kinds(prop)}")
                bad.add(name)
                continue
            if typed_text and isinstance(value, str):
                value = from_text(value, prop)
            elif isinstance(value, str) and value == "" and _empty_is_absent(prop):
                value = None
            if value is None and name in self.defaults:
                value = copy.deepcopy(self.defaults[name])
            if value is None:
                continue
            if isinstance(value, float) and not math.isfinite(value):
                problems.append(f"{name} is {self._kinds(prop)}")
                bad.add(name)
                continue
            try:  # what no JSON carries on to the code: NaN inside, half characters, 1,000 deep
                jsontext.check(value, name)
            except Refused as e:
                problems.append(e.sentence)
                bad.add(name)
                continue
            given[name] = value
        if not self._plainly_valid(given):
            for error in sorted(self._validator.iter_errors(given), key=self._order):
                problems.extend(self._words(error, given, bad))
        if undeclared:
            problems.append(self._undeclared(undeclared))
        if problems:
            raise UsageError("; ".join(dict.fromkeys(problems)))
        # A whole number written 2.0 is the whole number 2.
        for name, value in given.items():
            if (
                isinstance(value, float)
                and value.is_integer()
                and "integer" in _types_of(self.properties[name])
            ):
                given[name] = int(value)
        return given

    def _plainly_valid(self, given: Mapping[str, Any]) -> bool:
        """True when a schema of types only surely holds for `given` (else JSON Schema looks)."""
        plain = self._plain
        if plain is None or any(name not in given for name in self.required):
            return False
        return all(_PLAIN[plain[name]](value) for name, value in given.items())

    def _kinds(self, prop: Mapping[str, Any]) -> str:
        kinds = [k for k in _types_of(prop) if k != "null"]
        return " or ".join(_type_words(k) for k in kinds) if kinds else "a JSON value"

    def _undeclared(self, names: list[str]) -> str:
        known = list(self.properties)
        them = ", ".join(names)
        verb = "is not an argument" if len(names) == 1 else "are not arguments"
        if not known:
            return f"{them} {verb} — this command takes no arguments"
        return f"{them} {verb} — the arguments are {', '.join(known)}"

    def _order(self, error: ValidationError) -> tuple[int, str]:
        order = list(self.properties)
        path = list(error.path)
        if path and path[0] in self.properties:
            return order.index(str(path[0])), str(path)
        return len(order), str(error.validator)

    def _words(
        self, error: ValidationError, instance: Mapping[str, Any], bad: set[str]
    ) -> list[str]:
        keyword = str(error.validator)
        if keyword == "required":
            return [
                f"{name} is required"
                for name in self.required
                if name not in instance and name not in bad
            ]
        if keyword == "additionalProperties":
            return []  # reported above, with the names the command does take
        return [sentence(_where(error.path), keyword, error.validator_value)]


_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COUNT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems")


def _mistakes(where: str, prop: Mapping[str, Any]) -> list[str]:
    """What is commonly written wrong in a property's schema, each in words."""
    found: list[str] = []
    kind = prop.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if "type" in prop and (kinds is None or not kinds or any(k not in TYPES for k in kinds)):
        found.append(f"{where}'s type is one of {', '.join(TYPES)}, or a list of them")
    for key in _NUMBER_KEYWORDS:
        value = prop.get(key)
        if key in prop and (isinstance(value, bool) or not isinstance(value, int | float)):
            found.append(f"{where}'s {key} is a number")
        elif key == "multipleOf" and isinstance(value, int | float) and value <= 0:
            found.append(f"{where}'s multipleOf is more than 0")
    for key in _COUNT_KEYWORDS:
        value = prop.get(key)
        if key in prop and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            found.append(f"{where}'s {key} is a whole number, 0 or more")
    if "enum" in prop and not isinstance(prop["enum"], list):
        found.append(f"{where}'s enum is a list of the values it may take")
    for key in ("format", "pattern"):
        if key in prop and not isinstance(prop[key], str):
            found.append(f"{where}'s {key} is text")
    if isinstance(prop.get("pattern"), str):
        try:
            re.compile(prop["pattern"])
        except re.error as e:
            found.append(f"{where}'s pattern is not a regular expression ({e.msg})")
        else:
            try:
                linear_pattern(prop["pattern"])
            except re2.error:
                found.append(
                    f"{where}'s pattern uses a backreference or a lookaround, which pasture "
                    "does not match (it matches in time linear in the text) — write it "
                    "without them"
                )
    if "uniqueItems" in prop and not isinstance(prop["uniqueItems"], bool):
        found.append(f"{where}'s uniqueItems is true or false")
    return found


def _empty_is_absent(prop: Mapping[str, Any]) -> bool:
    """`--qty=` leaves a number, a bool or a list out; an empty string is a string's value."""
    kinds = _types_of(prop)
    return bool(kinds) and "string" not in kinds


def from_text(text: str, prop: Mapping[str, Any]) -> Any:
    """Text a person typed, as the declared type; left as text when it does not convert.

    Returns None for an empty value where the type is not text (`--qty=`).
    """
    kinds = _types_of(prop)
    if not kinds:
        # No type: an enum or const still says what the text stands for.
        choices = list(prop.get("enum", [])) + ([prop["const"]] if "const" in prop else [])
        for choice in choices:
            if not isinstance(choice, str) and shown(choice) == text.strip():
                return choice
        return text
    if "string" in kinds:
        return text
    stripped = text.strip()
    if stripped == "":
        return None
    for kind in kinds:
        converted = _convert(stripped, kind, prop)
        if converted is not _NO:
            return converted
    return text


_NO: Any = object()


def _convert(text: str, kind: str, prop: Mapping[str, Any]) -> Any:
    if kind == "integer" and _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python turns into a number
            return _NO
    if kind == "number" and _DECIMAL.fullmatch(text):
        if _INTEGER.fullmatch(text):
            try:
                return int(text)
            except ValueError:
                return _NO
        number = float(text)
        return number if math.isfinite(number) else _NO
    if kind == "boolean":
        word = text.lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    if kind == "null" and text.lower() == "null":
        return None
    if kind == "array":
        items = prop.get("items")
        item_schema = cast(Mapping[str, Any], items) if isinstance(items, Mapping) else {}
        out = []
        for part in text.split(","):
            value = from_text(part.strip(), item_schema)
            out.append(part.strip() if value is None else value)
        return out
    return _NO


__all__ = [
    "EXAMPLE_OF_FORMAT",
    "VALUE_KEYWORDS",
    "InputSchema",
    "args_object",
    "from_text",
    "sentence",
    "shown",
]
