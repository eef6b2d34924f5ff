"""The MCP connector: a fixed tool list for every agent, views as MCP Apps resources.

Two transports over one server (`build_server`): stdio for `pasture mcp`
(`run_stdio`, acting as one caller for the life of the process) and
streamable HTTP at `/mcp` on `pasture serve`, which the web door serves
(`pasture.web.mcp_http`, the caller named by each request's bearer token, a
`commands` call asked again answered from `Replies`). Both protocol generations
the SDK serves are answered: the initialize handshake and the newest. This
door names no other.

A registry served on its own, with no platform, is this door too
(`build_registry_server`, `serve_registry` on stdio, `registry_app` and
`serve_registry_http` over streamable HTTP): each command its own tool. Names are
loaded on first use, so serving a registry never loads the platform.

`text_of` is an answer's text as a tool's answer carries it (its sentence, then its
data as compact JSON): the web door's WebMCP tools answer with the same. `unheard`: the
HTTP door's JSON replies carry no log line, so none is made for them.
"""

from __future__ import annotations

from pasture._lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pasture.mcp._call_log import unheard
    from pasture.mcp._registry_http import registry_app, serve_registry_http
    from pasture.mcp._registry_server import build_registry_server, serve_registry
    from pasture.mcp._replies import Replies, may_ask
    from pasture.mcp._server import NO_RESOURCE, build_server, run_stdio
    from pasture.mcp._tool_results import text_of
    from pasture.mcp._tools import RELEASE, TOOL_NAMES, TOOLS

_SERVER = "pasture.mcp._server"
__getattr__ = lazy_names(
    globals(),
    {
        "NO_RESOURCE": _SERVER,
        "build_server": _SERVER,
        "run_stdio": _SERVER,
        "RELEASE": "pasture.mcp._tools",
        "TOOLS": "pasture.mcp._tools",
        "TOOL_NAMES": "pasture.mcp._tools",
        "Replies": "pasture.mcp._replies",
        "may_ask": "pasture.mcp._replies",
        "build_registry_server": "pasture.mcp._registry_server",
        "serve_registry": "pasture.mcp._registry_server",
        "registry_app": "pasture.mcp._registry_http",
        "serve_registry_http": "pasture.mcp._registry_http",
        "text_of": "pasture.mcp._tool_results",
        "unheard": "pasture.mcp._call_log",
    },
)

__all__ = [
    "NO_RESOURCE",
    "RELEASE",
    "TOOLS",
    "TOOL_NAMES",
    "Replies",
    "build_registry_server",
    "build_server",
    "may_ask",
    "registry_app",
    "run_stdio",
    "serve_registry",
    "serve_registry_http",
    "text_of",
    "unheard",
]
