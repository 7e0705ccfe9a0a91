//! `groundcite check`: markers, sentences, support and sources of answers,
//! one at a time or a JSONL file of cases.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use groundcite_core::check::CheckOutput;
use groundcite_engine::Checker;
use groundcite_support::VerifierKind;

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
  groundcite check --passages p.json --answer-file a.txt --fail-on none   # report only";

#[derive(Args)]
#[command(after_help = EXIT_CODES)]
pub struct CheckArgs {
    /// A JSONL file of cases (format of shared/cases/README.md); writes one
    /// JSON report per line, in input order.
    #[arg(long, conflicts_with_all = ["passages", "answer", "answer_file"])]
    cases: Option<PathBuf>,
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
        VerifierKind::Lexical => None,
        VerifierKind::Semantic | VerifierKind::Llm => groundcite_engine::load_embedder(&settings)?,
    };
    let checker = Checker::from_settings(&settings, embedder)?;
    if let Some(path) = &args.cases {
        return check_cases(path, &checker, &args.fail_on);
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

fn check_cases(path: &std::path::Path, checker: &Checker, fail_on: &[Finding]) -> Result<ExitCode> {
    let lines = input::read_cases(path)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed = 0usize;
    let mut found: Vec<Finding> = Vec::new();
    for line in lines {
        match line.case {
            Ok(case) => {
                let mut output: CheckOutput =
                    checker.check(case.question.as_deref(), &case.passages, &case.answer);
                output.id = Some(case.id.clone());
                for f in render::found(&output.findings, &output.counts, output.refusal.is_some()) {
                    if !found.contains(&f) {
                        found.push(f);
                    }
                }
                serde_json::to_writer(&mut out, &output)?;
            }
            Err(message) => {
                failed += 1;
                eprintln!("groundcite: {message}");
                serde_json::to_writer(
                    &mut out,
                    &serde_json::json!({"id": line.id, "line": line.line, "error": message}),
                )?;
            }
        }
        writeln!(out)?;
    }
    out.flush()?;
    if failed > 0 {
        eprintln!("groundcite: {failed} case(s) could not be checked");
        return Ok(ExitCode::from(1));
    }
    Ok(render::exit_code(&found, fail_on))
}
