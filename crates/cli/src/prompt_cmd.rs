//! `groundcite prompt`: the rendered contract and context for a question.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use groundcite_core::RefusalForm;
use groundcite_core::config::CheckConfig;

use crate::input;

const AFTER_HELP: &str = "\
Examples:
  groundcite prompt --passages passages.json --question 'How long do refunds take?'
  groundcite prompt --passages passages.json --question '...' --refusal-form sentinel --json";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct PromptArgs {
    /// A JSON file with the ranked passages.
    #[arg(long)]
    passages: PathBuf,
    /// The question.
    #[arg(long)]
    question: String,
    /// The refusal form the contract asks for.
    #[arg(long, value_enum, default_value = "sentence")]
    refusal_form: FormArg,
    /// Context budget in tokens.
    #[arg(long)]
    budget: Option<usize>,
    /// Print `{system, user, passages}` as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FormArg {
    /// "Not covered by the provided documents."
    Sentence,
    /// "NOT_IN_SOURCES: <what would be needed>"
    Sentinel,
}

impl From<FormArg> for RefusalForm {
    fn from(f: FormArg) -> Self {
        match f {
            FormArg::Sentence => RefusalForm::Sentence,
            FormArg::Sentinel => RefusalForm::Sentinel,
        }
    }
}
pub fn run_prompt(args: PromptArgs) -> Result<ExitCode> {
    let passages = input::read_passages(&args.passages)?;
    if args.question.trim().is_empty() {
        bail!("the question is empty");
    }
    let mut config = CheckConfig::default();
    if let Some(budget) = args.budget {
        config.assembly.budget_tokens = budget;
    }
    config.refusal_form = args.refusal_form.into();
    // The same prompt and JSON as `POST /v1/prompt` and Python's
    // `render_prompt`: one place builds them.
    let rendered = groundcite_engine::Checker::new(config).prompt(&args.question, &passages);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &rendered)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "=== system ===\n{}\n\n=== user ===\n{}",
            rendered.system, rendered.user
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
