"""Tables for a terminal (rich), imported only by the verbs that print one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from pasture.platform import AppInfo, arguments_of, kind_of


def terminal(**options: Any) -> Console:
    """A console that prints what it is given as it is: no `[markup]` and no `:emoji:` read
    in values, which are people's data, names and refusals (a row's `[/x]` would otherwise
    end the command with an error, and `[conceal]` hide what follows)."""
    return Console(markup=False, emoji=False, **options)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        if "name" in value:
            return str(value["name"])
        if "eid" in value:
            return str(value["eid"])
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):  # JSON a person can read, never Python's repr
        import json

        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


# A column given less room than this reads as a stack of fragments: below it, rows are
# printed one after another (`rows_records`) instead of side by side.
_NARROWEST = 10


def rows_table(rows: Sequence[dict[str, Any]], console: Console | None = None) -> None:
    """Query rows as a table: the eid, then each component's columns. On a terminal too
    narrow for them side by side, each row as a block of `column  value` lines."""
    out = console or terminal()
    columns = _row_columns(rows)
    eids = [_eid(row) for row in rows]
    with_eid = any(eid is not None for eid in eids)
    # What the table takes at the least: each column at its narrowest readable width
    # (or its whole width, when less), plus a space either side and a rule between.
    cells = [[_cell(_value(row, col)) for row in rows] for col in columns]
    least = sum(
        min(_NARROWEST, max(cell_len(c) for c in [_heading(col), *column])) + 3
        for col, column in zip(columns, cells, strict=True)
    ) + (19 if with_eid else 0)
    if least > out.width:
        rows_records(rows, out)
        return
    table = Table(show_edge=False, header_style="bold")
    if with_eid:
        # An eid is copied into the next command: it stays whole, the other columns give way.
        table.add_column("eid", no_wrap=True, min_width=16)
    for col in columns:
        # Wrapped onto more lines rather than cut: a value is read, or copied, whole.
        table.add_column(_heading(col), overflow="fold")
    for i, eid in enumerate(eids):
        table.add_row(*([_cell(eid)] if with_eid else []), *(column[i] for column in cells))
    out.print(table)


def rows_records(rows: Sequence[dict[str, Any]], console: Console | None = None) -> None:
    """Query rows one after another: the eid (whole), then `column  value` lines under it,
    a long value folded under itself; on a terminal too narrow even for that, the lines
    as they are, for the terminal to wrap."""
    out = console or terminal()
    columns = _row_columns(rows)
    keys = max((cell_len(_heading(col)) for col in columns), default=0)
    folded = out.width >= 2 + keys + 2 + _NARROWEST
    for i, row in enumerate(rows):
        eid = _eid(row)
        if i:
            out.print()
        if eid is not None:
            out.print(Text(_cell(eid), style="bold"), soft_wrap=True)
        indent = 2 if eid is not None else 0
        if not folded:
            for col in columns:
                line = f"{' ' * indent}{_heading(col):<{keys}}  {_cell(_value(row, col))}"
                out.print(Text(line), soft_wrap=True)
            continue
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for col in columns:
            grid.add_row(_heading(col), _cell(_value(row, col)))
        out.print(Padding(grid, (0, 0, 0, indent), expand=False))


Column = tuple[str, str | None]


def _row_columns(rows: Sequence[dict[str, Any]]) -> list[Column]:
    """Each component's columns, in the order rows first name them (a bare value is one).
    Rows may differ in shape — one lacks a component (`null`) another has — so a component
    that has columns in any row is those columns in every row, blank where a row lacks it,
    never one column holding the whole component."""
    columned = {
        comp
        for row in rows
        for comp, value in row.items()
        if isinstance(value, dict) and not _is_reference(value)
    }
    columns: list[Column] = []
    for row in rows:
        for comp, value in row.items():
            if comp in ("kind", "entity"):
                continue
            if comp in columned:
                for col in value if isinstance(value, dict) else ():
                    if (comp, col) not in columns:
                        columns.append((comp, col))
            elif (comp, None) not in columns:
                columns.append((comp, None))
    return columns


def _is_reference(value: dict[str, Any]) -> bool:
    """A reference read back (`{eid, name}`), a cell of its own rather than columns."""
    return set(value) <= {"eid", "name"} and "eid" in value


def _heading(column: Column) -> str:
    comp, col = column
    return f"{comp}.{col}" if col else comp


def _eid(row: dict[str, Any]) -> Any:
    entity = row.get("entity")
    return entity.get("eid") if isinstance(entity, dict) else entity


def _value(row: dict[str, Any], column: Column) -> Any:
    comp, col = column
    value = row.get(comp)
    if col is not None:
        value = value.get(col) if isinstance(value, dict) else None
    return value


def apps_table(apps: Sequence[AppInfo], console: Console | None = None) -> None:
    table = Table(show_edge=False, header_style="bold")
    table.add_column("app", no_wrap=True, min_width=max((len(a.at) for a in apps), default=3))
    table.add_column("version", no_wrap=True)
    for name in ("title", "access", "commands", "code"):
        table.add_column(name)
    # An address is copied too: it stays whole.
    table.add_column("address", no_wrap=True, min_width=max((len(a.url) for a in apps), default=7))
    for a in apps:
        commands = ", ".join(a.commands) or "—"
        code = "runs code" if a.code else "—"
        table.add_row(a.at, f"v{a.version}", a.title, a.access, commands, code, a.url)
    (console or terminal()).print(table)


def key_values(data: dict[str, Any], console: Console | None = None) -> None:
    """Data that is not rows, as `key: value` lines; a nested object or list as an indented tree."""
    lines: list[str] = []

    def walk(value: Any, key: str, depth: int) -> None:
        pad = "  " * depth
        # A reference ({eid, name}) reads back as its name, as in a table.
        if isinstance(value, dict) and value and not set(value) <= {"eid", "name"}:
            lines.append(f"{pad}{key}:")
            for k, v in value.items():
                walk(v, str(k), depth + 1)
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            lines.append(f"{pad}{key}:")
            for i, v in enumerate(value, 1):
                walk(v, str(i), depth + 1)
        elif isinstance(value, list):
            lines.append(f"{pad}{key}: {', '.join(_cell(v) for v in value)}")
        else:
            lines.append(f"{pad}{key}: {_cell(value)}")

    for key, value in data.items():
        walk(value, str(key), 0)
    (console or terminal()).print(Text("\n".join(lines)), soft_wrap=True)


def command_answer(text: str, data: dict[str, Any], console: Console | None = None) -> None:
    """A code command's answer as the console formats it (the registry's "return data, not
    text"): its text, when it has one; then its data's plain values as `key: value` lines
    or a tree (only without a text, which said them already), and each list of objects
    as a table under its key (`rows` needs none), which no line of text could carry."""
    out = console or terminal()
    if text:
        out.print(Text(text), soft_wrap=True)
    tables = {
        key: value
        for key, value in data.items()
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
    }
    values = {key: value for key, value in data.items() if key not in tables}
    if values and not text:
        key_values(values, out)
    for key, rows in tables.items():
        if key != "rows":
            out.print(Text(f"{key}:", style="bold"))
        rows_table(rows, out)


def audit_table(
    records: Sequence[dict[str, Any]], *, apps: bool, console: Console | None = None
) -> None:
    """The audit's records, oldest first: when, who, how they came, what ran, how it went.
    On a terminal too narrow for its nine columns (where each would fold to a stack of
    fragments and the call's id be cut off), each record as two lines, its id first."""
    out = console or terminal()
    if out.width < _AUDIT_WIDEST:
        _audit_records(records, apps=apps, console=out)
        return
    table = Table(show_edge=False, header_style="bold")
    # When and who stay whole; the rest wraps, and a refusal's sentence is given the room.
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("who", no_wrap=True)
    for name in ("door", "via", *(("app",) if apps else ()), "what"):
        table.add_column(name)
    table.add_column("args", min_width=10)
    table.add_column("outcome", min_width=18, ratio=1)
    table.add_column("ms", justify="right", no_wrap=True)
    table.add_column("call (pasture undo CALL)", no_wrap=True)  # what undo takes
    for r in records:
        what = f"{r['action']} {r['command']}" if r.get("command") else str(r["action"])
        cells = [str(r["at"])[:19].replace("T", " "), r.get("name") or "nobody"]
        cells += [r.get("door") or "—", r.get("via") or "—"]
        if apps:
            cells.append(r.get("app") or "—")
        cells += [what, r.get("args") or "", str(r["outcome"]), f"{float(r['ms']):.1f}"]
        cells.append(r.get("call") or "—")
        table.add_row(*cells)
    out.print(table)


# below this many columns the audit's table is unreadable: its records are printed as lines
_AUDIT_WIDEST = 140


def _audit_records(records: Sequence[dict[str, Any]], *, apps: bool, console: Console) -> None:
    """`call 3f9a2b1c0d4e  2026-12-03 11:48:54  ada  cli` and, under it, what ran, its
    arguments' shapes, how it went and how long it took; long lines wrap."""
    for r in records:
        what = f"{r['action']} {r['command']}" if r.get("command") else str(r["action"])
        head = [f"call {r.get('call') or '—'}", str(r["at"])[:19].replace("T", " ")]
        head += [r.get("name") or "nobody", r.get("door") or "—"]
        if r.get("via"):
            head.append(str(r["via"]))
        said = [*([str(r.get("app"))] if apps and r.get("app") else []), what]
        if r.get("args"):
            said.append(f"args {r['args']}")
        said += [str(r["outcome"]), f"{float(r['ms']):.1f} ms"]
        console.print(Text("  ".join(head)), soft_wrap=True)
        console.print(Text("  " + " · ".join(said)), soft_wrap=True)


def tools_table(commands: Sequence[dict[str, Any]], console: Console | None = None) -> None:
    """The tools agents are offered (a `commands` listing's entries), app by app: each
    tool's signature (`?` on an optional argument), whether it reads, writes or is hard to
    undo, its title (else what it does), and the view it is drawn in."""
    out = console or terminal()
    if not commands:
        out.print("no tools — deploy an app with commands (pasture deploy DIR)")
        return
    by_app: dict[str, list[dict[str, Any]]] = {}
    for entry in commands:
        by_app.setdefault(_cell(entry.get("at")), []).append(entry)
    for i, (at, listed) in enumerate(by_app.items()):
        out.print(("\n" if i else "") + f"## {at} — {_cell(listed[0].get('title'))}")
        table = Table(show_edge=False, header_style="bold", box=None)
        table.add_column("tool", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("title, or what it does")
        viewed = any(e.get("view") for e in listed)
        if viewed:
            table.add_column("view", no_wrap=True)
        for entry in listed:
            args = ", ".join(arguments_of(entry))
            kind = kind_of(entry)
            said = _cell(entry.get("commandTitle") or entry.get("description"))
            cells = [f"{_cell(entry.get('name'))}({args})", kind, said]
            table.add_row(*cells, *([_cell(entry.get("view"))] if viewed else []))
        out.print(table)
