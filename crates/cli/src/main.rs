//! The `groundcite` binary: parse arguments, call the libraries, map errors
//! to an exit code. 0: success; 1: some input failed or a check found a
//! hard failure the command was asked to gate on; 2: usage or fatal error.

mod args;
mod ask_cmd;
mod audit_cmd;
mod check_cmd;
mod config_cmd;
mod db_cmd;
mod eval_cmd;
mod ingest_cmd;
mod input;
mod prompt_cmd;
mod render;
mod search_cmd;
mod serve_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "groundcite",
    version,
    about = "Grounded, checked citations for retrieval-augmented answers."
)]
struct Cli {
    #[command(flatten)]
    common: args::CommonArgs,
    /// Log lines on stderr: `text` or `json` (one object a line). The level
    /// comes from RUST_LOG [default: info for `serve`, warn otherwise].
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check answers: markers, sentences, support, sources.
    Check(check_cmd::CheckArgs),
    /// Print the rendered contract and context for a question.
    Prompt(prompt_cmd::PromptArgs),
    /// Ingest files or folders into the index (incremental).
    Ingest(ingest_cmd::IngestArgs),
    /// Search the index: top-k chunks with normalised scores.
    Search(search_cmd::SearchArgs),
    /// Answer a question from the index with checked citations.
    Ask(ask_cmd::AskArgs),
    /// Print the effective configuration (secrets masked).
    Config(config_cmd::ConfigArgs),
    /// Score the checker on labelled data.
    #[command(subcommand)]
    Eval(eval_cmd::EvalCommand),
    /// Serve the HTTP API and the web page.
    Serve(serve_cmd::ServeArgs),
    /// The incident log: unverified and unsupported answers; JSONL export.
    Audit(audit_cmd::AuditArgs),
    /// The PostgreSQL index: schema migrations and status.
    #[command(subcommand)]
    Db(db_cmd::DbCommand),
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// The tracing subscriber: structured events on stderr, filtered by
/// RUST_LOG. Inside a request every line carries its span (method, path,
/// request id). Nothing logs a secret: the API key and LLM keys are never
/// in an event (keys are `Secret`s that print masked; headers are not
/// logged).
fn init_logging(format: LogFormat, default_level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "warn"
    };
    init_logging(cli.log_format, default_level);
    let result = match cli.command {
        Command::Check(args) => check_cmd::run_check(args),
        Command::Prompt(args) => prompt_cmd::run_prompt(args),
        Command::Eval(cmd) => eval_cmd::run(&cli.common, cmd),
        Command::Ingest(args) => ingest_cmd::run_ingest(&cli.common, args),
        Command::Db(cmd) => db_cmd::run(&cli.common, cmd),
        Command::Search(args) => search_cmd::run_search(&cli.common, args),
        Command::Ask(args) => ask_cmd::run_ask(&cli.common, args),
        Command::Config(args) => config_cmd::run_config(&cli.common, args),
        Command::Serve(args) => serve_cmd::run_serve(&cli.common, args),
        Command::Audit(args) => audit_cmd::run_audit(&cli.common, args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("groundcite: error: {}", render::safe(&format!("{err:#}")));
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}
