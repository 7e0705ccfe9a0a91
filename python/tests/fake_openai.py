"""A loopback OpenAI-compatible Chat Completions server for the tests and the
examples: no network, no model, deterministic.

It answers the way a cooperative model under groundcite's contract would:
it finds the numbered passages (``[n] text``) in the messages, picks the
one sharing the most words with the question, and replies with that
passage's first sentence and its marker. With no passage sharing a word it
replies with the refusal sentence. A ``response_format`` with a JSON schema
gets the structured form (``{"sentences": [...], "refusal": null}``).

``bad_id`` mode cites a passage number one past the last (an id never
sent), to exercise regeneration; ``trailing_bad_id`` answers with a good
sentence and then one citing an id never sent (a streamed answer shows the
first, then must withdraw it); ``hold`` keeps every request waiting until
the test releases it.

Run on its own (for the examples): ``python tests/fake_openai.py [PORT]``
prints ``http://127.0.0.1:PORT/v1`` and serves until killed.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL = "Not covered by the provided documents."
PASSAGE = re.compile(r"^\[(\d+)\] (.+?)(?=\n\n\[\d+\] |\Z)", re.M | re.S)
WORD = re.compile(r"[a-z0-9]+")
STOP = set("a an the of to in on for and or is are do does how what when who which my i we you it be can".split())


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 2}


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"^#+ ", "", text)
    m = re.search(r"(?<=[.!?])\s", text)
    sentence = text[: m.start()] if m else text
    return sentence.rstrip(".!?")


def reply_for(messages: list[dict[str, Any]], bad_id: bool) -> tuple[str | None, int, int]:
    """(first sentence of the best passage, its number, how many passages
    were sent), or (None, 0, n)."""
    whole = "\n\n".join(m.get("content") or "" for m in messages if isinstance(m.get("content"), str))
    passages = [(int(n), t) for n, t in PASSAGE.findall(whole)]
    question = ""
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            question = m["content"].rsplit("Question:", 1)[-1]
            break
    q = words(question)
    best, best_n, best_overlap = None, 0, 0
    for n, text in passages:
        overlap = len(q & words(text))
        if overlap > best_overlap:
            best, best_n, best_overlap = text, n, overlap
    if best is None:
        return None, 0, len(passages)
    if bad_id:
        best_n = len(passages) + 1
    return first_sentence(best), best_n, len(passages)


class Handler(BaseHTTPRequestHandler):
    server: "FakeOpenAI"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        self.server.requests.append(body)
        if self.server.hold is not None:
            self.server.hold.wait(30)  # until the test lets it answer
        sentence, n, sent = reply_for(body.get("messages", []), self.server.bad_id)
        fmt = body.get("response_format") or {}
        if fmt.get("type") in ("json_schema", "json_object"):
            if sentence is None:
                content = json.dumps({"sentences": [], "refusal": {"needed": "a passage on this"}})
            else:
                content = json.dumps({"sentences": [{"text": sentence + ".", "citations": [n]}], "refusal": None})
        else:
            content = REFUSAL if sentence is None else f"{sentence} [{n}]."
            if sentence is not None and self.server.trailing_bad_id and len(self.server.requests) == 1:
                content += f" It was confirmed by the finance team [{sent + 1}]."
        if body.get("stream"):
            self._stream(content, body.get("model", "fake"))
            return
        self._send(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            },
        )

    def _stream(self, content: str, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        pieces = re.findall(r"\S+\s*", content)
        for i, piece in enumerate(pieces):
            chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        done = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())


class FakeOpenAI(ThreadingHTTPServer):
    """``with FakeOpenAI() as server: server.base_url`` serves on a free
    loopback port in a thread; ``requests`` holds every request body."""

    daemon_threads = True

    def __init__(
        self, port: int = 0, bad_id: bool = False, trailing_bad_id: bool = False, hold: bool = False
    ) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.requests: list[dict[str, Any]] = []
        # With `hold`, every request waits until `hold.set()`.
        self.hold: threading.Event | None = threading.Event() if hold else None
        self.bad_id = bad_id
        self.trailing_bad_id = trailing_bad_id
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()


if __name__ == "__main__":
    server = FakeOpenAI(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(server.base_url, flush=True)
    server.serve_forever()
