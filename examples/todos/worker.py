"""Todos, as the agent-tools document writes them: each person's own list, for them and for
their agents.

The table is declared here (`schema`), with an index by owner, so the list reads newest
first by the index rather than by sorting. `todos` (a query), `set_todo_done` and
`clear_done` (mutations; the last is consequential: hard to undo) are tagged as tools: an
agent calls them over MCP (`command`), in the page through WebMCP, and a person at the
command line. `add_todo` is not: only the app's own page calls it, with
`call("add_todo", {text})` from `./api/client.js`. Whoever calls is `ctx.auth`, never an
argument: each person sees and changes their own todos. A mutation's writes are one
transaction: kept only when it answers.
"""

from __future__ import annotations

from pasture import Refused, boolean, id, mutation, query, string, table, user_id

MAX_TEXT = 500

schema = {
    "todos": table(text=string(), done=boolean().default(False), owner=user_id()).index(
        "by_owner", ["owner"]
    ),
}


def mine(ctx, me):
    """The caller's todos, newest first, by the index."""
    return ctx.db.todos.with_index("by_owner", lambda q: q.eq("owner", me.user_id)).order("desc")


@query(
    tool={
        "description": "List the current user's todos, newest first. Each has id, text, and done.",
        "title": "Your todos",
    }
)
def todos(ctx):
    me = ctx.auth.require_identity()
    return mine(ctx, me).collect()


@mutation(
    tool={
        "description": "Mark one of the current user's todos done or not done. "
        "Get todo ids from the todos tool.",
        "title": "Mark a todo done",
        "args": {"todo_id": id("todos"), "done": boolean()},
    }
)
def set_todo_done(ctx, args):
    me = ctx.auth.require_identity()
    todo_id, done = args.get("todo_id"), args.get("done")
    # The page's calls are not checked against the args above: this handler checks its own.
    if not isinstance(todo_id, str) or not isinstance(done, bool):
        raise Refused("set_todo_done takes a todo_id (text) and done (true or false)")
    todo = ctx.db.todos.get(todo_id)
    if todo is None or todo["owner"] != me.user_id:
        raise Refused("Todo not found.")
    ctx.db.todos.update(todo_id, {"done": done})
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
    done = mine(ctx, me).filter(lambda q: q.eq("done", True)).collect()
    for todo in done:  # one transaction: all of them or none
        ctx.db.todos.delete(todo["id"])
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
    todo_id = ctx.db.todos.insert({"text": text.strip(), "owner": me.user_id})
    return ctx.db.todos.get(todo_id)
