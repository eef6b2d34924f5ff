"""Todos, written as handlers: each person's own list, for them and for their agents.

`todos` (a query), `set_todo_done` and `clear_done` (mutations; the last is
consequential: hard to undo) are tagged as tools: an agent
calls them over MCP (`command`), in the page through WebMCP, and a person at the
command line. `add_todo` is not: only the app's own page calls it, with
`call("add_todo", {text})` from `./api/client.js`. Whoever calls is
`ctx.auth`, never an argument: each person sees and changes their own todos.
"""

from __future__ import annotations

from typing import Any

from pasture import Refused, boolean, id, mutation, query

MAX_TEXT = 500


def shown(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["entity"]["eid"],
        "text": row["todo"]["text"],
        "done": bool(row["todo"]["done"]),
    }


@query(
    tool={
        "description": "List the current user's todos, newest first. Each has id, text, and done.",
        "title": "Your todos",
    }
)
def todos(ctx):
    me = ctx.auth.require_identity()
    rows = ctx.store.query(f".todo.owner={me.user_id}&.todo!")
    return [shown(row) for row in reversed(rows)]


@mutation(
    tool={
        "description": "Mark one of the current user's todos done or not done. "
        "Get todo ids from the todos tool.",
        "title": "Mark a todo done",
        "args": {"todo_id": id("todo"), "done": boolean()},
    }
)
def set_todo_done(ctx, args):
    me = ctx.auth.require_identity()
    todo_id, done = args.get("todo_id"), args.get("done")
    # The page's calls are not checked against the args above: this handler checks its own.
    if not isinstance(todo_id, str) or not isinstance(done, bool):
        raise Refused("set_todo_done takes a todo_id (text) and done (true or false)")
    found = ctx.store.query(f"id={todo_id}&.todo!") if todo_id.isalnum() else []
    if not found or found[0]["todo"]["owner"] != me.user_id:
        raise Refused("Todo not found.")
    ctx.store.apply({"entity": found[0]["entity"], "todo": {"done": done}})
    return {"id": todo_id, "done": done}


@mutation(
    tool={
        "description": "Delete the current user's todos that are done; says how many went.",
        "title": "Clear done todos",
        "consequential": True,
    }
)
def clear_done(ctx):
    me = ctx.auth.require_identity()
    done = ctx.store.query(f".todo.owner={me.user_id}&.todo.done=true&.todo!")
    with ctx.store.batch():  # all of them or none
        for row in done:
            ctx.store.apply({"entity": row["entity"], "tombstone": {}})
    return {
        "text": f"cleared {len(done)} done todo{'' if len(done) == 1 else 's'}",
        "data": {"cleared": len(done)},
    }


@mutation
def add_todo(ctx, args):
    """Not a tool: the page adds todos; an agent only lists them and marks them done."""
    me = ctx.auth.require_identity()
    text = args.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise Refused(f"a todo is some text, at most {MAX_TEXT} characters")
    applied = ctx.store.apply(
        {
            "entity": {"eid": "$todo"},
            "todo": {"text": text.strip(), "done": False, "owner": me.user_id},
        }
    )
    return {"id": applied.entities[0], "text": text.strip(), "done": False}
