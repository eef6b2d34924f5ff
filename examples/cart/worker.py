"""The cart's commands, written as Python: cart add, cart remove, cart clear, cart status.

pasture runs this file in a worker process of the app's own (it is never
served on the web) and calls `setup` with the app's registry. Each command's
input is a JSON Schema, checked before its function runs; the function gets
the checked arguments and a context: `ctx.store` is the app's store as the
person who called (every read and write is theirs, with their rights),
`ctx.caller` who that is, `ctx.at` the app (`space/app`).
"""

from __future__ import annotations

from typing import Any

from pasture import Context, Refused, Registry, Result

SKU = {
    "type": "string",
    "description": "The product code, e.g. V60-02",
    "pattern": "^[A-Za-z0-9][A-Za-z0-9-]*$",
    "maxLength": 40,
}


def lines(ctx: Context) -> list[dict[str, Any]]:
    """What is in the cart: one row per product, oldest first."""
    return ctx.store.query(".line!")


def line_of(ctx: Context, sku: str) -> dict[str, Any] | None:
    """The cart's line for one product, found by the store, not by reading every line."""
    # A SKU is letters, digits and dashes (its schema's pattern), so it needs no quoting.
    found = ctx.store.query(f".line.sku={sku}&limit=1")
    return found[0] if found else None


def add(args: dict[str, Any], ctx: Context) -> Result:
    sku, qty = args["sku"], args["qty"]
    row = line_of(ctx, sku)
    if row is None:
        ctx.store.apply({"entity": {"eid": "$line"}, "line": {"sku": sku, "qty": qty}})
        total = qty
    else:
        total = int(row["line"]["qty"]) + qty
        ctx.store.apply({"entity": row["entity"], "line": {"qty": total}})
    return Result(f"Added {qty} × {sku}; {total} in the cart.", {"sku": sku, "qty": total})


def remove(args: dict[str, Any], ctx: Context) -> Result:
    sku = args["sku"]
    row = line_of(ctx, sku)
    if row is None:
        raise Refused(f"{sku} is not in the cart — cart status lists what is")
    had = int(row["line"]["qty"])
    left = max(had - args["qty"], 0) if "qty" in args else 0
    if left:
        ctx.store.apply({"entity": row["entity"], "line": {"qty": left}})
        return Result(f"Removed {had - left} × {sku}; {left} left.", {"sku": sku, "qty": left})
    ctx.store.apply({"entity": row["entity"], "tombstone": {}})
    return Result(f"Removed {sku} from the cart.", {"sku": sku, "qty": 0})


def clear(args: dict[str, Any], ctx: Context) -> Result:
    found = lines(ctx)
    with ctx.store.batch():  # one transaction: the whole cart is emptied, or none of it
        for row in found:
            ctx.store.apply({"entity": row["entity"], "tombstone": {}})
    products = "product" if len(found) == 1 else "products"
    return Result(f"Emptied the cart: {len(found)} {products} taken out.", {"removed": len(found)})


def status(args: dict[str, Any], ctx: Context) -> Result:
    found = [{"sku": r["line"]["sku"], "qty": int(r["line"]["qty"])} for r in lines(ctx)]
    count = sum(line["qty"] for line in found)
    if not found:
        return Result("the cart is empty", {"count": 0, "lines": []})
    products = "product" if len(found) == 1 else "products"
    items = "item" if count == 1 else "items"
    return Result(f"{count} {items} of {len(found)} {products}", {"count": count, "lines": found})


def setup(app: Registry) -> None:
    app.register(
        "cart add",
        title="Add to the cart",
        description="Add a product to the cart, or more of one already in it",
        input={
            "type": "object",
            "properties": {
                "sku": SKU,
                "qty": {"type": "integer", "minimum": 1, "maximum": 99, "default": 1},
            },
            "required": ["sku"],
        },
        positional=["sku", "qty"],
        annotations={},
        examples=["cart add V60-02 --qty=2"],
        see_also=["cart remove", "cart status"],
        run=add,
    )
    app.register(
        "cart remove",
        title="Take out of the cart",
        description="Take a product out of the cart: all of it, or qty of it",
        input={
            "type": "object",
            "properties": {"sku": SKU, "qty": {"type": "integer", "minimum": 1}},
            "required": ["sku"],
        },
        positional=["sku", "qty"],
        annotations={},
        examples=["cart remove V60-02", "cart remove V60-02 1"],
        see_also=["cart add", "cart status"],
        run=remove,
    )
    app.register(
        "cart clear",
        title="Empty the cart",
        description="Take everything out of the cart",
        # Hard to undo: a person is asked first, an agent's client sees it in the listing.
        annotations={"consequential": True},
        see_also=["cart remove", "cart status"],
        run=clear,
    )
    app.register(
        "cart status",
        description="What is in the cart: how many items, and of which products",
        annotations={"readOnly": True},
        see_also=["cart add"],
        run=status,
    )
