#!/usr/bin/env python3
"""groundcite end to end with a real model: `ask` over a sample
of ../shared/cases/questions-dev.jsonl on the handbook, against an
OpenAI-compatible server already listening at BASE_URL (.ci/llm.sh starts
llama.cpp's server with SmolLM2-135M-Instruct), in free-text and structured
modes, streaming and not, through the CLI and through `/v1/ask` (JSON and
SSE).

It asserts what must hold with any model:
  * no id that was never sent is ever served (answers, streamed sentences);
  * every answer is either refused or checked (a status, every sentence
    with a verdict);
  * a cut stream is never reported complete (a proxy that cuts the
    model's stream mid-answer: an error, never a `final` event or an
    answer; a reply cut at max_tokens is reported `truncated`);
  * structured mode generates no invalid id (the schema's enum);
  * the run finishes within DEADLINE seconds;
and prints, per mode, the rates (answered, refused by reason, regenerated,
invalid ids generated, unmarked sentences, grounded, coverage) and the
latencies.

Environment: GROUNDCITE_BIN (the binary), BASE_URL (the model server),
MODEL (default smollm2), SAMPLE (questions, default 6), STREAM_SAMPLE
(questions asked with each stream/HTTP path, default 2), DEADLINE (default
1200 s), MODES (default "free_text structured"), MAX_TOKENS (default 192),
REPORT (a JSON file to write the figures to). The embedding model is not
used (GROUNDCITE_MODEL_DIR is removed from the environment): retrieval and
the gate are lexical, so the figures are the generator's, and the handbook
ingests in a second rather than the half hour a debug build takes to embed
it.
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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, LoopbackProxy, free_port, model_run  # noqa: E402

BIN, BASE_URL, MODEL, ENV = model_run()
SAMPLE = int(os.environ.get("SAMPLE", "6"))
STREAM_SAMPLE = int(os.environ.get("STREAM_SAMPLE", "2"))
DEADLINE = float(os.environ.get("DEADLINE", "1200"))
MODES = os.environ.get("MODES", "free_text structured").split()
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", "192"))
STARTED = time.monotonic()

MARKER = re.compile(r"\[(\d+(?:\s*[-,–]\s*\d+)*)\]")
failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}", flush=True)


def ids_of(text):
    """Every id named by a [k], [k, m] or [k-m] marker of text."""
    out = []
    for group in MARKER.findall(text):
        for part in group.split(","):
            bounds = re.split(r"\s*[-–]\s*", part.strip())
            if len(bounds) == 2:
                a, b = int(bounds[0]), int(bounds[1])
                out.extend(range(a, b + 1) if b - a < 100 else [a, b])
            else:
                out.append(int(bounds[0]))
    return out


def left():
    return DEADLINE - (time.monotonic() - STARTED)


def check_result(where, r, shown=()):
    """The invariants of one answer (and the sentences streamed for it)."""
    n = len(r.get("passages") or [])
    served = [i for i in ids_of(r["answer"]) if not 1 <= i <= n]
    if served:
        fail(f"{where}: ids never sent served {served} (n={n}): {r['answer']!r}")
    for text in shown:
        bad = [i for i in ids_of(text) if not 1 <= i <= n]
        if bad:
            fail(f"{where}: streamed a sentence with ids never sent {bad}: {text!r}")
    if r.get("refusal") is None:
        if r.get("status") not in ("ok", "unverified"):
            fail(f"{where}: an answer without a status: {r.get('status')!r}")
        if not r.get("sentences") or any("verdict" not in s for s in r["sentences"]):
            fail(f"{where}: an answer served unchecked")
        if r.get("status") != "ok":
            fail(f"{where}: served with status {r.get('status')!r}")


def run_cli(config, question, stream):
    args = [BIN, "ask", "--config", str(config), "--json"]
    if stream:
        args.append("--stream")
    args.append(question)
    started = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=max(left(), 1), env=ENV)
    wall = time.monotonic() - started
    if p.returncode not in (0, 1):
        return None, wall, p.stderr.strip()
    return json.loads(p.stdout), wall, None


def post(addr, body, timeout):
    host, port = addr.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    conn.request("POST", "/v1/ask", body=json.dumps(body),
                 headers={"content-type": "application/json"})
    return conn, conn.getresponse()


def run_http(addr, question, stream):
    """/v1/ask: the result, the sentences shown (minus retracted), the wall
    time and an error, if any."""
    started = time.monotonic()
    conn, resp = post(addr, {"question": question, "stream": stream}, max(left(), 1))
    try:
        if not stream:
            body = resp.read().decode()
            if resp.status != 200:
                return None, [], time.monotonic() - started, f"HTTP {resp.status}: {body[:300]}"
            return json.loads(body), [], time.monotonic() - started, None
        shown, final, error, event = [], None, None, None
        for raw in resp:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:].strip())
                if event == "sentence":
                    if final is not None:
                        fail("SSE: a sentence after the final event")
                    shown.append(data["text"])
                elif event == "retract":
                    if data["count"] != len(shown):
                        fail(f"SSE: retracted {data['count']} of {len(shown)} shown")
                    shown = []
                elif event == "final":
                    final = data
                elif event == "error":
                    error = json.dumps(data)[:300]
        if final is not None and error is not None:
            fail("SSE: both a final event and an error")
        if final is not None:
            for text in shown:
                if text not in final["answer"]:
                    fail(f"SSE: shown and not retracted, yet not in the answer: {text!r}")
        return final, shown, time.monotonic() - started, error
    finally:
        conn.close()


class CuttingProxy(LoopbackProxy):
    """Forwards /v1/chat/completions to the model server and, for streamed
    replies, closes the connection after the first `keep` bytes of the
    body: a stream cut mid-answer."""

    def __init__(self, upstream, keep=400):
        self.keep = keep
        super().__init__(upstream)

    def relay(self, client, resp, body):
        streamed = json.loads(body).get("stream", False)
        sent = 0
        while True:
            chunk = resp.read1(256) if streamed else resp.read()
            if not chunk:
                break
            if streamed and sent + len(chunk) >= self.keep:
                client.sendall(chunk[: self.keep - sent])
                break
            client.sendall(chunk)
            sent += len(chunk)
            if not streamed:
                break


def write_config(path, index, base_url, structured, max_tokens, audit):
    path.write_text(
        f'index = "{index}"\n'
        'generator = "openai"\n'
        f'audit_path = "{audit}"\n'
        "demo_on_first_use = false\n"
        "[openai]\n"
        f'base_url = "{base_url}"\n'
        f'model = "{MODEL}"\n'
        f'structured = "{"auto" if structured else "off"}"\n'
        f"max_tokens = {max_tokens}\n"
        "timeout_secs = 120\n"
        "max_retries = 0\n"
    )


def start_server(config):
    addr = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([BIN, "serve", "--config", str(config), "--addr", addr],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    for _ in range(600):
        try:
            with socket.create_connection(tuple([addr.split(":")[0], int(addr.split(":")[1])]), 0.5):
                return proc, addr
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"groundcite serve exited: {proc.stderr.read()[-2000:]}")
            time.sleep(0.2)
    proc.kill()
    sys.exit("groundcite serve did not start listening")


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summarise(mode, results, walls, errors):
    n = len(results)
    refused = [r for r in results if r.get("refusal")]
    reasons = {}
    for r in refused:
        reasons[r["refusal"]["reason"]] = reasons.get(r["refusal"]["reason"], 0) + 1
    answered = [r for r in results if not r.get("refusal")]
    modelled = [r for r in results if r.get("attempts")]
    attempts = [a for r in results for a in r.get("attempts", []) if a.get("error") is None]
    invalid = [a for a in attempts if a.get("bad_ids")]
    unmarked = sum(len(r.get("unmarked", [])) for r in answered)
    sentences = sum(len(r.get("sentences", [])) for r in answered)
    modes = {}
    for r in results:
        m = r.get("generation_mode")
        modes[m] = modes.get(m, 0) + 1
    figures = {
        "mode": mode,
        "answers": n,
        "errors": len(errors),
        "answered": len(answered),
        "refused": reasons,
        "model_called": len(modelled),
        "regenerated": sum(1 for r in results if r.get("regenerated")),
        "attempts": len(attempts),
        "attempts_with_invalid_ids": len(invalid),
        "unmarked_sentences": unmarked,
        "sentences_served": sentences,
        "grounded": sum(1 for r in answered if r.get("grounded")),
        "mean_coverage_answered": round(statistics.mean([r["coverage"] for r in answered]), 3) if answered else None,
        "truncated": sum(1 for r in results if r.get("truncated")),
        "generation_mode": modes,
        "latency_s_p50": round(pct(walls, 0.5), 2),
        "latency_s_p90": round(pct(walls, 0.9), 2),
        "latency_s_max": round(max(walls), 2) if walls else None,
        "generate_ms_p50": round(pct([r["timings"]["generate_ms"] for r in modelled], 0.5)),
    }
    print(f"\n== {mode}: {n} answers ({len(errors)} errors)")
    for key, value in figures.items():
        print(f"  {key}: {value}")
    return figures


def main():
    questions = [json.loads(l) for l in (SHARED / "cases/questions-dev.jsonl").read_text().splitlines() if l.strip()]
    # Two thirds answerable, one third not, each spread evenly over its
    # kind; answerable ones first (the stream and HTTP paths take the first).
    def spread(items, n):
        return [items[i * len(items) // n] for i in range(n)] if n else []
    unanswerable = SAMPLE // 3
    sample = [q["question"] for q in spread([q for q in questions if q["answerable"]], SAMPLE - unanswerable)]
    sample += [q["question"] for q in spread([q for q in questions if not q["answerable"]], unanswerable)]
    tmp = Path(tempfile.mkdtemp(prefix="groundcite-llm-e2e."))
    index = tmp / "index"
    t = time.monotonic()
    subprocess.run([BIN, "ingest", "--index", str(index), "--handbook", str(SHARED / "corpora/tts-handbook/pages")],
                   check=True, stdout=subprocess.DEVNULL, env=ENV)
    print(f"ingested the handbook in {time.monotonic() - t:.1f} s; {len(sample)} questions, modes {MODES}", flush=True)
    report = {"sample": sample, "modes": []}
    reached = []
    for mode in MODES:
        structured = mode == "structured"
        config = tmp / f"{mode}.toml"
        write_config(config, index, BASE_URL, structured, MAX_TOKENS, tmp / f"audit-{mode}.sqlite")
        results, walls, errors = [], [], []
        paths = [("cli", False, sample), ("cli --stream", True, sample[:STREAM_SAMPLE])]
        for label, stream, qs in paths:
            for q in qs:
                r, wall, err = run_cli(config, q, stream)
                if err:
                    errors.append(err)
                    fail(f"{mode} {label}: {q!r}: {err[-300:]}")
                    continue
                check_result(f"{mode} {label} {q!r}", r)
                results.append(r)
                walls.append(wall)
                print(f"  {mode:10} {label:13} {wall:5.1f} s  {(r.get('refusal') or {}).get('reason', r['status']):16} {q[:60]}", flush=True)
        server, addr = start_server(config)
        try:
            for stream in (False, True):
                label = "/v1/ask sse" if stream else "/v1/ask"
                for q in sample[:STREAM_SAMPLE]:
                    r, shown, wall, err = run_http(addr, q, stream)
                    if err:
                        errors.append(err)
                        fail(f"{mode} {label}: {q!r}: {err}")
                        continue
                    check_result(f"{mode} {label} {q!r}", r, shown)
                    results.append(r)
                    walls.append(wall)
                    print(f"  {mode:10} {label:13} {wall:5.1f} s  {(r.get('refusal') or {}).get('reason', r['status']):16} {q[:60]}", flush=True)
        finally:
            server.kill()
            server.wait()
        figures = summarise(mode, results, walls, errors)
        if structured and figures["attempts_with_invalid_ids"]:
            fail(f"structured mode generated invalid ids in {figures['attempts_with_invalid_ids']} attempts")
        if structured and figures["generation_mode"].get("structured", 0) == 0 and figures["model_called"]:
            fail("structured mode never answered in structured mode")
        reached.extend(r["question"] for r in results if r.get("attempts"))
        report["modes"].append(figures)

    # A stream cut mid-answer is never reported complete, in either mode:
    # a question that reached the model, through a proxy that cuts.
    q = reached[0] if reached else None
    if q is None:
        fail("no question reached the model: the cut-stream check cannot run")
    proxy = CuttingProxy(BASE_URL)
    for mode in MODES if q else []:
        config = tmp / f"cut-{mode}.toml"
        write_config(config, index, proxy.url, mode == "structured", MAX_TOKENS, tmp / "audit-cut.sqlite")
        r, _, err = run_cli(config, q, True)
        if r is not None and r.get("refusal") is None:
            fail(f"cut stream ({mode}): served as complete: {r['answer']!r}")
        print(f"  cut stream, CLI ({mode}): {'refused: ' + r['refusal']['reason'] if r else 'error: ' + (err or '').splitlines()[-1][-160:]}")
        server, addr = start_server(config)
        try:
            r, shown, _, err = run_http(addr, q, True)
            if r is not None and r.get("refusal") is None:
                fail(f"cut SSE stream ({mode}): a final answer: {r['answer']!r}")
            if r is None and shown:
                fail(f"cut SSE stream ({mode}): {len(shown)} sentence(s) left shown after the error")
            print(f"  cut stream, SSE ({mode}): {'refused' if r else 'error event: ' + (err or '')[:160]}")
        finally:
            server.kill()
            server.wait()
    # A reply cut at max_tokens is reported as such.
    config = tmp / "short.toml"
    write_config(config, index, BASE_URL, False, 12, tmp / "audit-short.sqlite")
    for q in sample[:2]:
        r, _, err = run_cli(config, q, False)
        if err:
            fail(f"max_tokens=12: {err[-300:]}")
            continue
        check_result(f"max_tokens=12 {q!r}", r)
        cut = [a for a in r.get("attempts", []) if a.get("finish_reason") == "length"]
        if r.get("refusal") is None and cut and not r.get("truncated"):
            fail(f"max_tokens=12: a reply cut at the limit not reported truncated: {r['answer']!r}")
    elapsed = time.monotonic() - STARTED
    report["elapsed_s"] = round(elapsed, 1)
    print(f"\nelapsed {elapsed:.0f} s (deadline {DEADLINE:.0f} s)")
    if elapsed > DEADLINE:
        fail(f"the run took {elapsed:.0f} s, over its deadline of {DEADLINE:.0f} s")
    if os.environ.get("REPORT"):
        Path(os.environ["REPORT"]).write_text(json.dumps(report, indent=2) + "\n")
    if failures:
        print(f"\n{len(failures)} failure(s)")
        sys.exit(1)
    print("llm e2e: all invariants held")


if __name__ == "__main__":
    main()
