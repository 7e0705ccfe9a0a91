//! The CLI's consistency: `--json` on every command, colour only
//! where it belongs, the audit log beside the index (and `ask` audited),
//! `-k` and `--top-k` alike, readable search hits, and every configuration
//! key from the file, the environment or a flag with its origin.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_groundcite");

/// The binary with no configuration from the environment (lexical only,
/// no key, no model folder), plus `env`.
fn run_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("GROUNDCITE_") || key.ends_with("_API_KEY") || key == "NO_COLOR" {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn run(args: &[&str], dir: &Path) -> Output {
    run_env(args, dir, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 0 and one JSON document on stdout.
fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}{}", stdout(o), stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn pages() -> String {
    let pages = groundcite_testdata::fixture("corpora/tts-handbook/pages");
    pages.to_str().unwrap().to_string()
}

fn write_passages(dir: &Path) -> String {
    let p = dir.join("p.json");
    std::fs::write(
        &p,
        r#"[{"id": "hr-2", "text": "Reimbursements settle within 30 days of approval.", "section": "Reimbursement"}]"#,
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

/// `--json` on every command (config, ingest, search,
/// ask, check, prompt, eval cases / halueval / questions, audit and each
/// of its subcommands): one JSON document on stdout; an error stays on
/// stderr with exit 2 (`db status --json` is covered with PostgreSQL in
/// `crates/pg`'s tests and `bench/replicas.sh`).
#[test]
fn json_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let idx = d.join("idx");
    let idx = idx.to_str().unwrap();
    let v = json(&run(&["--index", idx, "ingest", &pages(), "--json"], d));
    assert!(v["files_seen"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["errors"], serde_json::json!([]));
    assert!(v["chunks_in_index"].as_u64().unwrap() > 0, "{v}");

    let v = json(&run(&["--index", idx, "config", "--json"], d));
    assert_eq!(v["settings"]["top_k"], 5);
    assert_eq!(v["origins"]["index"]["from"], "flag");
    assert_eq!(v["retrieval"]["method"], "lexical");

    let v = json(&run(
        &["--index", idx, "search", "--json", "annual leave"],
        d,
    ));
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v}");

    let v = json(&run(
        &[
            "--index",
            idx,
            "ask",
            "--json",
            "What leave types are there?",
        ],
        d,
    ));
    assert!(v.get("sentences").is_some(), "{v}");

    let p = write_passages(d);
    let v = json(&run(
        &[
            "check",
            "--passages",
            &p,
            "--answer",
            "Reimbursements settle within 30 days of approval [1].",
            "--json",
        ],
        d,
    ));
    assert_eq!(v["status"], "ok");
    let v = json(&run(
        &[
            "prompt",
            "--passages",
            &p,
            "--question",
            "How long?",
            "--json",
        ],
        d,
    ));
    assert!(v["system"].is_string());

    let dev = groundcite_testdata::fixture("cases/dev.jsonl");
    let v = json(&run(&["eval", "cases", dev.to_str().unwrap(), "--json"], d));
    assert!(v["cases"].as_u64().unwrap() > 0, "{v}");
    assert!(v["all"]["balanced_accuracy"].is_number(), "{v}");
    assert_eq!(v["verifier"], "lexical");

    let halu = d.join("halu.jsonl");
    std::fs::write(
        &halu,
        r#"{"knowledge": "The Eiffel Tower is in Paris.", "question": "Where is the Eiffel Tower?", "right_answer": "The Eiffel Tower is in Paris.", "hallucinated_answer": "The Eiffel Tower is in Rome."}"#,
    )
    .unwrap();
    let v = json(&run(
        &["eval", "halueval", halu.to_str().unwrap(), "--json"],
        d,
    ));
    assert_eq!(v["rows"], 1);
    assert!(v["balanced_accuracy"].is_number(), "{v}");

    let questions = d.join("q.jsonl");
    std::fs::write(
        &questions,
        r#"{"id": "a1", "question": "What leave types are there?", "answerable": true, "gold": ["travel-and-leave/leave.md"]}"#,
    )
    .unwrap();
    let v = json(&run(
        &[
            "--index",
            idx,
            "eval",
            "questions",
            questions.to_str().unwrap(),
            "--json",
        ],
        d,
    ));
    assert_eq!(v["answerable"], 1);

    // The `ask` above was audited beside the index.
    let v = json(&run(&["--index", idx, "audit", "--json"], d));
    assert!(v.is_array(), "{v}");
    let export = d.join("all.jsonl");
    let v = json(&run(
        &[
            "--index",
            idx,
            "audit",
            "--export",
            export.to_str().unwrap(),
            "--json",
        ],
        d,
    ));
    assert_eq!(v["written"], 1, "{v}");
    let v = json(&run(
        &[
            "--index",
            idx,
            "audit",
            "prune",
            "--max-age-days",
            "1",
            "--json",
        ],
        d,
    ));
    assert_eq!(v["left"], 1, "{v}");

    // Errors stay on stderr with exit 2, stdout empty.
    let o = run(
        &["--index", idx, "search", "--json", "--top-k", "0", "leave"],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(stderr(&o).contains("top_k"), "{}", stderr(&o));
}

/// Colour on a terminal only. Piped output (as here)
/// has no escape codes, and neither has `--color never`; `--color always`
/// colours the verdicts, the headline and errors; `NO_COLOR` turns `auto`
/// off.
#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = write_passages(d);
    let answer = "Reimbursements settle in 14 days [1].";
    let check = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["check", "--passages", p.as_str(), "--answer", answer];
        args.extend_from_slice(extra);
        run_env(&args, d, env)
    };
    let piped = check(&[], &[]);
    assert_eq!(piped.status.code(), Some(1));
    assert!(
        stdout(&piped).contains("The source says 30 days"),
        "{}",
        stdout(&piped)
    );
    assert!(!stdout(&piped).contains('\u{1b}'), "{}", stdout(&piped));
    assert!(!stderr(&piped).contains('\u{1b}'), "{}", stderr(&piped));
    let never = check(&["--color", "never"], &[]);
    assert!(!stdout(&never).contains('\u{1b}'));
    let always = check(&["--color", "always"], &[]);
    let text = stdout(&always);
    // Red for the contradiction, yellow for the "Needs review" headline.
    assert!(
        text.contains("\u{1b}[1m\u{1b}[31m") || text.contains("\u{1b}[31m"),
        "{text:?}"
    );
    assert!(text.contains("\u{1b}[33m"), "{text:?}");
    let no_color = check(&[], &[("NO_COLOR", "1")]);
    assert!(!stdout(&no_color).contains('\u{1b}'));
    let json = check(&["--color", "always", "--json"], &[]);
    assert!(!stdout(&json).contains('\u{1b}'), "JSON is never coloured");
    let err = run(
        &[
            "--color",
            "always",
            "check",
            "--passages",
            "/nonexistent.json",
            "--answer",
            "x",
        ],
        d,
    );
    assert_eq!(err.status.code(), Some(2));
    assert!(stderr(&err).contains("\u{1b}["), "{}", stderr(&err));
    let err = run(
        &["check", "--passages", "/nonexistent.json", "--answer", "x"],
        d,
    );
    assert!(!stderr(&err).contains('\u{1b}'), "{}", stderr(&err));
}

/// The audit log is beside the index (not in the
/// working directory), `ask` answers are audited as the service audits
/// them, and `--no-audit` or `audit_path = "off"` writes none.
#[test]
fn ask_is_audited_in_the_index_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let idx = d.join("indexes/tts");
    let idx = idx.to_str().unwrap();
    let o = run(&["--index", idx, "ingest", &pages()], &work);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        &["--index", idx, "ask", "What leave types are there?"],
        &work,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = d.join("indexes/tts/audit.sqlite");
    assert!(log.exists(), "the audit log is inside the index folder");
    assert!(
        !d.join("indexes/audit.sqlite").exists(),
        "nothing in the folder that holds the index"
    );
    assert!(
        !work.join(".groundcite").exists(),
        "nothing in the working directory"
    );
    let o = run(
        &[
            "--index",
            idx,
            "ask",
            "--no-audit",
            "What leave types are there?",
        ],
        &work,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_env(
        &["--index", idx, "ask", "Which dental plan covers pets?"],
        &work,
        &[("GROUNDCITE_AUDIT_PATH", "off")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let export = d.join("audit.jsonl");
    let o = run(
        &[
            "--index",
            idx,
            "audit",
            "--export",
            export.to_str().unwrap(),
        ],
        &work,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "one answer audited, two not: {records:?}");
    let r = &records[0];
    assert_eq!(r["kind"], "ask");
    assert_eq!(r["question"], "What leave types are there?");
    assert!(!r["passage_ids"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["request_id"].as_str().unwrap().len(), 32, "{r}");
    let report = match &r["report"] {
        serde_json::Value::String(text) => serde_json::from_str(text).unwrap(),
        other => other.clone(),
    };
    assert_eq!(
        report["question"], "What leave types are there?",
        "{report}"
    );
}

/// `-k` and `--top-k` are one option with one rule
/// (1..=50, as `ask --top-k` and `top_k`); hits read as text (no `<em>`,
/// no Markdown marks) and the help explains the scores.
#[test]
fn search_options_and_hits_read_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let docs = d.join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("travel.md"),
        "---\ntitle: Travel <em>before</em> onboarding\n---\n\nBook travel **before** your first day with the [travel desk](https://travel.example/desk) and keep `receipts`.\n",
    )
    .unwrap();
    let idx = d.join("idx");
    let idx = idx.to_str().unwrap();
    let o = run(&["--index", idx, "ingest", docs.to_str().unwrap()], d);
    assert!(o.status.success(), "{}", stderr(&o));
    for flag in ["-k", "--top-k", "--k"] {
        let o = run(&["--index", idx, "search", flag, "0", "travel"], d);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(
            stderr(&o).contains("top_k = 0 (expected 1..=50)"),
            "{flag}: {}",
            stderr(&o)
        );
        let v = json(&run(
            &["--index", idx, "search", flag, "1", "--json", "travel"],
            d,
        ));
        assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{flag}");
    }
    let o = run(&["--index", idx, "ask", "--top-k", "0", "travel"], d);
    assert!(
        stderr(&o).contains("top_k = 0 (expected 1..=50)"),
        "{}",
        stderr(&o)
    );
    let o = run(&["--index", idx, "search", "travel desk"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Travel before onboarding"), "{text}");
    assert!(!text.contains("<em>") && !text.contains("**"), "{text}");
    assert!(!text.contains("](https://"), "{text}");
    assert!(text.contains("bm25"), "{text}");
    let help = stdout(&run(&["search", "--help"], d));
    assert!(help.contains("1.00 means every term was found"), "{help}");
    assert!(help.contains("The words to search for"), "{help}");
}

/// `ask --stream` prints each sentence once (as it is
/// validated), not again after the stream.
#[test]
fn ask_stream_prints_the_answer_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run(&["ask", "--stream", "How long does reimbursement take?"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let sentence = "Reimbursements settle within 30 days of approval";
    assert_eq!(
        text.matches(sentence).count(),
        2,
        "once streamed, once quoted in Sources: {text}"
    );
    assert!(text.contains("[supported]"), "{text}");
    let plain = stdout(&run(&["ask", "How long does reimbursement take?"], d));
    assert_eq!(
        plain.matches(sentence).count(),
        2,
        "the answer and its source quote: {plain}"
    );
}

/// Every key from the file, the environment (nested
/// keys with `__`) or a flag (`--set`), `config --show-origin` says where
/// each value came from, with `--json`; an unknown variable or `--set` key
/// is an error naming the key meant.
#[test]
fn every_key_from_file_env_or_flag_with_its_origin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("groundcite.toml");
    std::fs::write(&file, "top_k = 3\n[check]\nunsupported_policy = \"drop\"\n").unwrap();
    let env = [
        ("GROUNDCITE_CHECK__BAD_ID_POLICY", "strip"),
        ("GROUNDCITE_CHECK__LIMITS__MAX_MARKERS", "99"),
        ("GROUNDCITE_OPENAI__TIMEOUT_SECS", "180"),
    ];
    let o = run_env(
        &[
            "config",
            "--show-origin",
            "--set",
            "answerability.min_answer=0.5",
            "--top-k",
            "4",
        ],
        d,
        &env,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("{key} missing: {text}"))
            .to_string()
    };
    assert!(line("check.bad_id_policy").contains("\"strip\""), "{text}");
    assert!(
        line("check.bad_id_policy").ends_with("# env GROUNDCITE_CHECK__BAD_ID_POLICY"),
        "{text}"
    );
    assert!(line("check.limits.max_markers").contains("= 99"), "{text}");
    assert!(
        line("openai.timeout_secs").ends_with("# env GROUNDCITE_OPENAI__TIMEOUT_SECS"),
        "{text}"
    );
    assert!(
        line("check.unsupported_policy").ends_with("# file groundcite.toml"),
        "{text}"
    );
    assert!(
        line("top_k").contains("= 4"),
        "the flag over the file: {text}"
    );
    assert!(line("top_k").ends_with("# flag --top-k"), "{text}");
    assert!(
        line("answerability.min_answer").ends_with("# flag --set answerability.min_answer"),
        "{text}"
    );
    assert!(line("handoff").ends_with("# default"), "{text}");

    let v = json(&run_env(&["config", "--json"], d, &env));
    assert_eq!(v["settings"]["check"]["bad_id_policy"], "strip");
    assert_eq!(
        v["origins"]["check.bad_id_policy"],
        serde_json::json!({"from": "env", "name": "GROUNDCITE_CHECK__BAD_ID_POLICY"})
    );
    assert_eq!(v["origins"]["top_k"]["from"], "file");

    // The environment reaches the commands, not only `config`.
    std::fs::remove_file(&file).unwrap();
    let o = run_env(
        &["search", "reimbursement"],
        d,
        &[("GROUNDCITE_TOP_K", "2")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(" 1.") && stdout(&o).contains("(2 hits"),
        "{}",
        stdout(&o)
    );

    // Unknown keys, one error line with the key meant.
    for (args, env, meant) in [
        (
            vec!["config"],
            vec![("GROUNDCITE_TOPK", "3")],
            "did you mean `GROUNDCITE_TOP_K`",
        ),
        (
            vec!["config"],
            vec![("GROUNDCITE_CHECK_BAD_ID_POLICY", "refuse")],
            "did you mean `GROUNDCITE_CHECK__BAD_ID_POLICY`",
        ),
        (
            vec!["--set", "chek.verifier=lexical", "config"],
            vec![],
            "unknown key `chek.verifier`",
        ),
        (
            vec!["--set", "check.verifer=lexical", "config"],
            vec![],
            "did you mean `check.verifier`",
        ),
    ] {
        let o = run_env(&args, d, &env);
        assert_eq!(o.status.code(), Some(2), "{args:?} {env:?}");
        let err = stderr(&o);
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("groundcite: error"))
            .collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].contains(meant), "{err}");
    }
    // A value of the wrong type names the variable.
    let o = run_env(
        &["config"],
        d,
        &[("GROUNDCITE_CHECK__LIMITS__MAX_MARKERS", "many")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("GROUNDCITE_CHECK__LIMITS__MAX_MARKERS"),
        "{}",
        stderr(&o)
    );
}
