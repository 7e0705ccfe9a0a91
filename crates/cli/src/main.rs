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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check_cmd::run_check(args),
        Command::Prompt(args) => prompt_cmd::run_prompt(args),
        Command::Eval(cmd) => eval_cmd::run(cmd),
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
