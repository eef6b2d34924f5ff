"""A loopback proxy that adds `Authorization: Bearer …` to every request it forwards.

A client with no option for a header (the MCP conformance suite) reaches a server that
needs a bearer through it: a Starlette app forwarding each request to the real server
with httpx, the answer's body streamed back as it comes (an event stream stays one).
Test-only; it runs on a thread of the test's own process, with uvicorn.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from helpers.processes import free_port

# Hop-by-hop headers, and what the proxy sets itself.
_DROPPED = {"host", "connection", "keep-alive", "transfer-encoding", "content-length"}


def proxy_app(upstream: str, token: str, own: str) -> Starlette:
    """Every request to this app, forwarded to `upstream` (its scheme, host and port) as
    the holder of `token`. A request that names the proxy (`own`, its host and port) as its
    Host names the upstream instead; any other Host goes on as it came, so the server's
    own check of it is what answers."""
    client = httpx.AsyncClient(base_url=upstream, timeout=httpx.Timeout(60, read=None))
    upstream_host = httpx.URL(upstream).netloc.decode()

    async def forward(request: Request) -> StreamingResponse:
        # Whitespace around a value is no part of it (RFC 9110 §5.5), and httpx sends none.
        headers = {k: v.strip() for k, v in request.headers.items() if k.lower() not in _DROPPED}
        headers["authorization"] = f"Bearer {token}"
        host = request.headers.get("host", own)
        headers["host"] = upstream_host if host == own else host
        sent = client.build_request(
            request.method,
            request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            headers=headers,
            content=await request.body(),
        )
        answer = await client.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in _DROPPED}

        async def body() -> AsyncIterator[bytes]:
            async for chunk in answer.aiter_raw():
                yield chunk

        return StreamingResponse(
            body(), answer.status_code, kept, background=BackgroundTask(answer.aclose)
        )

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


@contextmanager
def bearer_proxy(upstream: str, token: str) -> Iterator[str]:
    """The proxy on a free loopback port until the block ends; its address."""
    port = free_port()
    own = f"127.0.0.1:{port}"
    config = uvicorn.Config(
        proxy_app(upstream, token, own), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the bearer proxy did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
