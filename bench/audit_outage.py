#!/usr/bin/env python3
"""The audit invariant under a database outage.

Run by bench/audit-outage.sh (which builds the binary and starts a
PostgreSQL of its own); stdlib only.

1. The demo handbook ingested into an embedded index (so that retrieval
   never needs the database); the audit log in PostgreSQL, migrated.
2. One `groundcite serve` on loopback; CLIENTS threads alternate
   POST /v1/ask and POST /v1/check for DURATION seconds, recording the
   status, x-request-id, error code and Retry-After of every response.
3. At STOP_AT seconds PostgreSQL is stopped (pg_ctl -m fast), OUTAGE
   seconds later started again.
4. The server stops gracefully (SIGTERM); the audit table is read.

Checks, exit status 1 if any fails:
- every answer served (2xx) has exactly one audit record, and no record
  belongs to a request that was not served (served == audited);
- no duplicate record;
- every refusal is 503 `audit_unavailable` with a Retry-After header, and
  there are some (the outage was seen);
- no other error status;
- the last 3 s of load (the database back) are at least 99% served.
"""

import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import shutil

from common import free_port, wait_ready

BIN = os.environ["GROUNDCITE_BIN"]
URL = os.environ["OUTAGE_DATABASE_URL"]
PG_DATA = os.environ["OUTAGE_PG_DATA"]
PG_CTL = os.environ["OUTAGE_PG_CTL"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURATION = float(os.environ.get("DURATION", "25"))
STOP_AT = float(os.environ.get("STOP_AT", "6"))
OUTAGE = float(os.environ.get("OUTAGE", "6"))
CLIENTS = int(os.environ.get("CLIENTS", "32"))
KEEP = os.environ.get("KEEP") == "1"

QUESTIONS = [
    "How long does reimbursement take?",
    "When must expense claims be filed?",
    "How many vacation days do I get?",
    "What is the capital of Mongolia?",
]
CHECK = json.dumps({
    "question": "How long does reimbursement take?",
    "passages": [
        {"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense."},
        {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval."},
    ],
    "answer": "Reimbursements settle in 14 days [2]. Claims are filed within 60 days [1].",
})


def log(msg):
    print(f"[audit-outage {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def pg_ctl(*args):
    cmd = [PG_CTL, "-D", PG_DATA, *args]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def psql(sql):
    out = subprocess.run(["psql", URL, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def client(port, k, t0, stop, results, lock):
    conn = None
    i = k
    mine = []
    while not stop.is_set():
        i += 1
        if i % 2 == 0:
            path, body = "/v1/ask", json.dumps({"question": QUESTIONS[i // 2 % len(QUESTIONS)]})
        else:
            path, body = "/v1/check", CHECK
        status, rid, code, retry_after = None, None, None, None
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", path, body, {"content-type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            status, rid = r.status, r.getheader("x-request-id")
            retry_after = r.getheader("retry-after")
            if status >= 400:
                try:
                    code = json.loads(data)["error"]["code"]
                except (ValueError, KeyError, TypeError):
                    code = "?"
        except (OSError, http.client.HTTPException):
            if conn is not None:
                conn.close()
            conn = None
        mine.append((time.monotonic() - t0, status, rid, code, retry_after))
    with lock:
        results.extend(mine)


def main():
    work = tempfile.mkdtemp(prefix="gc-outage-")
    index = os.path.join(work, "index")
    env = dict(os.environ, GROUNDCITE_AUDIT_PATH=URL, RUST_LOG="warn")
    for k in ("GROUNDCITE_INDEX", "GROUNDCITE_CONFIG"):
        env.pop(k, None)
    env["GROUNDCITE_MODEL_DIR"] = "off"  # lexical, even where a model was fetched
    proc = None
    ok = True
    try:
        subprocess.run([BIN, "db", "migrate", "--database", URL], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([BIN, "--index", index, "ingest", os.path.join(REPO, "demo", "handbook")],
                       check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = free_port()
        out = open(os.path.join(work, "server.log"), "w")
        proc = subprocess.Popen([BIN, "--index", index, "serve", "--addr", f"127.0.0.1:{port}"],
                                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=work)
        wait_ready(port, proc)
        wait = os.environ.get("GROUNDCITE_AUDIT_WAIT_MS", "250 (default)")
        log(f"server :{port}, audit log in PostgreSQL, commit wait {wait} ms; "
            f"{CLIENTS} clients for {DURATION:.0f} s, database stopped at {STOP_AT:.0f} s for {OUTAGE:.0f} s")

        stop, lock, results = threading.Event(), threading.Lock(), []
        t0 = time.monotonic()
        threads = [threading.Thread(target=client, args=(port, k, t0, stop, results, lock))
                   for k in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(max(0.0, STOP_AT - (time.monotonic() - t0)))
        t_stop = time.monotonic() - t0
        pg_ctl("-m", "fast", "-w", "stop")
        log(f"PostgreSQL stopped at {t_stop:.1f} s")
        time.sleep(max(0.0, STOP_AT + OUTAGE - (time.monotonic() - t0)))
        t_start = time.monotonic() - t0
        pg_ctl("-w", "-t", "30", "-l", os.path.join(PG_DATA, "..", "server.log"), "start")
        t_up = time.monotonic() - t0
        log(f"PostgreSQL started at {t_start:.1f} s, accepting at {t_up:.1f} s")
        time.sleep(max(0.0, DURATION - (time.monotonic() - t0)))
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        metrics = ""
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/metrics")
            metrics = c.getresponse().read().decode()
        except OSError:
            pass
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)

        rows = psql("SELECT request_id, count(*) FROM groundcite.audit GROUP BY request_id").split()
        in_db = {}
        for row in rows:
            rid, n = row.split("|")
            in_db[rid] = int(n)
        total = sum(in_db.values())

        served = [r for r in results if r[1] is not None and 200 <= r[1] < 300]
        refused = [r for r in results if r[1] == 503 and r[3] == "audit_unavailable"]
        other = [r for r in results if r not in served and r not in refused]
        served_ids = {r[2] for r in served}
        refused_ids = {r[2] for r in refused}
        missing = [i for i in served_ids if in_db.get(i, 0) == 0]
        dups = [i for i, n in in_db.items() if n > 1]
        client_dups = len(served) - len(served_ids)
        refused_recorded = [i for i in refused_ids if i in in_db]
        stray = [i for i in in_db if i not in served_ids and i not in refused_ids]
        no_retry_after = [r for r in refused if not r[4]]
        during = [r for r in results if t_stop <= r[0] <= t_up]
        served_during = sum(1 for r in during if r in served) if during else 0
        tail = [r for r in results if r[0] >= elapsed - 3]
        tail_ok = (sum(1 for r in tail if r[1] is not None and 200 <= r[1] < 300) / len(tail)) if tail else 0.0
        first_ok_after = min((r[0] for r in served if r[0] > t_up), default=None)

        def metric(name):
            for line in metrics.splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return line.split()[-1]
            return "?"

        print()
        print(f"audit-outage: {elapsed:.1f} s of load from {CLIENTS} clients; PostgreSQL down "
              f"from {t_stop:.1f} s to {t_up:.1f} s")
        print(f"  requests {len(results)}: served (2xx) {len(served)}, refused 503 audit_unavailable "
              f"{len(refused)}, other {len(other)}")
        print(f"  audit records {total} ({len(in_db)} distinct): served without a record {len(missing)}, "
              f"duplicates {len(dups)}, records of refused requests {len(refused_recorded)}, "
              f"records of no request {len(stray)}")
        print(f"  while the database was down: {len(during)} requests, {served_during} served "
              f"(each committed before it was sent); served again {(first_ok_after - t_up) * 1000 if first_ok_after else float('nan'):.0f} ms "
              f"after it accepted connections; last 3 s {tail_ok * 100:.2f}% served")
        print(f"  metrics: refused {metric('groundcite_audit_refused_total')}, late {metric('groundcite_audit_late_total')}, "
              f"written {metric('groundcite_audit_records_total')}")

        def fail(msg):
            nonlocal ok
            ok = False
            print(f"FAIL: {msg}")

        if missing:
            fail(f"{len(missing)} answers served without an audit record")
        if dups or client_dups:
            fail(f"{len(dups)} duplicate audit records, {client_dups} duplicate request ids")
        if refused_recorded:
            fail(f"{len(refused_recorded)} refused requests have an audit record")
        if stray:
            fail(f"{len(stray)} audit records of no request the client saw")
        if len(in_db) != len(served_ids):
            fail(f"served {len(served_ids)} != audited {len(in_db)}")
        if not refused:
            fail("no request was refused: the outage was not seen")
        if no_retry_after:
            fail(f"{len(no_retry_after)} refusals without Retry-After")
        if other:
            codes = sorted({(r[1], r[3]) for r in other}, key=str)
            fail(f"{len(other)} responses neither served nor refused for the audit: {codes[:5]}")
        if tail_ok < 0.99:
            fail(f"the last 3 s are {tail_ok * 100:.1f}% served (the database is back)")
        if elapsed > 60:
            fail("over 60 s")
        print("audit-outage: OK" if ok else "audit-outage: FAILED")
        if not ok:
            with open(os.path.join(work, "server.log")) as f:
                print("--- server log (tail) ---")
                print("".join(f.readlines()[-20:]))
        return 0 if ok else 1
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if not KEEP:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work}")


if __name__ == "__main__":
    sys.exit(main())
