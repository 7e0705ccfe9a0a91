//! The binary end to end: batch checks keep going past bad lines and say
//! where they are; single checks, prompts, config and ask work offline.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_groundcite");
/// The labelled cases of the fixtures (a part of `shared/cases/dev.jsonl`).
fn dev() -> String {
    let path = groundcite_testdata::fixture("cases/dev.jsonl");
    path.to_str().expect("a UTF-8 path").to_string()
}

fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("GROUNDCITE_INDEX")
        .env_remove("GROUNDCITE_CONFIG")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each line of `text` as JSON (reports on stdout, the fixture cases): a
/// line that is not JSON, blank ones included, fails the test.
fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn check_cases_writes_one_report_per_line_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dev();
    let o = run(&["check", "--cases", &dev, "--fail-on", "none"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let expected: Vec<String> = std::fs::read_to_string(&dev)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let ids: Vec<&str> = lines.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, expected);
    for v in &lines {
        for key in [
            "status",
            "cited",
            "bad_ids",
            "unmarked",
            "coverage",
            "sentences",
            "sources",
            "refusal",
            "supported",
            "grounded",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {v}");
        }
    }
}

#[test]
fn bad_lines_are_reported_with_file_and_line_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(dev())
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(good.as_bytes());
    bytes.extend_from_slice(b"\n{not json\n");
    bytes.extend_from_slice(br#"{"id": "m1", "passages": []}"#);
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(br#"{"id": "e1", "passages": [], "answer": "   "}"#);
    bytes.extend_from_slice(b"\n\xff\xfe\n");
    bytes.extend_from_slice(good.as_bytes());
    bytes.push(b'\n');
    let file = dir.path().join("cases.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    let o = run(&["check", "--cases", file.to_str().unwrap()], dir.path());
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed line makes the exit code say so"
    );
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["id"], "s01");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("cases.jsonl:2: malformed case")
    );
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("missing field `answer`"),
        "{}",
        lines[2]
    );
    assert_eq!(lines[2]["id"], "m1");
    assert!(
        lines[3]["error"]
            .as_str()
            .unwrap()
            .contains("`answer` is empty")
    );
    assert!(
        lines[4]["error"]
            .as_str()
            .unwrap()
            .contains(":5: not valid UTF-8")
    );
    assert_eq!(lines[5]["id"], "s01");
    let err = stderr(&o);
    assert!(
        err.contains("cases.jsonl:2") && err.contains("4 case(s) could not be checked"),
        "{err}"
    );
}

#[test]
fn unreadable_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &["check", "--cases", "/nonexistent/cases.jsonl"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read /nonexistent/cases.jsonl"),
        "{}",
        stderr(&o)
    );
}

/// Runs the binary with `stdin` as its standard input.
fn run_with_stdin(args: &[&str], dir: &Path, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("GROUNDCITE_INDEX")
        .env_remove("GROUNDCITE_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A batch of more cases than one window holds (1,024), with bad lines
/// among them: every count of threads writes the same bytes, in input
/// order, and says how many lines failed.
#[test]
fn batch_check_output_does_not_depend_on_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let good = json_lines(&std::fs::read_to_string(dev()).unwrap());
    let mut text = String::new();
    let mut ids = Vec::new();
    for i in 0..2_600 {
        if i % 700 == 13 {
            text.push_str("{not json\n");
            ids.push(None);
            continue;
        }
        let mut case = good[i % good.len()].clone();
        let id = format!("c{i}");
        case["id"] = serde_json::json!(id);
        text.push_str(&case.to_string());
        text.push('\n');
        ids.push(Some(id));
    }
    let file = dir.path().join("many.jsonl");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();
    let outputs: Vec<Output> = ["1", "2", "3"]
        .iter()
        .map(|jobs| {
            run(
                &[
                    "check",
                    "--cases",
                    file,
                    "--jobs",
                    jobs,
                    "--fail-on",
                    "none",
                ],
                dir.path(),
            )
        })
        .collect();
    for o in &outputs {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
        assert!(
            stderr(o).contains("4 case(s) could not be checked"),
            "{}",
            stderr(o)
        );
        assert!(
            o.stdout == outputs[0].stdout,
            "the output depends on --jobs"
        );
    }
    let lines = json_lines(&stdout(&outputs[0]));
    assert_eq!(lines.len(), ids.len());
    for (i, (line, id)) in lines.iter().zip(&ids).enumerate() {
        match id {
            Some(id) => assert_eq!(line["id"], id.as_str()),
            None => {
                assert_eq!(line["line"], i + 1);
                assert!(line["error"].as_str().unwrap().contains("malformed case"));
            }
        }
    }
    // Standard input gives the same reports; errors name `<stdin>`.
    let piped = run_with_stdin(
        &["check", "--cases", "-", "--jobs", "2", "--fail-on", "none"],
        dir.path(),
        text.as_bytes(),
    );
    assert!(
        stdout(&piped) == stdout(&outputs[0]).replace(file, "<stdin>"),
        "standard input gave other reports"
    );
    assert!(
        stderr(&piped).contains("<stdin>:14: malformed case"),
        "{}",
        stderr(&piped)
    );
}

/// `--fields` keeps the fields asked, in that order, each as the whole
/// report writes it; an unknown field is an error naming the nearest.
#[test]
fn batch_check_fields_keep_what_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dev();
    let whole = run(&["check", "--cases", &dev, "--fail-on", "none"], dir.path());
    let compact = run(
        &[
            "check",
            "--cases",
            &dev,
            "--fail-on",
            "none",
            "--fields",
            "status,id,counts,status",
        ],
        dir.path(),
    );
    assert!(compact.status.success(), "{}", stderr(&compact));
    let whole = json_lines(&stdout(&whole));
    let compact_lines: Vec<&str> = std::str::from_utf8(&compact.stdout)
        .unwrap()
        .lines()
        .collect();
    assert_eq!(compact_lines.len(), whole.len());
    for (line, full) in compact_lines.iter().zip(&whole) {
        assert!(line.starts_with(r#"{"status":"#), "{line}");
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3, "{line}");
        for key in ["status", "id", "counts"] {
            assert_eq!(v[key], full[key], "{key} in {line}");
        }
    }
    let o = run(
        &["check", "--cases", &dev, "--fields", "id,statsu"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no field `statsu` (did you mean `status`?)"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// A read error (a folder given as the file) is an error naming it, after
/// nothing was written.
#[test]
fn batch_check_read_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let o = run(&["check", "--cases", folder], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("cannot read {folder}")),
        "{}",
        stderr(&o)
    );
}

fn write_passages(dir: &Path) -> String {
    let p = dir.join("p.json");
    std::fs::write(
        &p,
        r#"[{"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense.", "source_url": "https://hr.example/policy", "section": "Filing"},
            {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.", "source_url": "https://hr.example/policy", "section": "Reimbursement"}]"#,
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn single_check_readable_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    let o = run(
        &[
            "check",
            "--passages",
            &p,
            "--answer",
            "Reimbursements settle in 14 days [2].",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("The source says 30 days, not 14 days.") && !text.contains("number_mismatch"),
        "{text}"
    );
    let o = run(
        &[
            "check",
            "--passages",
            &p,
            "--answer",
            "Reimbursements settle in 14 days [2].",
            "--json",
        ],
        dir.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["sentences"][0]["verdict"], "contradicted");
    assert_eq!(v["sentences"][0]["evidence"]["passage"], 2);
    let o = run(&["check", "--passages", &p, "--answer", "  "], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the answer is empty"));
}

#[test]
fn prompt_renders_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    let o = run(
        &[
            "prompt",
            "--passages",
            &p,
            "--question",
            "How long?",
            "--refusal-form",
            "sentinel",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("NOT_IN_SOURCES: <what would be needed to answer>"));
    assert!(text.contains("[2] Reimbursements settle within 30 days of approval."));
}

#[test]
fn ask_on_a_fresh_directory_uses_the_demo_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &["ask", "How long does reimbursement take?", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["status"], "ok");
    assert!(v["answer"].as_str().unwrap().contains("30 days"), "{v}");
    assert!(v["refusal"].is_null());
    assert!(v["passages"][0]["n"] == 1);
    assert!(dir.path().join(".groundcite/index").exists());
    // Refused by the gate: what was searched and the nearest topics.
    let o = run(
        &["ask", "What is the dental plan for pets?", "--json"],
        dir.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["status"], "no_evidence");
    assert!(!v["refusal"]["searched"].as_str().unwrap().is_empty());
}

/// A model fetched into `.groundcite/models/all-MiniLM-L6-v2` is used
/// without a flag, so a broken one there is an error naming its file (never
/// a silent lexical run); `off` turns it off; without it, retrieval is
/// lexical and the note says how to fetch the model.
#[test]
fn the_model_in_the_default_place_is_used_without_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(dir.path())
            .env_remove("GROUNDCITE_INDEX")
            .env_remove("GROUNDCITE_CONFIG")
            .env_remove("GROUNDCITE_MODEL_DIR");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let method = |o: &Output| {
        assert!(o.status.success(), "{}", stderr(o));
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        (
            v["retrieval"]["method"].as_str().unwrap().to_string(),
            v["retrieval"]["note"].as_str().unwrap().to_string(),
        )
    };
    let (m, note) = method(&config(&["config", "--json"], &[]));
    assert_eq!(m, "lexical");
    assert!(note.contains("scripts/fetch-model.sh"), "{note}");

    let model = dir.path().join(".groundcite/models/all-MiniLM-L6-v2");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(model.join("config.json"), "{}").unwrap();
    let o = config(&["config", "--json"], &[]);
    assert!(
        !o.status.success(),
        "a broken model in the default place is an error"
    );
    assert!(stderr(&o).contains("all-MiniLM-L6-v2"), "{}", stderr(&o));

    assert_eq!(
        method(&config(&["--model-dir", "off", "config", "--json"], &[])).0,
        "lexical"
    );
    let off = [("GROUNDCITE_MODEL_DIR", "off")];
    assert_eq!(method(&config(&["config", "--json"], &off)).0, "lexical");
}

#[test]
fn config_masks_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(BIN)
        .args(["config"])
        .current_dir(dir.path())
        .env("OPENAI_API_KEY", "sk-secret-value")
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(!text.contains("sk-secret-value"));
    assert!(text.contains("OPENAI_API_KEY: set, value hidden"), "{text}");
}

/// Terminal control bytes a readable report must never print raw: ESC (CSI,
/// OSC: title change, screen clear, OSC-8 hyperlinks), BEL, CR, the C1 CSI.
fn assert_no_controls(text: &str) {
    for bad in ['\u{1b}', '\u{07}', '\r', '\u{9b}', '\u{202e}'] {
        assert!(
            !text.contains(bad),
            "raw {:?} in the readable output:\n{}",
            bad,
            text.escape_debug()
        );
    }
}

/// Terminal escape injection: documents, file names
/// and answers with control sequences are printed escaped by `ask`,
/// `search` and `check`.
#[test]
fn readable_output_escapes_terminal_control_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let evil =
        "\u{1b}]0;pwned\u{07}\u{1b}[2J\u{1b}]8;;javascript:alert(1)\u{1b}\\click\u{1b}]8;;\u{1b}\\";
    let passages = dir.path().join("p.json");
    let passage = serde_json::json!([{
        "id": "evil-1",
        "text": format!("Reimbursements settle within 30 days of approval {evil}."),
        "source_url": format!("https://hr.example/{evil}"),
        "section": format!("Filing {evil} \u{9b}31m \u{202e}txt.exe")
    }]);
    std::fs::write(&passages, passage.to_string()).unwrap();
    let answer =
        format!("Reimbursements settle within 30 days of approval [1]. {evil} Also \u{9b}2J.");
    let o = run(
        &[
            "check",
            "--passages",
            passages.to_str().unwrap(),
            "--answer",
            &answer,
            "--fail-on",
            "none",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("\\x1b]0;pwned"), "escaped, visible: {text}");
    assert_no_controls(&text);

    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("policy \u{1b}[2J.md"),
        format!("# Expenses {evil}\n\nReimbursements settle within 30 days of approval. {evil}\n"),
    )
    .unwrap();
    let index = dir.path().join("idx");
    let index = index.to_str().unwrap();
    let o = run(
        &["ingest", "--index", index, docs.to_str().unwrap()],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_no_controls(&stdout(&o));
    let o = run(
        &["search", "--index", index, "reimbursements settle"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Reimbursements"), "{}", stdout(&o));
    assert_no_controls(&stdout(&o));
    let o = run(
        &[
            "ask",
            "--index",
            index,
            "How long do reimbursements take to settle?",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_no_controls(&stdout(&o));
}

/// `serve` writes structured logs
/// to stderr (`--log-format json`: one JSON object a line), the request id
/// on every line of a request, and never the API key.
#[test]
fn serve_logs_json_lines_with_the_request_id_and_no_secret() {
    use std::io::{BufRead, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(BIN)
        .args([
            "--log-format",
            "json",
            "serve",
            "--addr",
            &format!("127.0.0.1:{port}"),
        ])
        .current_dir(dir.path())
        .env_remove("GROUNDCITE_INDEX")
        .env_remove("GROUNDCITE_CONFIG")
        .env("GROUNDCITE_API_KEY", "topsecret-xyz")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut stream = loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) if started.elapsed() < std::time::Duration::from_secs(60) => {
                if let Some(status) = child.try_wait().unwrap() {
                    let mut err = String::new();
                    child
                        .stderr
                        .take()
                        .unwrap()
                        .read_to_string(&mut err)
                        .unwrap();
                    panic!("the server exited ({status}): {err}");
                }
                std::thread::sleep(std::time::Duration::from_millis(100))
            }
            Err(e) => panic!("the server did not start: {e}"),
        }
    };
    write!(
        stream,
        "GET /v1/search?q=reimbursement HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer topsecret-xyz\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let id = response
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("x-request-id: ")
                .map(str::to_string)
        })
        .expect("a request id");
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    let stderr = child.stderr.take().unwrap();
    let lines: Vec<String> = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .filter(|l| l.starts_with('{'))
        .collect();
    let _ = child.wait();
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        events.iter().any(|e| e["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("serving"))),
        "{lines:#?}"
    );
    let mine: Vec<&String> = lines.iter().filter(|l| l.contains(id.trim())).collect();
    assert!(
        !mine.is_empty(),
        "no line with the request id {id}: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("topsecret-xyz")),
        "{lines:#?}"
    );
}

/// `serve`'s stderr (text logs) from its start until it accepts a
/// connection, with `args` before the command.
fn serve_stderr(args: &[&str]) -> String {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(BIN)
        .args(args)
        .args(["serve", "--addr", &addr])
        .current_dir(dir.path())
        .env_remove("GROUNDCITE_INDEX")
        .env_remove("GROUNDCITE_CONFIG")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the server exited");
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let _ = child.wait();
    err
}

/// Log lines honour `--color`: a file or pipe gets no escape sequences
/// unless `--color always` asks for them.
#[test]
fn serve_logs_are_colourless_off_a_terminal_and_with_color_never() {
    for args in [&["--color", "never"][..], &[]] {
        let err = serve_stderr(args);
        assert!(err.contains("serving"), "{args:?}: {err}");
        assert!(!err.contains('\x1b'), "{args:?}: {err:?}");
    }
    let err = serve_stderr(&["--color", "always"]);
    assert!(err.contains('\x1b'), "{err:?}");
}

/// An empty index does not look healthy: an index that is
/// missing, or empty (a first ingest killed midway), is a clear error
/// naming the fix, not a "Not covered" answer with exit 0. The first-run
/// demo of the quick start is `ask_on_a_fresh_directory_uses_the_demo_corpus`.
#[test]
fn a_missing_or_empty_index_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    let o = run(
        &["ask", "--index", missing.to_str().unwrap(), "How long?"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("no index at"), "{}", stderr(&o));
    assert!(stderr(&o).contains("groundcite ingest"), "{}", stderr(&o));
    assert!(!missing.exists(), "a missing index is not created by `ask`");

    // A first ingest killed midway: the index exists, with no chunks.
    let empty = dir.path().join("empty");
    groundcite_index::Index::open_or_create(&empty).unwrap();
    for args in [
        vec!["ask", "--index", empty.to_str().unwrap(), "How long?"],
        vec![
            "search",
            "--index",
            empty.to_str().unwrap(),
            "reimbursement",
        ],
    ] {
        let o = run(&args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains("is empty"), "{}", stderr(&o));
        assert!(stderr(&o).contains("groundcite ingest"), "{}", stderr(&o));
    }
    // The same at the default location: no demo corpus slipped in.
    let default = dir.path().join(".groundcite/index");
    groundcite_index::Index::open_or_create(&default).unwrap();
    let o = run(&["ask", "How long does reimbursement take?"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("is empty"), "{}", stderr(&o));
}

/// An overall deadline: a model server that sends a
/// chunk every 300 ms forever never resets the clock of `ask --stream`: the
/// whole answer has a deadline (here 2 attempts × (1 s + 0.5 s to connect)).
#[test]
fn a_stream_that_never_ends_hits_the_total_deadline() {
    use std::io::{BufRead, Write};
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in server.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" {
                        break;
                    }
                    line.clear();
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                );
                for _ in 0..600 {
                    let chunk = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Reimbursements \"}}]}\n\n";
                    if conn.write_all(chunk.as_bytes()).is_err() {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(300));
                }
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("groundcite.toml"),
        "[openai]\ntimeout_secs = 1\nconnect_timeout_secs = 0.5\nmax_retries = 0\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let mut child = Command::new(BIN)
        .args([
            "ask",
            "--stream",
            "--generator",
            "openai",
            "--model",
            "m",
            "--base-url",
            &format!("http://127.0.0.1:{port}/v1"),
            "How long does reimbursement take?",
        ])
        .current_dir(dir.path())
        .env_remove("GROUNDCITE_INDEX")
        .env_remove("GROUNDCITE_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("ask --stream still running after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let o = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("deadline"), "{}", stderr(&o));
}

/// An endless input file is refused at a cap.
#[test]
fn an_endless_answer_file_is_refused_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    let o = run(
        &["check", "--passages", &p, "--answer-file", "/dev/zero"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("larger than 256 MiB"), "{}", stderr(&o));
}

/// Runs the binary with no configuration from the environment at all
/// (lexical only, no key, no model folder).
fn run_clean(args: &[&str], dir: &Path) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("GROUNDCITE_") || key.ends_with("_API_KEY") {
            cmd.env_remove(key);
        }
    }
    cmd.output().unwrap()
}

fn check_answer(dir: &Path, passages: &str, answer: &str, extra: &[&str]) -> Output {
    let mut args = vec!["check", "--passages", passages, "--answer", answer];
    args.extend_from_slice(extra);
    run_clean(&args, dir)
}

/// `check` exits 1 on what a script should fail on
/// (contradicted, unsupported, uncited, a citation of a passage never
/// sent), says which on stderr, and `--fail-on` chooses.
#[test]
fn check_exit_codes_follow_the_findings() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    let bad = "Reimbursements settle in 14 days [2]. The office is in Paris. Claims are filed within 60 days [7].";
    let o = check_answer(dir.path(), &p, bad, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("contradicted") && err.contains("unverified") && err.contains("uncited"),
        "{err}"
    );
    let o = check_answer(dir.path(), &p, bad, &["--fail-on", "none"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = check_answer(dir.path(), &p, bad, &["--fail-on", "refused"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = check_answer(dir.path(), &p, bad, &["--fail-on", "unverified", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let good = "Reimbursements settle within 30 days of approval [2].";
    let o = check_answer(dir.path(), &p, good, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("Checked: "), "{}", stdout(&o));
    // Without support checking, "Checked" is never said.
    let o = check_answer(dir.path(), &p, good, &["--no-support"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("Checked"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("support was not checked"),
        "{}",
        stdout(&o)
    );
    let o = run_clean(&["check", "--help"], dir.path());
    assert!(stdout(&o).contains("Exit codes:"), "{}", stdout(&o));
    assert!(stdout(&o).contains("--fail-on"), "{}", stdout(&o));
}

/// `check` reads the configuration like every other command (it used to
/// check with the defaults whatever groundcite.toml, the environment or
/// `--set` said): a tighter threshold flags more, and a verifier that
/// cannot run is an error that says what it needs, never a silent fallback.
#[test]
fn check_follows_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    // "settle" and "approval" are missing: under the default threshold
    // (1.0) the merged sentence passes; at 0.5 it is unsupported.
    let answer = "Reimbursements are paid within 30 days of approval [2].";
    let o = check_answer(dir.path(), &p, answer, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = check_answer(
        dir.path(),
        &p,
        answer,
        &[
            "--json",
            "--set",
            "check.support.missing_weight_threshold=0.2",
            "--set",
            "check.support.missing_fraction=0.05",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"unsupported\""), "{}", stdout(&o));
    std::fs::write(
        dir.path().join("groundcite.toml"),
        "[check]\nverifier = \"llm\"\n",
    )
    .unwrap();
    let o = check_answer(dir.path(), &p, answer, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("judge.backend"), "{}", stderr(&o));
    let o = check_answer(
        dir.path(),
        &p,
        answer,
        &["--set", "check.verifier=semantic"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("model_dir"), "{}", stderr(&o));
}

/// The readable report leads with the correction, the
/// flagged sentence after it; the machine reasons come with `--reasons`.
#[test]
fn check_speaks_plainly_and_gives_reasons_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_passages(dir.path());
    let answer = "Reimbursements settle in 14 days [2].";
    let o = check_answer(dir.path(), &p, answer, &[]);
    let text = stdout(&o);
    let correction = text
        .find("The source says 30 days, not 14 days.")
        .expect(&text);
    let sentence = text
        .find("Reimbursements settle in 14 days [2].")
        .expect(&text);
    assert!(correction < sentence, "{text}");
    for jargon in ["status:", "grounded:", "number_mismatch", "no_alignment"] {
        assert!(!text.contains(jargon), "{jargon} in {text}");
    }
    let o = check_answer(dir.path(), &p, answer, &["--reasons"]);
    assert!(
        stdout(&o).contains(r#"number_mismatch: "14 days" vs "30 days""#),
        "{}",
        stdout(&o)
    );
    let o = check_answer(dir.path(), &p, answer, &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["sentences"][0]["message"],
        "The source says 30 days, not 14 days."
    );
}

/// `ask` exits 0 by default, even on a refusal;
/// `--fail-on refused` makes a refusal exit 1.
#[test]
fn ask_fails_on_what_it_is_told_to() {
    let dir = tempfile::tempdir().unwrap();
    let q = "What is the dental plan for pets?";
    let o = run_clean(&["ask", q], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_clean(&["ask", "--fail-on", "refused", q], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("refused"), "{}", stderr(&o));
    let o = run_clean(
        &[
            "ask",
            "--fail-on",
            "refused",
            "How long does reimbursement take?",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// The one `groundcite: error:` line of a failed command, which says
/// `needle` exactly once.
fn assert_one_error_line(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stdout(o));
    let err = stderr(o);
    // Log lines (retries are logged at warn) are not the error report.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("groundcite: error"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert_eq!(lines[0].matches(needle).count(), 1, "said twice: {err}");
}

/// Each error is printed once, not once per link of
/// its chain: a missing key, an unreadable audit database, a broken model
/// folder.
#[test]
fn every_error_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_clean(
        &["ask", "--generator", "anthropic", "How long?"],
        dir.path(),
    );
    assert_one_error_line(&o, "is not set");
    // A refused connection (the demo index is ingested first, here).
    let o = run_clean(
        &[
            "ask",
            "--generator",
            "openai",
            "--base-url",
            "http://127.0.0.1:9",
            "How long does reimbursement take?",
        ],
        dir.path(),
    );
    assert_one_error_line(&o, "could not reach the model server");
    let db = dir.path().join("audit.sqlite");
    std::fs::write(&db, "this is not a database, it is text").unwrap();
    let o = run_clean(&["audit", "--db", db.to_str().unwrap()], dir.path());
    assert_one_error_line(&o, "not a database");
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::write(model.join("config.json"), "{").unwrap();
    let o = run_clean(
        &["--model-dir", model.to_str().unwrap(), "config"],
        dir.path(),
    );
    assert_one_error_line(&o, "config.json");
}

/// A misspelt configuration key is an error naming it
/// and the key meant, never silently ignored.
#[test]
fn an_unknown_config_key_is_an_error_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("groundcite.toml");
    std::fs::write(&file, "topk = 5\n").unwrap();
    let o = run_clean(&["config"], dir.path());
    assert_one_error_line(&o, "topk");
    assert!(
        stderr(&o).contains("did you mean `top_k`?"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&file, "[check]\nbad_id_polcy = \"strip\"\n").unwrap();
    let o = run_clean(&["search", "leave"], dir.path());
    assert!(
        stderr(&o).contains("`check.bad_id_policy`"),
        "{}",
        stderr(&o)
    );
}

/// A missing `--index` is an error for `search` too,
/// and nothing is created there.
#[test]
fn search_on_a_missing_index_is_an_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("does-not-exist");
    let o = run_clean(
        &["--index", missing.to_str().unwrap(), "search", "leave"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("groundcite ingest"), "{}", stderr(&o));
    assert!(!missing.exists());
}

/// Passages may label themselves with `title`; a
/// misspelt field is named with the field meant; a file that is not JSON
/// says what format is expected.
#[test]
fn passages_files_take_title_and_name_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.json");
    std::fs::write(
        &p,
        r#"[{"id": "a", "title": "Leave", "text": "Staff get 13 days of leave."}]"#,
    )
    .unwrap();
    let p = p.to_str().unwrap();
    let o = check_answer(dir.path(), p, "Staff get 13 days of leave [1].", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("[1] Leave"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("(no label)"), "{}", stdout(&o));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "id,text\na,Staff get 13 days.\n").unwrap();
    let o = check_answer(dir.path(), bad.to_str().unwrap(), "x [1].", &[]);
    assert_one_error_line(&o, "not valid JSON");
    assert!(
        stderr(&o).contains("an array of passages"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&bad, r#"[{"id": "a", "txt": "Staff get 13 days."}]"#).unwrap();
    let o = check_answer(dir.path(), bad.to_str().unwrap(), "x [1].", &[]);
    assert!(
        stderr(&o).contains("unknown field `txt`; did you mean `text`?"),
        "{}",
        stderr(&o)
    );
}

/// The first-run demo says what it does; the demo's
/// hand-off ("contact People Ops") stays on the demo index.
#[test]
fn the_demo_says_so_and_its_handoff_stays_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_clean(&["ask", "What is the dental plan for pets?"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("demo handbook"), "{}", stderr(&o));
    assert!(stdout(&o).contains("People Ops"), "{}", stdout(&o));
    let o = run_clean(&["ask", "What is the dental plan for pets?"], dir.path());
    assert!(
        !stderr(&o).contains("demo handbook"),
        "said once: {}",
        stderr(&o)
    );

    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("leave.md"),
        "# Leave\n\nStaff get 13 days of annual leave.\n",
    )
    .unwrap();
    let index = dir.path().join("own");
    let index = index.to_str().unwrap();
    let o = run_clean(
        &["--index", index, "ingest", docs.to_str().unwrap()],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_clean(
        &["--index", index, "ask", "What is the dental plan for pets?"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("People Ops"), "{}", stdout(&o));
    assert!(stdout(&o).contains("No answer: "), "{}", stdout(&o));
    assert!(!stdout(&o).contains("refused ("), "{}", stdout(&o));
}

/// `ask` leads with the problems, the correction before
/// the sentence, and only then the answer; no `status:` jargon.
#[test]
fn ask_leads_with_the_correction() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"["Reimbursements settle within 14 days of approval [1]."]"#,
    )
    .unwrap();
    let o = run_clean(
        &[
            "ask",
            "--generator",
            "scripted",
            "--script",
            script.to_str().unwrap(),
            "How long does reimbursement take?",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("Needs review: "), "{text}");
    let correction = text
        .find("The source says 30 days, not 14 days.")
        .expect(&text);
    let answer = text.rfind("Reimbursements settle within 14 days").unwrap();
    assert!(correction < answer, "{text}");
    for jargon in ["status:", "grounded:", "number_mismatch", "refused ("] {
        assert!(!text.contains(jargon), "{jargon} in {text}");
    }
}

/// `eval questions`: recall, facts and refusals over labelled questions,
/// as text (with `--verbose`, one line per question) and as JSON. Lexical
/// whatever the environment says (no model), so the figures are fixed.
#[test]
fn eval_questions_reports_recall_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let index = index.to_str().unwrap();
    let pages = groundcite_testdata::fixture("corpora/tts-handbook/pages");
    let questions = dir.path().join("q.jsonl");
    std::fs::write(
        &questions,
        concat!(
            r#"{"id": "a1", "question": "What leave types are there?", "answerable": true, "gold": ["travel-and-leave/leave.md"]}"#,
            "\n",
            r#"{"id": "u1", "question": "Which dental insurance carrier covers my spouse?", "answerable": false, "hard": true}"#,
            "\n"
        ),
    )
    .unwrap();
    let lexical = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env_remove("GROUNDCITE_INDEX")
            .env_remove("GROUNDCITE_CONFIG")
            .env("GROUNDCITE_MODEL_DIR", "off")
            .output()
            .unwrap()
    };
    let o = lexical(&[
        "--index",
        index,
        "ingest",
        pages.to_str().unwrap(),
        "--handbook",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("no chunk vectors"), "{}", stdout(&o));
    let file = questions.to_str().unwrap();

    let o = lexical(&["--index", index, "eval", "questions", file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["retrieval"], "lexical");
    assert_eq!(
        (v["answerable"].as_u64(), v["recall_at_5"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(v["outcomes"][0]["gold_rank"], 1);
    assert_eq!(
        (v["unanswerable"].as_u64(), v["hard"].as_u64()),
        (Some(1), Some(1))
    );
    let refused = v["refused_unanswerable"].as_u64().unwrap();
    assert_eq!(v["refused_hard"].as_u64(), Some(refused));
    let by_reason: u64 = v["unanswerable_refusals"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(by_reason, refused);
    // Without a model no unit is judged: no ranking, no separation.
    assert_eq!(v["ranked"].as_u64(), Some(0));
    assert!(
        v["auc_unanswerable"].is_null() && v["auc_hard"].is_null(),
        "{v}"
    );
    assert!(v["outcomes"][0]["unit_score"].is_null(), "{v}");

    let o = lexical(&["--index", index, "eval", "questions", file, "--verbose"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("retrieval: lexical"), "{text}");
    assert!(text.contains("gold page in the top 1: 1/1"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("a1 ") && l.contains("gold@1")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("u1 ") && l.contains("near-miss")),
        "{text}"
    );
    assert!(text.contains("hard near-misses refused:"), "{text}");
    assert!(!text.contains("answerability AUC"), "{text}");
}

/// The demo index made before the model was fetched is embedded once the
/// model is in the default place, and answered with it, rather than
/// refused: the first command of the README keeps working after the fetch.
#[test]
fn the_demo_index_is_embedded_once_the_model_is_fetched() {
    let Some(model) = groundcite_testdata::model_dir("the demo index with the model") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ask = ["ask", "--no-audit", "How long does reimbursement take?"];
    let o = run_clean(&[&["--model-dir", "off"][..], &ask].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("retrieval: lexical"), "{}", stdout(&o));

    let place = dir.path().join(".groundcite/models");
    std::fs::create_dir_all(&place).unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize(&model).unwrap(),
        place.join("all-MiniLM-L6-v2"),
    )
    .unwrap();
    let o = run_clean(&ask, dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("retrieval: hybrid"), "{out}");
    assert!(out.contains("30 days"), "{out}");
}

/// An index ingested with the embedding model, asked without it, answers
/// lexically and says so with the fix, never silently.
#[test]
fn an_index_with_vectors_asked_without_the_model_warns_and_names_the_fix() {
    let Some(model) = groundcite_testdata::model_dir("the lexical-fallback warning") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("leave.md"),
        "# Leave\n\nStaff get 25 days of annual leave a year.\n",
    )
    .unwrap();
    let model = model.to_str().unwrap();
    let o = run_clean(
        &["--model-dir", model, "--index", "idx", "ingest", "docs"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_clean(
        &[
            "--index",
            "idx",
            "ask",
            "--no-audit",
            "How many days of annual leave?",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("no embedding model is configured") && err.contains("--model-dir"),
        "{err}"
    );
    // With the model: no warning.
    let o = run_clean(
        &[
            "--model-dir",
            model,
            "--index",
            "idx",
            "ask",
            "--no-audit",
            "How many days of annual leave?",
        ],
        dir.path(),
    );
    assert!(!stderr(&o).contains("no embedding model"), "{}", stderr(&o));
}
