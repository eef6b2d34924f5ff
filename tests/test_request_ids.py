"""A request's id (`pasture.request_ids`): one a request, its person once known, and an id of
its own for a fault met outside any request."""

from __future__ import annotations

import contextvars
import re

from pasture import request_ids


def test_each_request_has_an_id_of_its_own_and_none_outside() -> None:
    assert request_ids.current() is None
    first, token = request_ids.begin()
    assert re.fullmatch(r"[0-9a-f]{8}", first.id)
    assert request_ids.current() == request_ids.fault_id() == first.id
    request_ids.named("ada")
    request_ids.named(None)  # nobody, once found, does not forget who was
    assert first.person == "ada"
    request_ids.end(token)
    assert request_ids.current() is None
    second, token = request_ids.begin()
    request_ids.end(token)
    assert second.id != first.id and second.person is None


def test_a_fault_outside_any_request_is_given_an_id_it_keeps() -> None:
    def outside() -> tuple[str, str, str | None]:
        fault = request_ids.fault_id()
        return fault, request_ids.fault_id(), request_ids.current()

    fault, again, current = contextvars.copy_context().run(outside)
    assert fault == again == current
    assert re.fullmatch(r"[0-9a-f]{8}", fault)
    assert request_ids.current() is None  # only in the context that met it
