#!/usr/bin/env python3
"""How `groundcite serve` holds up against slow and heavy clients, on
loopback, bounded in time and count:

1. slow: N connections (default 300) each sending its request head one byte
   a second, for D seconds (default 15): how many the server closed, and
   /healthz's latency (p50, max) probed every 0.5 s meanwhile;
2. heavy: 8 clients posting 65,536-byte checks back to back for D seconds:
   /healthz's latency (p50, max) meanwhile, and the checks answered.

Usage: bench/connections.py BINARY [N] [D]
(BINARY: a groundcite binary; the server is started on a free port with
GROUNDCITE_AUDIT_PATH=off over a one-page index in a temporary folder.)
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

binary = sys.argv[1]
n_slow = int(sys.argv[2]) if len(sys.argv) > 2 else 300
duration = float(sys.argv[3]) if len(sys.argv) > 3 else 15.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port = free_port()
env = dict(os.environ, GROUNDCITE_AUDIT_PATH="off", RUST_LOG="error")
work = tempfile.TemporaryDirectory()
docs, index = os.path.join(work.name, "docs"), os.path.join(work.name, "index")
os.makedirs(docs)
with open(os.path.join(docs, "refunds.md"), "w") as f:
    f.write("# Refunds\n\nRefunds of travel expenses take 30 days from the date of approval.\n")
subprocess.run([binary, "ingest", "--index", index, docs], env=env, check=True,
               stdout=subprocess.DEVNULL)
server = subprocess.Popen(
    [binary, "serve", "--addr", f"127.0.0.1:{port}", "--index", index],
    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def request(raw, timeout=10.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


def healthz():
    start = time.monotonic()
    try:
        reply = request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10.0)
        ok = reply.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return time.monotonic() - start, ok


def probe(stop, out):
    while not stop.is_set():
        out.append(healthz())
        time.sleep(0.5)


def summary(samples):
    times = [t for t, _ in samples]
    failed = sum(1 for _, ok in samples if not ok)
    return f"/healthz p50 {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms, {failed} failed of {len(samples)}"


try:
    for _ in range(100):
        try:
            if healthz()[1]:
                break
        except OSError:
            pass
        time.sleep(0.1)

    # 1. slow clients
    socks = []
    for _ in range(n_slow):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
            s.setblocking(False)
            socks.append(s)
        except OSError:
            break
    stop, samples = threading.Event(), []
    t = threading.Thread(target=probe, args=(stop, samples))
    t.start()
    end = time.monotonic() + duration
    closed = set()
    while time.monotonic() < end:
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                s.send(b"a")
                if s.recv(4096) == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        time.sleep(1.0)
    stop.set()
    t.join()
    print(f"slow: {len(socks)} clients dripping a header byte a second for {duration:.0f} s: "
          f"{len(closed)} closed by the server; {summary(samples)}")
    for s in socks:
        s.close()

    # 2. heavy checks
    passage = "Refunds of travel expenses take 30 days from the date of approval. "
    answer = "".join(f"Refunds take {k} days [1]. " for k in range(400))
    body = {"passages": [{"id": "p1", "text": ""}], "answer": answer}
    fill = 65536 - len(json.dumps(body))
    body["passages"][0]["text"] = (passage * (fill // len(passage) + 1))[:fill]
    data = json.dumps(body).encode()
    raw = (f"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode() + data
    stop, samples, answered = threading.Event(), [], []

    def client():
        while not stop.is_set():
            try:
                if request(raw, 60.0).startswith(b"HTTP/1.1 200"):
                    answered.append(1)
            except OSError:
                pass

    clients = [threading.Thread(target=client) for _ in range(8)]
    for c in clients:
        c.start()
    time.sleep(1.0)
    t = threading.Thread(target=probe, args=(stop, samples))
    t.start()
    time.sleep(duration)
    stop.set()
    t.join()
    for c in clients:
        c.join()
    print(f"heavy: 8 clients posting {len(data)}-byte checks for {duration:.0f} s: "
          f"{len(answered)} answered; {summary(samples)}")
finally:
    server.terminate()
    server.wait(timeout=30)
    work.cleanup()
