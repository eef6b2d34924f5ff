"""How the console and `pasture command` draw a code command's data (pasture.cli._render):
the registry says "return data, not text", and the console formats it."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from pasture.cli._render import command_answer


def drawn(data: dict[str, Any], text: str = "") -> str:
    out = io.StringIO()
    command_answer(text, data, Console(file=out, width=100, color_system=None))
    return out.getvalue()


def test_values_are_lines_and_lists_of_objects_are_tables() -> None:
    data = {"count": 3, "tags": ["a", "b"], "lines": [{"sku": "V60-02", "qty": 2}]}
    lines = drawn(data).splitlines()
    assert lines[:3] == ["count: 3", "tags: a, b", "lines:"]
    assert "sku" in lines[3] and "qty" in lines[3]
    assert [c.strip() for c in lines[-1].split("│")] == ["V60-02", "2"]


def test_beside_a_text_only_the_tables_are_drawn() -> None:
    data = {"count": 3, "lines": [{"sku": "V60-02", "qty": 2}]}
    beside = drawn(data, "3 items of 1 product")
    assert beside.splitlines()[:2] == ["3 items of 1 product", "lines:"]
    assert "count" not in beside and "V60-02" in beside
    assert drawn({"sku": "V60-02"}, "Added V60-02") == "Added V60-02\n"


words = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8)


@given(st.dictionaries(words, st.one_of(words, st.integers()), min_size=1, max_size=4))
def test_every_value_of_a_flat_answer_is_shown_under_its_key(data: dict[str, Any]) -> None:
    lines = drawn(data).splitlines()
    assert lines == [f"{key}: {value}" for key, value in data.items()]


# -- what is drawn is what was given ---------------------------------------------------

# Text that rich would read as markup or emoji were the console to read it.
hostile = st.sampled_from(["[/x]", "[conceal]hidden", "[bold]b[/bold]", ":smile:", "[link=x]y"])
values = st.lists(hostile | words, min_size=1, max_size=4).map(" ".join)


@given(value=values)
def test_a_value_is_printed_as_it_is_never_read_as_markup(value: str) -> None:
    """A row's `[/x]` ended `pasture query` with an error, and `[conceal]` hid what came
    after: values are people's data, printed as they are in every table and line."""
    from pasture.cli._render import audit_table, rows_table, terminal

    out = io.StringIO()
    console = terminal(file=out, width=400, color_system=None)
    rows_table([{"entity": {"eid": "a" * 16}, "note": {"text": value}}], console)
    record = {"at": "2026-12-01T10:00:00", "name": value, "door": "web", "via": value}
    record |= {"app": "ada/x", "action": "command", "command": value, "args": value}
    audit_table([{**record, "outcome": value, "ms": 1.0}], apps=True, console=console)
    command_answer(value, {"lines": [{"text": value}]}, console)
    printed = out.getvalue()
    assert printed.count(value) >= 6, printed
