//! `groundcite check`: markers, sentences, support and sources of answers,
//! one at a time or a JSONL file of cases.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use groundcite_core::check::CheckOutput;
use groundcite_engine::Checker;
use groundcite_verify::VerifierKind;

use crate::args::{CommonArgs, GeneratorArgs};
use crate::render::Finding;
use crate::{input, render};

/// Exit codes, after the options in `groundcite check --help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  nothing named by --fail-on was found
  1  a finding named by --fail-on (by default: a contradicted, unsupported or
     uncited sentence, or a citation of a passage never sent), or with --cases
     a line that could not be checked (the others are still checked)
  2  usage or fatal error (unreadable file, malformed passages)

Examples:
  groundcite check --passages passages.json --answer 'Refunds take 14 days [1].'
  groundcite check --passages passages.json --answer-file answer.txt --json
  groundcite check --cases answers.jsonl --fail-on contradicted,unverified
  groundcite check --cases answers.jsonl --fields id,status,grounded,counts --jobs 2
  groundcite check --passages p.json --answer-file a.txt --fail-on none   # report only";

#[derive(Args)]
#[command(after_help = EXIT_CODES)]
pub struct CheckArgs {
    /// A JSONL file of cases (format of shared/cases/README.md; `-` reads
    /// standard input); writes one JSON report per line, in input order.
    /// Cases are read and checked as they come, in parallel, in bounded
    /// memory whatever the file's size.
    #[arg(long, conflicts_with_all = ["passages", "answer", "answer_file"])]
    cases: Option<PathBuf>,
    /// With --cases: how many cases are checked at once [default: the
    /// cores available]. The output does not depend on it.
    #[arg(long, requires = "cases", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// With --cases: only these fields of each report (comma-separated,
    /// e.g. `id,status,grounded,counts`), for compact logs of large
    /// batches. A line that could not be checked keeps `id`, `line` and
    /// `error`.
    #[arg(long, requires = "cases", value_delimiter = ',')]
    fields: Vec<String>,
    /// A JSON file with the passages sent, in order.
    #[arg(long, required_unless_present = "cases")]
    passages: Option<PathBuf>,
    /// The answer to check.
    #[arg(long, conflicts_with = "answer_file")]
    answer: Option<String>,
    /// A file holding the answer to check.
    #[arg(long)]
    answer_file: Option<PathBuf>,
    /// The question (completes elliptic answers such as "Delhi [1].").
    #[arg(long)]
    question: Option<String>,
    /// Print JSON instead of the readable report.
    #[arg(long)]
    json: bool,
    /// Skip support checking (structure and resolution only).
    #[arg(long)]
    no_support: bool,
    /// Exit 1 when any of these is found (comma-separated; `none`: always
    /// exit 0 after a check).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "contradicted,unsupported,unverified,uncited"
    )]
    fail_on: Vec<Finding>,
    /// Also print the machine reasons of each verdict (as in --json).
    #[arg(long)]
    reasons: bool,
}
/// The check under the configuration (`[check]` of groundcite.toml, the
/// environment, `--set`): the configured verifier, with the model for
/// `semantic` (and the judge's backend for `llm`).
pub fn run_check(common: &CommonArgs, args: CheckArgs) -> Result<ExitCode> {
    let mut settings = crate::args::settings(common, &GeneratorArgs::default())?;
    if args.no_support {
        settings.check.verify_support = false;
    }
    let embedder = match settings.check.verifier {
        VerifierKind::Lexical | VerifierKind::Trained => None,
        VerifierKind::Semantic | VerifierKind::Llm => groundcite_engine::load_embedder(&settings)?,
    };
    let checker = Checker::from_settings(&settings, embedder)?;
    if let Some(path) = &args.cases {
        let jobs = match args.jobs {
            Some(n) => usize::from(n),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let fields = report_fields(&args.fields)?;
        return check_cases(path, &checker, &args.fail_on, jobs, fields.as_deref());
    }
    let passages_path = args.passages.as_ref().context("--passages is required")?;
    let passages = input::read_passages(passages_path)?;
    let answer = match (&args.answer, &args.answer_file) {
        (Some(a), _) => a.clone(),
        (None, Some(path)) => input::read_text(path)?,
        (None, None) => bail!("give the answer with --answer TEXT or --answer-file FILE"),
    };
    if answer.trim().is_empty() {
        bail!("the answer is empty: nothing to check");
    }
    let output = checker.check(args.question.as_deref(), &passages, &answer);
    let mut out = anstream::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &output)?;
        writeln!(out)?;
    } else {
        render::report(&mut out, &output, !args.no_support, args.reasons)?;
    }
    out.flush()?;
    let found = render::found(&output.findings, &output.counts, output.refusal.is_some());
    Ok(render::exit_code(&found, &args.fail_on))
}

/// At most this many cases are held (read, checked, waiting to be
/// written) per window; with [`WINDOW_BYTES`], what bounds the memory of a
/// batch check whatever the file's size.
const WINDOW_CASES: usize = 1024;
/// A window closes once its lines hold this many bytes.
const WINDOW_BYTES: usize = 16 * 1024 * 1024;

/// One case checked: its line of output, and what it found (or the error
/// that kept it from being checked).
struct Checked {
    json: Vec<u8>,
    found: Vec<Finding>,
    error: Option<String>,
}

/// `check --cases`: the cases are read in windows; the cases of a window
/// are parsed, checked and serialised on `jobs` threads while the previous
/// window is written, and the reports come out in input order, so the
/// output is the same for any `jobs`. A line that cannot be checked gets
/// an error line and the others go on; a read error stops the batch after
/// writing every report before it.
fn check_cases(
    path: &std::path::Path,
    checker: &Checker,
    fail_on: &[Finding],
    jobs: usize,
    fields: Option<&[String]>,
) -> Result<ExitCode> {
    use rayon::prelude::*;
    let mut lines = input::case_lines(path)?;
    let name = lines.name().to_string();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("groundcite-check-{i}"))
        .build()
        .context("cannot start the checking threads")?;
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<Checked>>(1);
    let (read, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_checked(receiver));
        let read = (|| -> Result<()> {
            let mut ended = false;
            while !ended {
                let mut window = Vec::new();
                let mut bytes = 0;
                let mut failure = None;
                while window.len() < WINDOW_CASES && bytes < WINDOW_BYTES {
                    match lines.next() {
                        Some(Ok(line)) => {
                            bytes += line.bytes.len();
                            window.push(line);
                        }
                        Some(Err(e)) => {
                            failure = Some(e);
                            break;
                        }
                        None => {
                            ended = true;
                            break;
                        }
                    }
                }
                // The lines read before a read error are still checked and written.
                let checked: Vec<Checked> = pool.install(|| {
                    window
                        .par_iter()
                        .map(|raw| check_line(&name, raw, checker, fields))
                        .collect::<Result<_>>()
                })?;
                if sender.send(checked).is_err() {
                    // The writer stopped; its error is the one to report.
                    return Ok(());
                }
                if let Some(e) = failure {
                    return Err(e);
                }
            }
            Ok(())
        })();
        drop(sender);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the report writer panicked")));
        (read, written)
    });
    let (failed, found) = written?;
    read?;
    if failed > 0 {
        eprintln!("groundcite: {failed} case(s) could not be checked");
        return Ok(ExitCode::from(1));
    }
    Ok(render::exit_code(&found, fail_on))
}

/// Parses, checks and serialises one line of a case file.
fn check_line(
    name: &str,
    raw: &input::RawLine,
    checker: &Checker,
    fields: Option<&[String]>,
) -> Result<Checked> {
    let line = input::parse_case(name, raw);
    let mut json = Vec::new();
    match line.case {
        Ok(case) => {
            let mut output: CheckOutput =
                checker.check(case.question.as_deref(), &case.passages, &case.answer);
            output.id = Some(case.id);
            let found = render::found(&output.findings, &output.counts, output.refusal.is_some());
            match fields {
                None => serde_json::to_writer(&mut json, &output)?,
                Some(fields) => {
                    // The fields as the whole report writes them, in the order asked.
                    let whole = serde_json::to_string(&output)?;
                    let all: std::collections::HashMap<&str, &serde_json::value::RawValue> =
                        serde_json::from_str(&whole)?;
                    json.push(b'{');
                    for (i, field) in fields
                        .iter()
                        .filter(|f| all.contains_key(f.as_str()))
                        .enumerate()
                    {
                        if i > 0 {
                            json.push(b',');
                        }
                        serde_json::to_writer(&mut json, field)?;
                        json.push(b':');
                        json.extend_from_slice(all[field.as_str()].get().as_bytes());
                    }
                    json.push(b'}');
                }
            }
            Ok(Checked {
                json,
                found,
                error: None,
            })
        }
        Err(message) => {
            serde_json::to_writer(
                &mut json,
                &serde_json::json!({"id": line.id, "line": line.line, "error": message}),
            )?;
            Ok(Checked {
                json,
                found: Vec::new(),
                error: Some(message),
            })
        }
    }
}

/// Writes the windows of reports as they come, in order: the number of
/// lines that could not be checked, and every finding met.
fn write_checked(
    windows: std::sync::mpsc::Receiver<Vec<Checked>>,
) -> Result<(usize, Vec<Finding>)> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut failed = 0usize;
    let mut found: Vec<Finding> = Vec::new();
    for window in windows {
        for checked in window {
            if let Some(message) = &checked.error {
                failed += 1;
                eprintln!("groundcite: {message}");
            }
            for f in checked.found {
                if !found.contains(&f) {
                    found.push(f);
                }
            }
            out.write_all(&checked.json)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok((failed, found))
}

/// The fields of a report named by `--fields`, checked against the
/// report's own: an unknown one is an error naming the nearest. `None`:
/// the whole report.
fn report_fields(fields: &[String]) -> Result<Option<Vec<String>>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let sample = CheckOutput {
        id: Some(String::new()),
        findings: groundcite_core::check::Findings::nothing_claimed(),
        refusal: None,
        counts: Default::default(),
        malformed_markers: 0,
    };
    let serde_json::Value::Object(known) = serde_json::to_value(&sample)? else {
        unreachable!("a report serialises to an object")
    };
    for field in fields {
        if !known.contains_key(field.as_str()) {
            let nearest = known
                .keys()
                .map(|k| (strsim::jaro_winkler(field, k), k))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .filter(|(score, _)| *score > 0.8)
                .map(|(_, k)| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            let names: Vec<&str> = known.keys().map(String::as_str).collect();
            bail!(
                "--fields: a report has no field `{field}`{nearest}; its fields are {}",
                names.join(", ")
            );
        }
    }
    let mut unique: Vec<String> = Vec::new();
    for field in fields {
        if !unique.contains(field) {
            unique.push(field.clone());
        }
    }
    Ok(Some(unique))
}
