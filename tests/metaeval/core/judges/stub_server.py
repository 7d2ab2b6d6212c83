"""A local OpenAI-compatible chat-completions stub on 127.0.0.1 (port 0) for the judge tests.

By default it prefers the text containing ``GOOD``: it answers ``A`` when ``GOOD`` comes before ``BAD`` in the
user message (so Text A is the good one) and ``B`` otherwise. ``script`` holds behaviours used, one per request,
before the default: ``("status", code, headers, body)``, ``("sleep", seconds)`` (then the default answer),
``("raw", body)`` (HTTP 200 with that body), ``("answer", text)``.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Stub:
    def __init__(self) -> None:
        self.script: deque[tuple[Any, ...]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                payload = json.loads(body)
                with stub.lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers), "json": payload})
                    step = stub.script.popleft() if stub.script else ("default",)
                try:
                    stub.respond(self, step, payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def default_answer(payload: dict[str, Any]) -> str:
        user = payload["messages"][-1]["content"]
        return "A" if user.index("GOOD") < user.index("BAD") else "B"

    def respond(self, handler: BaseHTTPRequestHandler, step: tuple[Any, ...], payload: dict[str, Any]) -> None:
        kind = step[0]
        if kind == "status":
            _, code, headers, body = step
            self.send(handler, code, body, headers)
            return
        if kind == "raw":
            self.send(handler, 200, step[1], {})
            return
        if kind == "sleep":
            time.sleep(step[1])
        text = step[1] if kind == "answer" else self.default_answer(payload)
        reply = {"id": "x", "object": "chat.completion",
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        self.send(handler, 200, json.dumps(reply), {"Content-Type": "application/json"})

    @staticmethod
    def send(handler: BaseHTTPRequestHandler, code: int, body: str, headers: dict[str, str]) -> None:
        data = body.encode()
        handler.send_response(code)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
