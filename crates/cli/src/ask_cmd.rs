//! `groundcite ask`: a grounded answer with checked citations.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use futures::StreamExt;
use groundcite_engine::{
    AskEvent, AskOptions, AskResult, Engine, NO_DIRECT_ANSWER, Relevance, Retraction,
    StreamedSentence,
};

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::render::safe;

#[derive(Args)]
pub struct AskArgs {
    question: String,
    #[command(flatten)]
    generator: GeneratorArgs,
    /// Print the full structured result as JSON.
    #[arg(long)]
    json: bool,
    /// Print sentences as they are validated.
    #[arg(long)]
    stream: bool,
}

pub fn run_ask(common: &CommonArgs, args: AskArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let deadline = settings.answer_deadline();
    runtime.block_on(async move {
        let engine = Engine::from_settings(settings)?;
        let opts = AskOptions::default();
        let answer = async {
            if !args.stream {
                return Ok(engine.ask(&args.question, &opts).await?);
            }
            let mut events = engine.ask_stream(&args.question, &opts);
            let mut result = None;
            let mut out = std::io::stdout().lock();
            while let Some(event) = events.next().await {
                match event {
                    AskEvent::Sentence(StreamedSentence { text, verdict, .. }) => {
                        if !args.json {
                            writeln!(out, "[{verdict}] {}", safe(&text))?;
                            out.flush()?;
                        }
                    }
                    AskEvent::Retract(Retraction { count, reason }) => {
                        if !args.json {
                            writeln!(out, "[retracted the {count} sentence(s) above: {reason}]")?;
                            out.flush()?;
                        }
                    }
                    AskEvent::Final(r) => result = Some(*r),
                    AskEvent::Error(e) => return Err(anyhow::Error::new(e)),
                }
            }
            result.context("the stream ended without a result")
        };
        let result = match deadline {
            Some(limit) => tokio::time::timeout(limit, answer).await.map_err(|_| {
                anyhow::anyhow!(
                    "no complete answer within the deadline of {limit:?} (2 attempts × \
                     (timeout_secs × tries + backoff)): the model server is too slow"
                )
            })??,
            None => answer.await?,
        };
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &result)?;
            writeln!(out)?;
        } else {
            print_answer(&mut out, &result)?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn print_answer(out: &mut dyn Write, r: &AskResult) -> Result<()> {
    writeln!(out, "{}\n", safe(&r.answer))?;
    if r.truncated {
        writeln!(
            out,
            "  ! truncated: the model stopped at its token limit ({}); the unfinished last sentence was dropped",
            r.finish_reason.as_deref().unwrap_or("length")
        )?;
    }
    if let Some(refusal) = &r.refusal {
        let reason = serde_json::to_value(refusal.reason)?;
        writeln!(out, "refused ({})", reason.as_str().unwrap_or("?"))?;
    } else {
        for s in r.sentences.iter().filter(|s| s.factual) {
            if s.verdict.is_flagged() || s.verdict.as_str() == "uncited" {
                writeln!(
                    out,
                    "  ! {}: {} {}",
                    s.verdict.as_str(),
                    safe(&s.text),
                    safe(&s.reasons.join("; "))
                )?;
            }
        }
        if r.answers_question.as_ref().is_some_and(|a| a.is_no()) {
            // However well cited, it does not address the question.
            writeln!(out, "  ! {NO_DIRECT_ANSWER} Closest passages:")?;
            for p in r.passages.iter().take(3) {
                writeln!(
                    out,
                    "    [{}] {} <{}>",
                    p.n,
                    safe(&p.section),
                    safe(&p.source_url)
                )?;
            }
        }
        if !r.sources.is_empty() {
            writeln!(out, "sources:")?;
            for s in &r.sources {
                let nums: String = s.passages.iter().map(|k| format!("[{k}]")).collect();
                writeln!(
                    out,
                    "  {nums} {} <{}>\n      \"{}\"",
                    safe(&s.label),
                    safe(&s.url),
                    safe(&s.quote)
                )?;
            }
        }
    }
    let t = &r.timings;
    writeln!(
        out,
        "\nstatus: {}   grounded: {}   coverage: {:.0}%   answers the question: {}   generator: {}{}\ntimings: retrieve {:.1} ms, generate {:.1} ms, check {:.1} ms, total {:.1} ms",
        r.status.as_str(),
        // A refusal claims nothing: it is not shown as a grounded answer.
        match (&r.refusal, r.grounded) {
            (Some(_), _) => "- (refused)",
            (None, true) => "yes",
            (None, false) => "no",
        },
        r.coverage * 100.0,
        answers_question(r),
        safe(&r.generator),
        if r.regenerated {
            " (regenerated once)"
        } else {
            ""
        },
        t.retrieve_ms,
        t.generate_ms,
        t.check_ms,
        t.total_ms
    )?;
    Ok(())
}

/// The `answers_question` verdict as the status line shows it.
fn answers_question(r: &AskResult) -> String {
    match &r.answers_question {
        None => "-".into(),
        Some(a) => match (a.verdict, a.score) {
            (Relevance::Unchecked, _) => "not judged (no embedding model)".into(),
            (Relevance::Yes, Some(score)) => format!("yes ({score:.2})"),
            (Relevance::No, Some(score)) => format!("no ({score:.2})"),
            (Relevance::Yes, None) => "yes".into(),
            (Relevance::No, None) => "no".into(),
        },
    }
}
