"""Helpers shared by the bench/ load scripts (stdlib only): a free loopback
port, a GET on loopback, and waiting for a server's /readyz."""

import http.client
import socket
import time


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
