#!/usr/bin/env python3
"""Two stateless replicas on one PostgreSQL database, under load, one killed.

Run by bench/replicas.sh (which builds the binary); stdlib only.

1. A fresh database (CREATE DATABASE groundcite_replicas_<pid>), migrated.
2. The demo handbook (a copy of demo/handbook) ingested into it.
3. Two `groundcite serve` processes on two loopback ports, index and audit
   log both in that database.
4. Load on both for DURATION seconds (bounded by MAX_REQUESTS too): worker
   threads alternate POST /v1/ask and POST /v1/check, recording the
   x-request-id of every 200.
5. At INGEST_AT seconds one `groundcite ingest` re-ingests the copy with one
   page modified (a new paragraph with a made-up word); both servers must
   find that word afterwards without a restart.
6. At KILL_AT seconds server A gets SIGKILL; its workers stop at their first
   failed request. Server B keeps serving.
7. Checks: every answered request id has exactly one audit record (none
   missing for B, none missing for A either: an answer is sent only after
   its record committed, else refused with 503 audit_unavailable); no
   duplicates; B's success rate after the kill
   is at least 99%; the modified page was visible on both servers.

Exit status 0 when every check holds, 1 otherwise.
"""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from common import free_port, get, wait_ready

BIN = os.environ["GROUNDCITE_BIN"]
ADMIN_URL = os.environ["GROUNDCITE_TEST_DATABASE_URL"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURATION = float(os.environ.get("DURATION", "40"))
INGEST_AT = float(os.environ.get("INGEST_AT", "10"))
KILL_AT = float(os.environ.get("KILL_AT", "20"))
WORKERS = int(os.environ.get("WORKERS", "3"))
MAX_REQUESTS = int(os.environ.get("MAX_REQUESTS", "200000"))
KEEP = os.environ.get("KEEP") == "1"
CANARY = "quokkaportal"

QUESTIONS = [
    "How long does reimbursement take?",
    "When must expense claims be filed?",
    "How many vacation days do I get?",
    "Can I work remotely from another country?",
    "What is the per diem for meals?",
    "Who do I contact about my laptop?",
    "What is the capital of Mongolia?",
]
CHECK = {
    "question": "How long does reimbursement take?",
    "passages": [
        {"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense."},
        {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval."},
    ],
    "answer": "Reimbursements settle in 14 days [2]. Claims are filed within 60 days [1].",
}


def log(msg):
    print(f"[replicas {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def psql(url, sql):
    out = subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def with_db(url, db):
    p = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((p.scheme, p.netloc, "/" + db, p.query, p.fragment))


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.results = []  # (server, kind, status or None, request_id, t)
        self.count = 0


def worker(name, port, stats, t0, stop, killed_at, start):
    conn = None
    i = start
    while not stop.is_set():
        with stats.lock:
            if stats.count >= MAX_REQUESTS:
                return
            stats.count += 1
        i += 1
        if i % 2 == 0:
            kind, path = "ask", "/v1/ask"
            body = json.dumps({"question": QUESTIONS[i // 2 % len(QUESTIONS)]})
        else:
            kind, path, body = "check", "/v1/check", json.dumps(CHECK)
        status, rid = None, None
        t_send = time.monotonic()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", path, body, {"content-type": "application/json"})
            r = conn.getresponse()
            r.read()
            status, rid = r.status, r.getheader("x-request-id")
        except (OSError, http.client.HTTPException):
            if conn is not None:
                conn.close()
            conn = None
        t = time.monotonic() - t0
        with stats.lock:
            stats.results.append((name, kind, status, rid, t, t - (t_send - t0)))
        if status is None:
            if killed_at.get(name) is not None:
                return  # the load balancer takes it out of rotation
            time.sleep(0.05)


def main():
    db = f"groundcite_replicas_{os.getpid()}"
    url = with_db(ADMIN_URL, db)
    work = tempfile.mkdtemp(prefix="gc-replicas-")
    procs = {}
    try:
        psql(ADMIN_URL, f"DROP DATABASE IF EXISTS {db}")
        psql(ADMIN_URL, f"CREATE DATABASE {db}")
        subprocess.run([BIN, "db", "migrate", "--database", url], check=True,
                       stdout=subprocess.DEVNULL)
        corpus = os.path.join(work, "handbook")
        shutil.copytree(os.path.join(REPO, "demo", "handbook"), corpus)
        subprocess.run([BIN, "--index", url, "ingest", corpus], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        chunks = psql(url, "SELECT count(*) FROM groundcite.chunks").strip()
        log(f"fresh database {db}: {chunks} chunks ingested")

        env = dict(os.environ, GROUNDCITE_AUDIT_PATH=url, RUST_LOG="warn")
        env.pop("GROUNDCITE_INDEX", None)
        ports = {"A": free_port(), "B": free_port()}
        for name, port in ports.items():
            out = open(os.path.join(work, f"server-{name}.log"), "w")
            procs[name] = subprocess.Popen(
                [BIN, "--index", url, "serve", "--addr", f"127.0.0.1:{port}"],
                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=work)
        for name, port in ports.items():
            wait_ready(port, procs[name], f"server {name}")
        log(f"servers A :{ports['A']} (pid {procs['A'].pid}), B :{ports['B']} (pid {procs['B'].pid}); "
            f"{WORKERS} workers each, {DURATION:.0f} s")

        stats, stop, killed_at = Stats(), threading.Event(), {}
        t0 = time.monotonic()
        threads = [threading.Thread(target=worker, args=(n, p, stats, t0, stop, killed_at, k))
                   for n, p in ports.items() for k in range(WORKERS)]
        for t in threads:
            t.start()

        # Mid-way: one ingest of a modified page, then both nodes must see it.
        time.sleep(max(0.0, INGEST_AT - (time.monotonic() - t0)))
        with open(os.path.join(corpus, "expenses.md"), "a") as f:
            f.write(f"\n\n## Portal\n\nThe {CANARY} closes for maintenance every Sunday night.\n")
        t_ing = time.monotonic()
        subprocess.run([BIN, "--index", url, "ingest", corpus], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t_commit = time.monotonic()
        visible = {}
        for name, port in ports.items():
            for _ in range(50):
                status, body = get(port, f"/v1/search?q={CANARY}+maintenance&k=3")
                if status == 200 and CANARY in body:
                    visible[name] = time.monotonic() - t_commit
                    break
                time.sleep(0.1)
        log(f"ingest of the modified page: {t_commit - t_ing:.2f} s; visible on "
            + ", ".join(f"{n} after {v * 1000:.0f} ms" for n, v in visible.items())
            + f" (of {len(ports)})")

        time.sleep(max(0.0, KILL_AT - (time.monotonic() - t0)))
        killed_at["A"] = time.monotonic() - t0
        procs["A"].send_signal(signal.SIGKILL)
        procs["A"].wait()
        log(f"SIGKILL server A at {killed_at['A']:.1f} s")

        time.sleep(max(0.0, DURATION - (time.monotonic() - t0)))
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        # B stops gracefully (SIGTERM: its queue is written before exit).
        metrics_b = get(ports["B"], "/metrics")[1]
        procs["B"].send_signal(signal.SIGTERM)
        procs["B"].wait(timeout=30)

        rows = psql(url, "SELECT request_id FROM groundcite.audit").split()
        total = int(psql(url, "SELECT count(*) FROM groundcite.audit"))
        distinct = int(psql(url, "SELECT count(DISTINCT request_id) FROM groundcite.audit"))
        in_db = {}
        for r in rows:
            in_db[r] = in_db.get(r, 0) + 1

        late_b = 0.0
        for line in metrics_b.splitlines():
            if line.startswith("groundcite_audit_late_total"):
                late_b = float(line.split()[-1])

        ok = True
        summary = {}
        answered_ids = set()
        for name in ports:
            mine = [r for r in stats.results if r[0] == name]
            ok200 = [r for r in mine if r[2] == 200]
            ids = [r[3] for r in ok200]
            answered_ids.update(ids)
            missing = [i for i in ids if in_db.get(i, 0) == 0]
            dup = [i for i in ids if in_db.get(i, 0) > 1]
            errors = [r for r in mine if r[2] != 200]
            lat = sorted(r[5] * 1000 for r in ok200) or [0.0]
            s = {
                "requests": len(mine),
                "ok": len(ok200),
                "ask": sum(1 for r in ok200 if r[1] == "ask"),
                "check": sum(1 for r in ok200 if r[1] == "check"),
                "errors": len(errors),
                "missing_audit": len(missing),
                "duplicate_audit": len(dup),
                "client_dup_ids": len(ids) - len(set(ids)),
                "p50_ms": lat[len(lat) // 2],
                "p99_ms": lat[min(len(lat) - 1, len(lat) * 99 // 100)],
            }
            if name == "B":
                after = [r for r in mine if r[4] >= killed_at["A"]]
                s["after_kill"] = len(after)
                s["after_kill_success"] = (sum(1 for r in after if r[2] == 200) / len(after)) if after else 0.0
                s["audit_late"] = late_b
            else:
                s["errors_after_kill"] = sum(1 for r in errors if r[4] >= killed_at["A"])
            summary[name] = s
        unanswered_records = sum(1 for r in in_db if r not in answered_ids)

        print()
        wait = os.environ.get("GROUNDCITE_AUDIT_WAIT_MS", "default (250)")
        print(f"replicas: {elapsed:.1f} s of load, {WORKERS} workers per server, "
              f"SIGKILL of A at {killed_at['A']:.1f} s, audit commit wait {wait} ms")
        print(f"{'server':<8}{'requests':>9}{'200':>8}{'ask':>7}{'check':>7}{'errors':>8}"
              f"{'missing':>9}{'dups':>6}   notes")
        for name, s in summary.items():
            rps = s["requests"] / (killed_at["A"] if name == "A" else elapsed)
            if name == "A":
                notes = (f"{rps:.0f} req/s until killed, p50 {s['p50_ms']:.1f} ms, p99 {s['p99_ms']:.1f} ms; "
                         f"{s['errors_after_kill']} failed at/after the kill")
            else:
                notes = (f"{rps:.0f} req/s, p50 {s['p50_ms']:.1f} ms, p99 {s['p99_ms']:.1f} ms; after the kill {s['after_kill']} requests, "
                         f"{s['after_kill_success'] * 100:.2f}% ok; audit waits that ran out (refused unless already being written): {s['audit_late']:.0f}")
            print(f"{name:<8}{s['requests']:>9}{s['ok']:>8}{s['ask']:>7}{s['check']:>7}{s['errors']:>8}"
                  f"{s['missing_audit']:>9}{s['duplicate_audit']:>6}   {notes}")
        print(f"audit records: {total} ({distinct} distinct request ids, {total - distinct} duplicates); "
              f"{unanswered_records} for requests whose response the client never got (in flight at the kill)")
        print(f"ingest mid-load: visible on {sorted(visible)} of {sorted(ports)}")

        def fail(msg):
            nonlocal ok
            ok = False
            print(f"FAIL: {msg}")

        if total != distinct:
            fail("duplicate audit records")
        for name, s in summary.items():
            if s["duplicate_audit"] or s["client_dup_ids"]:
                fail(f"server {name}: duplicate request ids")
        if summary["B"]["missing_audit"]:
            fail(f"server B: {summary['B']['missing_audit']} answers without an audit record")
        if summary["A"]["missing_audit"]:
            fail(f"server A (killed): {summary['A']['missing_audit']} answers without an audit record "
                 "(only possible without a commit wait: GROUNDCITE_AUDIT_WAIT_MS=0)")
        if summary["B"]["after_kill_success"] < 0.99:
            fail("server B's success rate after the kill is under 99%")
        if summary["A"]["ok"] == 0 or summary["B"]["ok"] == 0:
            fail("a server answered nothing")
        if len(visible) != len(ports):
            fail("the re-ingested page was not visible on every server")
        if elapsed < 30:
            fail("less than 30 s of load")
        print("replicas: OK" if ok else "replicas: FAILED")
        if not ok:
            for name in ports:
                print(f"--- server {name} log (tail) ---")
                with open(os.path.join(work, f"server-{name}.log")) as f:
                    print("".join(f.readlines()[-20:]))
        return 0 if ok else 1
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        if not KEEP:
            shutil.rmtree(work, ignore_errors=True)
            try:
                psql(ADMIN_URL, f"DROP DATABASE IF EXISTS {db}")
            except subprocess.CalledProcessError as e:
                print(f"cannot drop {db}: {e.stderr}", file=sys.stderr)
        else:
            log(f"kept {work} and database {db}")


if __name__ == "__main__":
    sys.exit(main())
