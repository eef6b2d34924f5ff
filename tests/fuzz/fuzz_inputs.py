"""Hypothesis strategies that build what a caller sends pasture, well-formed and hostile mixed.

Each strategy builds from the grammar's own pieces (components and columns the
run club has, the filter's operators, a bundle's keys, a tools.json entry's
fields) and salts them with what breaks careless code: whole numbers past 64
bits, 1e999, NaN and Infinity, lone UTF-16 surrogates (raw and as `%ED%A0%80`),
NUL and other control characters, very long text, nesting a thousand deep,
reference walks hundreds of hops long, and names that are not names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fuzz_pieces import (
    ARGUMENTS,
    BIG,
    COLUMNS,
    COMMANDS,
    COMPONENTS,
    FILE_PATHS,
    HOSTILE_NUMBERS,
    HOSTILE_WORDS,
    OPERATORS,
    SEGMENTS,
    WILD_ANSWERS,
    YAML_BOMBS,
)
from hypothesis import strategies as st

# -- values ------------------------------------------------------------------------------------

hostile_numbers = st.sampled_from(HOSTILE_NUMBERS) | st.integers(
    min_value=-(2**80), max_value=2**80
)

hostile_words = st.sampled_from(HOSTILE_WORDS)

long_texts = st.sampled_from([1_001, 5_000, 60_000]).map(lambda n: "a" * n)

hostile_text = (
    hostile_words
    | long_texts
    | st.text(max_size=12)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=6)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=6)
)


def nested(depth: int, leaf: Any = 1) -> Any:
    """`leaf` inside `depth` lists and objects, built without recursion."""
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


json_scalars = st.none() | st.booleans() | hostile_numbers | hostile_text


def _values(keys: st.SearchStrategy[str], depths: list[int]) -> st.SearchStrategy[Any]:
    """JSON-ish values with `keys` as object keys, now and then nested `depths` deep."""
    return st.recursive(
        json_scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=6,
    ) | st.sampled_from(depths).map(nested)


# -- filters ------------------------------------------------------------------------------------


column_paths = st.tuples(st.sampled_from(COMPONENTS), st.sampled_from(COLUMNS)).map(
    lambda p: f".{p[0]}.{p[1]}"
)
walks = st.integers(min_value=1, max_value=400).map(
    lambda hops: ".comment.target" * hops + ".doc.title"
)
names_that_are_not = st.sampled_from(
    [".Jog", ".9x", ".jog.", "..jog", ".j\x00g", ".jo%67", "." + "a" * 41, ".\ud800", "."]
)
paths_in_filters = column_paths | walks | names_that_are_not


def _filter_value(value: Any) -> str:
    if isinstance(value, float) and value != value:
        return "nan"
    return str(value)


filter_values = (
    hostile_text
    | hostile_numbers.map(_filter_value)
    | st.lists(hostile_numbers.map(_filter_value), min_size=2, max_size=4).map(",".join)
    | st.sampled_from([1_001, 3_000]).map(lambda n: ",".join(str(i) for i in range(n)))
    | st.tuples(hostile_numbers, hostile_numbers).map(lambda r: f"{r[0]}..{r[1]}")
    | hostile_text.map(lambda t: '"' + t.replace('"', '\\"') + '"')
)

predicates = st.one_of(
    st.builds(
        lambda p, op, v: f"{p}{op}{v}", paths_in_filters, st.sampled_from(OPERATORS), filter_values
    ),
    st.builds(
        lambda c, mark: f".{c}{mark}", st.sampled_from(COMPONENTS), st.sampled_from(["!", "=", "?"])
    ),
    st.sampled_from(
        ["*", ".count!", ".tally=jog.who", ".tally=comment.target.doc.title", ".distinct=jog.who"]
    ),
    st.builds(lambda op, n: f".comments{op}{n}", st.sampled_from(OPERATORS), filter_values),
    st.builds(lambda n: f"limit={n}", filter_values),
    st.builds(lambda v: f"id={v}", filter_values),
    hostile_text,  # words for the full-text search
)

many_predicates = st.sampled_from([101, 1_000]).map(
    lambda n: "&".join(f".jog.miles>{i}" for i in range(n))
)

filters = st.lists(predicates, min_size=1, max_size=5).map("&".join) | many_predicates


def query_string(text: str) -> str:
    """`?filter=…` as client.js sends it: every byte percent-encoded, surrogates too."""
    return "filter=" + quote(text, safe="", errors="surrogatepass")


# -- page paths ---------------------------------------------------------------------------------

segments = st.sampled_from(SEGMENTS) | hostile_text.map(
    lambda t: quote(t[:2000], safe="", errors="surrogatepass")
)
# (cut to 2,000 characters: an address much longer is refused by the test's own client,
# before it reaches the server)

page_paths = st.lists(segments, min_size=1, max_size=6).map("/".join) | st.sampled_from(
    [1_100, 3_000]
).map(lambda n: "/".join(["a"] * n))


# -- what a door is sent: command calls, bundles, app files -------------------------------------

command_names = st.sampled_from(COMMANDS) | hostile_text

TYPES = ["text", "number", "bool", "time", "url", "integer", "nope"]
templates_text = (
    st.sampled_from(["$who", "$miles", "Run by $who", "$$5", "$\ud800", ".jog.miles>=$miles", "$"])
    | hostile_text
)

deep_json_text = st.sampled_from([65, 1_000, 5_000]).map(lambda n: "[" * n + "]" * n)
yaml_bombs = st.sampled_from(YAML_BOMBS)

file_paths = st.sampled_from(FILE_PATHS) | hostile_text


def json_text(value: Any) -> str:
    """`value` as JSON text, NaN and surrogates as Python's `json` writes them (escaped)."""
    return json.dumps(value)


@dataclass(frozen=True)
class Family:
    """The strategies for what one door is sent, from one kind of value."""

    values: st.SearchStrategy[Any]
    bundles: st.SearchStrategy[Any]
    command_args: st.SearchStrategy[dict[str, Any]]
    tools_documents: st.SearchStrategy[Any]
    vocab_documents: st.SearchStrategy[Any]
    app_files: st.SearchStrategy[dict[str, str]]
    tools_files: st.SearchStrategy[dict[str, str]]


def family(keys: st.SearchStrategy[str], depths: list[int]) -> Family:
    """Bundles, arguments and app files built from values with `keys` nested up to `depths`."""
    values = _values(keys, depths)
    eid_slots = (
        st.sampled_from(["$run", "$r1", "$", "$9", "$a b", "$" + "a" * 200, "4f3c2a1b0c9d8e7f"])
        | hostile_text
        | hostile_numbers
        | st.fixed_dictionaries({"eid": hostile_text | hostile_numbers})
    )
    columns_written = st.dictionaries(st.sampled_from(COLUMNS) | keys, values, max_size=3) | values
    edges = (
        st.lists(
            st.fixed_dictionaries(
                {"type": hostile_text | hostile_numbers, "child": eid_slots},
                optional={"remove": st.booleans() | hostile_numbers},
            ),
            max_size=2,
        )
        | values
    )
    bundle = st.fixed_dictionaries(
        {},
        optional={
            "entity": st.fixed_dictionaries({"eid": eid_slots}) | eid_slots,
            "jog": columns_written,
            "doc": columns_written,
            "comment": columns_written,
            "alias": columns_written,
            "edges": edges,
            "tombstone": st.just({}) | values,
            "$was": st.dictionaries(st.sampled_from(COMPONENTS), values, max_size=2),
        },
    ) | st.dictionaries(keys, values, max_size=3)
    bundles = bundle | st.lists(bundle, max_size=3) | values

    command_args = st.dictionaries(st.sampled_from(ARGUMENTS) | keys, values, max_size=4)

    entries = st.fixed_dictionaries(
        {},
        optional={
            "description": hostile_text | hostile_numbers,
            "input": st.dictionaries(
                st.sampled_from(["who", "miles", "at"]) | keys,
                st.sampled_from(TYPES) | values,
                max_size=3,
            )
            | values,
            "apply": bundles
            | st.just({"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}}),
            "query": filters | templates_text,
            "view": st.sampled_from(["index.html", "nope.html", "../x.html"]) | hostile_text,
        },
    )
    tools_documents = (
        st.dictionaries(
            st.sampled_from(["log_run", "find", "x"]) | keys, entries | values, max_size=3
        )
        | values
    )
    properties = st.dictionaries(
        st.sampled_from(["who", "miles"]) | keys,
        st.fixed_dictionaries({"type": st.sampled_from(["string", "number", "x"]) | values})
        | values,
        max_size=3,
    )
    vocab_documents = (
        st.fixed_dictionaries(
            {
                "$defs": st.dictionaries(
                    st.sampled_from(["jog", "doc", "Bad", "x" * 50]) | keys,
                    st.fixed_dictionaries({"properties": properties}) | values,
                    max_size=3,
                )
            }
        )
        | values
    )
    file_texts = hostile_text | deep_json_text | yaml_bombs | values.map(json_text)
    app_files = st.dictionaries(file_paths, file_texts, max_size=4).map(
        lambda files: {"index.html": "<title>fuzz</title>", **files}
    )
    tools_files = st.one_of(
        tools_documents.map(lambda doc: {"tools.json": json_text(doc)}),
        deep_json_text.map(lambda text: {"tools.json": text}),
        yaml_bombs.map(lambda text: {"tools.yml": text}),
        vocab_documents.map(lambda doc: {"vocab.json": json_text(doc)}),
        st.tuples(vocab_documents, tools_documents).map(
            lambda p: {"vocab.json": json_text(p[0]), "tools.json": json_text(p[1])}
        ),
        deep_json_text.map(lambda text: {"vocab.json": text}),
    ).map(lambda files: {"index.html": "<title>fuzz</title>", **files})
    return Family(
        values, bundles, command_args, tools_documents, vocab_documents, app_files, tools_files
    )


# For JSON bodies, anything JSON text can hold: keys with lone surrogates, 1,000 levels deep.
WEB = family(hostile_text, [65, 200, 1_000])
# For the MCP SDK's own client, what it can send at all: it writes no key holding a lone
# surrogate and nests no deeper than its serializer goes (a value may hold either).
MCP = family(hostile_text.filter(lambda t: not has_surrogate(t)), [65, 150])


__all__ = [
    "BIG",
    "MCP",
    "WEB",
    "WILD_ANSWERS",
    "Family",
    "command_names",
    "filters",
    "has_surrogate",
    "hostile_text",
    "nested",
    "page_paths",
    "query_string",
]
