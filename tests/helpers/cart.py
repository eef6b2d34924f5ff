"""A registry with a provider of its own (a page's cart): `cart add` and `cart status`."""

from __future__ import annotations

from typing import Any

from pasture import Registry, Result
from pasture.commands.model import Context

ADD_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "description": "Product code"},
        "qty": {"type": "integer", "minimum": 1, "default": 1},
    },
    "required": ["sku"],
}


class Cart:
    """A provider with state of its own, as a page's cart would be."""

    def __init__(self) -> None:
        self.lines: dict[str, int] = {}

    def add(self, args: dict[str, Any], ctx: Context) -> Result:
        self.lines[args["sku"]] = self.lines.get(args["sku"], 0) + args["qty"]
        return Result(f"Added {args['qty']} × {args['sku']}.", {"count": self.count})

    def status(self, args: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"text": f"{self.count} items", "data": {"count": self.count}}

    @property
    def count(self) -> int:
        return sum(self.lines.values())


def cart_registry() -> tuple[Registry, Cart]:
    registry, cart = Registry(), Cart()
    registry.register(
        "cart add",
        title="Add to the cart",
        description="Add a product to the cart",
        input=ADD_INPUT,
        positional=["sku", "qty"],
        annotations={},
        examples=["cart add V60-02 --qty=2"],
        see_also=["cart status"],
        run=cart.add,
    )
    registry.register(
        "cart status",
        description="What is in the cart",
        annotations={"readOnly": True},
        run=cart.status,
    )
    return registry, cart
