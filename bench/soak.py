#!/usr/bin/env python3
"""A bounded soak of one `groundcite serve` on loopback.

Run by bench/soak.sh (which builds the binary); stdlib only.

64 client threads (CLIENTS) for DURATION seconds send a mix of requests:
valid asks and checks, near-limit checks (4,000 markers: served), over-limit
checks (5,000 markers: 422), malformed JSON (400), a body over the 1 MiB limit
(413), a bad route (404). The server writes its audit log to a SQLite file.

Checks, exit status 1 if any fails:
- 0 internal errors (no 5xx) and every response has the status its kind expects;
- the server's resident memory at the end is within 20% of its level after
  the warm-up (the first quarter of the run);
- every answer or check served (200) has exactly one audit record, matched
  by its x-request-id, and there is no other record.
Prints requests, p50/p99 latency per kind, and the memory samples.
"""

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from common import free_port, wait_ready

BIN = os.environ["GROUNDCITE_BIN"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURATION = float(os.environ.get("DURATION", "30"))
CLIENTS = int(os.environ.get("CLIENTS", "64"))

PASSAGES = [
    {"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense."},
    {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval."},
]


def check_body(answer):
    return json.dumps({"question": "How long does reimbursement take?",
                       "passages": PASSAGES, "answer": answer})


KINDS = [
    # (name, path, body, expected status, audited when 200)
    ("ask", "/v1/ask", json.dumps({"question": "How long does reimbursement take?"}), 200, True),
    ("ask-off-topic", "/v1/ask", json.dumps({"question": "What is the capital of Mongolia?"}), 200, True),
    ("check", "/v1/check", check_body("Reimbursements settle in 14 days [2]. Claims are filed within 60 days [1]."), 200, True),
    ("check-near-limit", "/v1/check", check_body("Reimbursements settle within 30 days " + "[2]" * 4000 + "."), 200, True),
    ("check-over-limit", "/v1/check", check_body("Reimbursements settle within 30 days " + "[2]" * 5000 + "."), 422, False),
    ("malformed", "/v1/check", '{"answer": ', 400, False),
    ("too-large", "/v1/check", check_body("x" * (1024 * 1024 + 10)), 413, False),
    ("no-route", "/v1/nothing", "{}", 404, False),
]


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def client(port, start, stop, results, lock, stale):
    conn = None
    i = start
    mine = []
    while not stop.is_set():
        name, path, body, expected, audited = KINDS[i % len(KINDS)]
        i += 1
        t = time.monotonic()
        status, rid = None, None
        # A kept-alive connection the server closed between two requests
        # fails before any response: like any HTTP client, send once more
        # on a fresh connection (counted; the audit check below shows the
        # server never received the first). A failure on a fresh
        # connection is a dropped request.
        for attempt in range(2):
            reused = conn is not None
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("POST", path, body, {"content-type": "application/json"})
                r = conn.getresponse()
                r.read()
                status, rid = r.status, r.getheader("x-request-id")
                if r.getheader("connection", "").lower() == "close":
                    conn.close()
                    conn = None
                break
            except (OSError, http.client.HTTPException):
                if conn is not None:
                    conn.close()
                conn = None
                if not reused:
                    break
                with lock:
                    stale[0] += 1
        mine.append((name, expected, audited, status, rid, time.monotonic() - t))
    with lock:
        results.extend(mine)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000 if values else 0.0


def main():
    work = tempfile.mkdtemp(prefix="gc-soak-")
    audit = os.path.join(work, "audit.sqlite")
    index = os.path.join(work, "index")
    env = dict(os.environ, GROUNDCITE_AUDIT_PATH=audit, RUST_LOG="warn")
    for k in ("GROUNDCITE_INDEX", "GROUNDCITE_CONFIG"):
        env.pop(k, None)
    env["GROUNDCITE_MODEL_DIR"] = "off"  # lexical, even where a model was fetched
    subprocess.run([BIN, "--index", index, "ingest", os.path.join(REPO, "demo", "handbook")],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    log = open(os.path.join(work, "server.log"), "w")
    proc = subprocess.Popen([BIN, "--index", index, "serve", "--addr", f"127.0.0.1:{port}"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    ok = True
    try:
        wait_ready(port, proc)
        stop, lock, results, stale = threading.Event(), threading.Lock(), [], [0]
        threads = [threading.Thread(target=client, args=(port, k, stop, results, lock, stale))
                   for k in range(CLIENTS)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        samples = []
        while time.monotonic() - t0 < DURATION:
            time.sleep(1)
            samples.append((time.monotonic() - t0, rss_kb(proc.pid)))
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
    finally:
        # SIGTERM: the server drains and flushes its audit writer.
        proc.terminate()
        proc.wait(timeout=60)

    print(f"soak: {len(results)} requests from {CLIENTS} clients in {elapsed:.1f} s "
          f"({len(results) / elapsed:.0f} req/s); {stale[0]} sent again after a kept-alive "
          f"connection closed between requests")
    print(f"{'kind':<18} {'n':>7} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for name, _, _, expected, _ in KINDS:
        mine = [r for r in results if r[0] == name]
        statuses = {}
        for r in mine:
            statuses[r[3]] = statuses.get(r[3], 0) + 1
        lat = [r[5] for r in mine]
        print(f"{name:<18} {len(mine):>7} {pct(lat, 50):>8.1f} {pct(lat, 99):>8.1f}  {statuses}")
    wrong = [r for r in results if r[3] != r[1]]
    errors = [r for r in results if r[3] is None or r[3] >= 500]
    if errors:
        ok = False
        print(f"FAIL: {len(errors)} internal errors or dropped connections")
    if wrong:
        ok = False
        print(f"FAIL: {len(wrong)} responses with an unexpected status, e.g. {wrong[0][:4]}")

    warm = [kb for t, kb in samples if t >= DURATION / 4]
    base, end = (warm[0], samples[-1][1]) if warm else (0, 0)
    drift = (end - base) / base if base else 0.0
    print(f"memory: {base / 1024:.0f} MB after warm-up, {end / 1024:.0f} MB at the end "
          f"({drift * 100:+.1f}%), peak {max(kb for _, kb in samples) / 1024:.0f} MB")
    if abs(drift) > 0.20:
        ok = False
        print("FAIL: memory moved more than 20% after the warm-up")

    served = {r[4] for r in results if r[3] == 200 and r[2]}
    export = os.path.join(work, "audit.jsonl")
    subprocess.run([BIN, "audit", "--db", audit, "--export", export], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ids = [json.loads(line)["request_id"] for line in open(export)]
    missing = served - set(ids)
    extra = set(ids) - served
    dupes = len(ids) - len(set(ids))
    print(f"audit: {len(served)} answers served, {len(ids)} records, {len(missing)} missing, "
          f"{len(extra)} unexpected, {dupes} duplicates")
    if missing or extra or dupes:
        ok = False
        print("FAIL: the audit log does not hold exactly one record per answer served")
    print("soak: OK" if ok else f"soak: FAILED (logs in {work})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
