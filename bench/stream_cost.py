#!/usr/bin/env python3
"""Streaming cost with a real model: how much later than the
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
TTFS (the target: <= 5%). Exit 1 when no streamed sentence could
be measured. Environment: GROUNDCITE_BIN, BASE_URL, MODEL (from
.ci/llm.sh), SAMPLE (answerable dev questions tried, default 8),
MAX_TOKENS (default 160), REPORT (a JSON file for the figures).
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, LoopbackProxy, free_port, model_run  # noqa: E402

BIN, BASE_URL, MODEL, ENV = model_run()
SAMPLE = int(os.environ.get("SAMPLE", "8"))
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", "160"))


class TimingProxy(LoopbackProxy):
    """Forwards requests to the model server and, for each, records when it
    arrived and when each streamed content delta arrived from upstream,
    with the delta's text."""

    def __init__(self, upstream):
        self.log = []
        self.lock = threading.Lock()
        self.started = threading.local()
        super().__init__(upstream)

    def arrived(self, at):
        self.started.at = at

    def relay(self, client, resp, body):
        record = {"arrived": self.started.at, "deltas": [], "stream": json.loads(body).get("stream", False)}
        with self.lock:
            self.log.append(record)
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
