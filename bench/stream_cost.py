#!/usr/bin/env python3
"""Streaming cost with a real model (issue 15): how much later than the
model itself does a user see the first validated sentence?

Run by bench/stream-cost.sh (which starts llama.cpp's OpenAI-compatible
server with SmolLM2-135M-Instruct on loopback, as .ci/llm.sh does, and
builds a release binary); stdlib only.

`groundcite serve` (free-text generation, lexical retrieval, the handbook)
talks to the model through a timing proxy on loopback. For each sampled
dev question that reaches the model, the client asks `POST /v1/ask` with
`stream: true` and notes when the first `sentence` event arrives; the
proxy notes when it received groundcite's request and when each of the
model's streamed deltas arrived (before forwarding it). A sentence event
carries the byte range of the sentence in the model's text, so:

  model's own time to first sentence (TTFS)
      = arrival of the delta that completes the first served sentence's
        bytes - arrival of groundcite's request at the proxy;
  groundcite's time to first validated sentence (TTFVS)
      = first `sentence` event at the client - request sent by the client;
  overhead = TTFVS - TTFS: retrieval, the gate, the prompt, the hold-back
      that waits for a sentence to be complete, validation and support
      checking, and the SSE relay (the proxy's own relay included:
      conservative).

Prints each question and the median overhead as a share of the model's
TTFS (issue 15's target: <= 5%). Exit 1 when no streamed sentence could
be measured. Environment: GROUNDCITE_BIN, BASE_URL, MODEL (from
.ci/llm.sh), SAMPLE (answerable dev questions tried, default 8),
MAX_TOKENS (default 160), REPORT (a JSON file for the figures).
"""

import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
BIN = os.environ["GROUNDCITE_BIN"]
BASE_URL = os.environ.get("BASE_URL", "http://127.0.0.1:8765").rstrip("/")
MODEL = os.environ.get("MODEL", "smollm2")
SAMPLE = int(os.environ.get("SAMPLE", "8"))
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", "160"))
ENV = {k: v for k, v in os.environ.items() if k != "GROUNDCITE_MODEL_DIR"}
ENV.setdefault("GROUNDCITE_TIMEOUT_SECS", "300")


class TimingProxy:
    """Forwards requests to the model server and, for each, records when it
    arrived and when each streamed content delta arrived from upstream,
    with the delta's text."""

    def __init__(self, upstream):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.log = []
        self.lock = threading.Lock()
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
            arrived = time.monotonic()
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
            while len(body) < length:
                body += client.recv(65536)
            path = head.split(b" ")[1].decode()
            record = {"arrived": arrived, "deltas": [], "stream": json.loads(body).get("stream", False)}
            with self.lock:
                self.log.append(record)
            up = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=300)
            up.request("POST", path, body=body, headers={"content-type": "application/json"})
            resp = up.getresponse()
            client.sendall(f"HTTP/1.1 {resp.status} X\r\ncontent-type: {resp.getheader('content-type')}\r\n"
                           "connection: close\r\n\r\n".encode())
            pending = b""
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                now = time.monotonic()
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    line = line.strip()
                    if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
                        try:
                            delta = json.loads(line[5:])["choices"][0].get("delta", {}).get("content") or ""
                        except (ValueError, KeyError, IndexError):
                            delta = ""
                        if delta:
                            record["deltas"].append((now, delta))
                client.sendall(chunk)
            up.close()
        except Exception as e:  # noqa: BLE001 - a bench proxy: report and close
            print(f"proxy: {e}", file=sys.stderr)
        finally:
            client.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_sentence(addr, question):
    """Streams /v1/ask: (seconds to the first sentence event, that event,
    the final result or None)."""
    host, port = addr.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=600)
    started = time.monotonic()
    conn.request("POST", "/v1/ask", body=json.dumps({"question": question, "stream": True}),
                 headers={"content-type": "application/json"})
    resp = conn.getresponse()
    first, at, final, event = None, None, None, None
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data = json.loads(line[5:].strip())
            if event == "sentence" and first is None:
                first, at = data, time.monotonic() - started
            elif event == "retract":
                first, at = None, None
            elif event == "final":
                final = data
    conn.close()
    return at, first, final


def main():
    questions = [json.loads(l) for l in (SHARED / "cases/questions-dev.jsonl").read_text().splitlines() if l.strip()]
    answerable = [q["question"] for q in questions if q["answerable"]]
    sample, warm_up = answerable[:SAMPLE], answerable[-1]
    tmp = Path(tempfile.mkdtemp(prefix="groundcite-stream-cost."))
    index = tmp / "index"
    subprocess.run([BIN, "ingest", "--index", str(index), "--handbook", str(SHARED / "corpora/tts-handbook/pages")],
                   check=True, stdout=subprocess.DEVNULL, env=ENV)
    proxy = TimingProxy(BASE_URL)
    config = tmp / "groundcite.toml"
    config.write_text(
        f'index = "{index}"\n'
        'generator = "openai"\n'
        "demo_on_first_use = false\n"
        "[openai]\n"
        f'base_url = "{proxy.url}"\n'
        f'model = "{MODEL}"\n'
        'structured = "off"\n'
        f"max_tokens = {MAX_TOKENS}\n"
        "timeout_secs = 300\n"
        "max_retries = 0\n"
    )
    addr = f"127.0.0.1:{free_port()}"
    server = subprocess.Popen([BIN, "serve", "--config", str(config), "--addr", addr, "--no-audit"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    rows = []
    try:
        for _ in range(600):
            try:
                with socket.create_connection(("127.0.0.1", int(addr.split(":")[1])), 0.5):
                    break
            except OSError:
                if server.poll() is not None:
                    sys.exit(f"groundcite serve exited: {server.stderr.read()[-2000:]}")
                time.sleep(0.2)
        # One question first, unmeasured and not in the sample (the model
        # server reuses a prompt it has just seen): its first prompt pays
        # for its warm-up.
        first_sentence(addr, warm_up)
        for q in sample:
            before = len(proxy.log)
            ttfvs, sentence, final = first_sentence(addr, q)
            calls = proxy.log[before:]
            if sentence is None or not calls or not calls[0]["stream"]:
                reason = (final or {}).get("refusal", {}) or {}
                print(f"  -        no streamed sentence ({reason.get('reason', 'none shown')}): {q[:70]}")
                continue
            call = calls[0]
            end, text, ttfs = sentence["end"], "", None
            for at, delta in call["deltas"]:
                text += delta
                if len(text.encode()) >= end:
                    ttfs = at - call["arrived"]
                    break
            if ttfs is None:
                print(f"  -        the first sentence's bytes never arrived from the model: {q[:70]}")
                continue
            overhead = ttfvs - ttfs
            rows.append({"question": q, "ttfs_s": ttfs, "ttfvs_s": ttfvs, "overhead_s": overhead,
                         "share": overhead / ttfs, "sentence": sentence["text"]})
            print(f"  model TTFS {ttfs:6.2f} s  groundcite TTFVS {ttfvs:6.2f} s  overhead {overhead * 1000:7.1f} ms "
                  f"({100 * overhead / ttfs:4.1f}%)  {q[:60]}", flush=True)
    finally:
        server.kill()
        server.wait()
    if not rows:
        sys.exit("no streamed sentence could be measured")
    figures = {
        "questions": len(rows),
        "model_ttfs_s_p50": statistics.median(r["ttfs_s"] for r in rows),
        "ttfvs_s_p50": statistics.median(r["ttfvs_s"] for r in rows),
        "overhead_ms_p50": 1000 * statistics.median(r["overhead_s"] for r in rows),
        "overhead_ms_max": 1000 * max(r["overhead_s"] for r in rows),
        "overhead_share_p50": statistics.median(r["share"] for r in rows),
        "overhead_share_max": max(r["share"] for r in rows),
        "rows": rows,
    }
    print(f"\n{len(rows)} questions streamed: model TTFS p50 {figures['model_ttfs_s_p50']:.2f} s, "
          f"first validated sentence p50 {figures['ttfvs_s_p50']:.2f} s; overhead p50 "
          f"{figures['overhead_ms_p50']:.1f} ms ({100 * figures['overhead_share_p50']:.2f}% of the model's TTFS), "
          f"max {figures['overhead_ms_max']:.1f} ms ({100 * figures['overhead_share_max']:.2f}%); target <= 5%")
    if os.environ.get("REPORT"):
        Path(os.environ["REPORT"]).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
