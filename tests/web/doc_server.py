"""An HTTPS server on loopback that serves OAuth clients' metadata documents, for tests.

Its certificate is issued by a certificate authority made for the test
(`trustme`); point `SSL_CERT_FILE` at `ca_file` and OpenSSL trusts it.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Documents:
    """The running server: `url(path)` addresses a document, `answers[path]` is what it
    answers, `asked` every path asked for, in order."""

    base: str
    ca_file: Path
    answers: dict[str, Answer] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def document(self, path: str, **fields: Any) -> str:
        """Serve a client's document at `path` naming itself; its address."""
        url = self.url(path)
        self.answers[path] = Answer(body=json.dumps({"client_id": url, **fields}).encode())
        return url


@contextmanager
def serving(tmp_path: Path, host: str = "127.0.0.1") -> Iterator[Documents]:
    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)

    docs: Documents

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            docs.asked.append(self.path)
            answer = docs.answers.get(self.path, Answer(404, b"{}"))
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    docs = Documents(f"https://127.0.0.1:{server.server_address[1]}", ca_file)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield docs
    finally:
        server.shutdown()
        server.server_close()
