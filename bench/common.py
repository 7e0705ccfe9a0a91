"""Helpers shared by the bench/ scripts (stdlib only): a free loopback
port, a GET on loopback, waiting for a server's /readyz, and a loopback
proxy in front of a model server."""

import http.client
import os
import re
import socket
import sys
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def free_port():
    """A TCP port free on 127.0.0.1 right now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path, timeout=5):
    """GET `path` on 127.0.0.1:`port`: (status, body as text)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def wait_ready(port, proc, name="the server", seconds=60):
    """Waits until `proc`, listening on `port`, answers /readyz with 200;
    exits the script if it dies or is not ready in time."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode}")
        try:
            if get(port, "/readyz", timeout=1)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{name} was not ready after {seconds} s")


class LoopbackProxy:
    """A proxy on 127.0.0.1 in front of the model server at `upstream`: for
    each request (a POST with a body), `relay(client, resp, body)` sends
    the upstream response `resp` (to the request's `body`) on to the
    `client` socket, as the subclass sees fit. `self.url` is its address."""

    def __init__(self, upstream):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(client,), daemon=True).start()

    def handle(self, client):
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                data += client.recv(65536)
            self.arrived(time.monotonic())
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
            while len(body) < length:
                body += client.recv(65536)
            path = head.split(b" ")[1].decode()
            up = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=300)
            up.request("POST", path, body=body, headers={"content-type": "application/json"})
            resp = up.getresponse()
            client.sendall(f"HTTP/1.1 {resp.status} X\r\ncontent-type: {resp.getheader('content-type')}\r\n"
                           "connection: close\r\n\r\n".encode())
            self.relay(client, resp, body)
            up.close()
        except Exception as e:  # noqa: BLE001 - a bench proxy: report and close
            print(f"proxy: {e}", file=sys.stderr)
        finally:
            client.close()

    def arrived(self, at):
        """Called when a request's head arrived (monotonic seconds)."""

    def relay(self, client, resp, body):
        raise NotImplementedError


def model_run():
    """What the scripts .ci/llm.sh runs share: the groundcite binary
    (GROUNDCITE_BIN), the model server's BASE_URL and MODEL, and the
    environment for groundcite: GROUNDCITE_MODEL_DIR=off (lexical
    retrieval, so the handbook ingests in a second and the figures are the
    generator's) and with a 300 s timeout (a small CPU model with one
    regeneration can take over the default 60 s)."""
    env = dict(os.environ, GROUNDCITE_MODEL_DIR="off")
    env.setdefault("GROUNDCITE_TIMEOUT_SECS", "300")
    return (
        os.environ["GROUNDCITE_BIN"],
        os.environ.get("BASE_URL", "http://127.0.0.1:8765").rstrip("/"),
        os.environ.get("MODEL", "smollm2"),
        env,
    )

