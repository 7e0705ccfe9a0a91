//! `groundcite ask`: a grounded answer with checked citations.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use futures::StreamExt;
use groundcite_audit::{AuditConfig, NoObserver};
use groundcite_core::check::SentenceVerdict;
use groundcite_engine::audit;
use groundcite_engine::{
    AskEvent, AskOptions, AskResult, Engine, NO_DIRECT_ANSWER, RefusalReason, Relevance,
    Retraction, SOURCES_FOUND_UNJUDGED, StreamedSentence,
};

use crate::args::{CommonArgs, GeneratorArgs, announce_demo, settings};
use crate::render::{self, Finding, safe};

const AFTER_HELP: &str = "\
Every answer, and every refusal, is written to the audit log: audit.sqlite
in the index folder by default (beside it for .groundcite/index) (the `audit_path` setting, `off` for
none; the database itself for a PostgreSQL index). `groundcite audit` reads
it; --no-audit skips writing this one.

Exit codes:
  0  answered, or refused, and nothing named by --fail-on was found
  1  a finding named by --fail-on (none by default)
  2  usage or fatal error (no index, unreachable model server, missing key)

Examples:
  groundcite ask \"How long does reimbursement take?\"
  groundcite --index /srv/idx ask --json \"Who approves travel?\"
  groundcite ask --fail-on contradicted,unsupported,unverified,refused \"...\"";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct AskArgs {
    /// The question to answer from the index.
    question: String,
    #[command(flatten)]
    generator: GeneratorArgs,
    /// Print the full structured result as JSON.
    #[arg(long)]
    json: bool,
    /// Print sentences as they are validated.
    #[arg(long)]
    stream: bool,
    /// Exit 1 when any of these is found (comma-separated): contradicted,
    /// unsupported, unverified, uncited, refused; default none.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "none")]
    fail_on: Vec<Finding>,
    /// Also print the machine reasons of each verdict (as in --json).
    #[arg(long)]
    reasons: bool,
    /// Do not write this answer to the audit log.
    #[arg(long)]
    no_audit: bool,
}

pub fn run_ask(common: &CommonArgs, args: AskArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    announce_demo(&settings);
    let judged = settings.check.verify_support;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let deadline = settings.answer_deadline();
    // Audited as the service audits its answers: one record per answer or
    // refusal, in the configured log (beside the index by default).
    let audit = match settings.audit_location() {
        Some(path) if !args.no_audit => AuditConfig {
            policy: settings.audit.clone(),
            ..AuditConfig::at(path)
        },
        _ => AuditConfig::off(),
    };
    runtime.block_on(async move {
        let engine = Engine::from_settings(settings)?;
        let opts = AskOptions::default();
        let answer = async {
            if !args.stream {
                return Ok((engine.ask(&args.question, &opts).await?, false));
            }
            let mut events = engine.ask_stream(&args.question, &opts);
            let mut result = None;
            let mut shown = 0usize;
            let mut out = anstream::stdout().lock();
            while let Some(event) = events.next().await {
                match event {
                    AskEvent::Sentence(StreamedSentence { text, verdict, .. }) => {
                        if !args.json {
                            writeln!(out, "[{}] {}", render::paint_verdict(&verdict), safe(&text))?;
                            out.flush()?;
                            shown += 1;
                        }
                    }
                    AskEvent::Retract(Retraction { count, reason }) => {
                        if !args.json {
                            writeln!(out, "[retracted the {count} sentence(s) above: {reason}]")?;
                            out.flush()?;
                            shown = 0;
                        }
                    }
                    AskEvent::Final(r) => result = Some((*r, shown > 0)),
                    AskEvent::Error(e) => return Err(anyhow::Error::new(e)),
                }
            }
            result.context("the stream ended without a result")
        };
        let (result, streamed) = match deadline {
            Some(limit) => tokio::time::timeout(limit, answer).await.map_err(|_| {
                anyhow::anyhow!(
                    "no complete answer within the deadline of {limit:?} (2 attempts × \
                     (timeout_secs × tries + backoff)): the model server is too slow"
                )
            })??,
            None => answer.await?,
        };
        write_audit(&audit, &result);
        let mut out = anstream::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &result)?;
            writeln!(out)?;
        } else {
            print_answer(&mut out, &result, judged, args.reasons, streamed)?;
        }
        out.flush()?;
        let found = render::found(&result.findings, &result.counts, result.refusal.is_some());
        Ok(render::exit_code(&found, &args.fail_on))
    })
}

/// Writes the answer's audit record and waits for it. Never fails the
/// answer: a log that cannot be written is reported on stderr (a warning)
/// and the answer is printed regardless, as the service does.
fn write_audit(config: &AuditConfig, result: &AskResult) {
    let log = audit::start(config, std::sync::Arc::new(NoObserver));
    if !log.is_enabled() {
        return;
    }
    let id = groundcite_audit::new_request_id();
    log.record(audit::answer_record(&id, result, audit::json_text(result)));
    log.shutdown();
}

/// Why there is no answer, in plain words; "the model" only when a model
/// ran.
fn why_refused(reason: RefusalReason, generator: &str) -> String {
    match reason {
        RefusalReason::Gate => "no passage in the index matches the question closely enough, \
             so no answer was generated"
            .to_string(),
        RefusalReason::Sentinel if generator == "extractive" => {
            "no sentence of the passages found answers it (extractive generator, no model)"
                .to_string()
        }
        RefusalReason::Sentinel => {
            format!("the model ({generator}) found no answer in the passages")
        }
        RefusalReason::Validation => {
            "the answer kept citing passages that were never sent, or made claims its sources \
             do not state"
                .to_string()
        }
        RefusalReason::NoDirectAnswer => {
            "passages on the topic were found, but none of their sentences answers the question \
             (the closest are listed)"
                .to_string()
        }
    }
}

/// The readable answer. Problems lead, the correction first ("The source
/// says 30 days, not 14 days."), then the answer, its sources and a last
/// line saying what was checked. A streamed answer is not printed twice.
fn print_answer(
    out: &mut dyn Write,
    r: &AskResult,
    judged: bool,
    reasons: bool,
    streamed: bool,
) -> Result<()> {
    let mut gap = false;
    if let Some(refusal) = &r.refusal {
        if !streamed {
            writeln!(out, "{}\n", safe(&r.answer))?;
        }
        writeln!(
            out,
            "{} {}.",
            render::paint(render::style::REFUSAL, "No answer:"),
            why_refused(refusal.reason, &r.generator)
        )?;
        if reasons {
            writeln!(out, "reason: {}", refusal.reason.as_str())?;
        }
    } else {
        let problems = r.sentences.iter().any(|s| {
            !matches!(
                s.verdict,
                SentenceVerdict::Supported | SentenceVerdict::NotFactual
            )
        });
        // However well cited, an answer that does not address the question
        // is never headed "Checked".
        let off_topic = r.answers_question.as_ref().is_some_and(|a| a.is_no());
        let headline = if off_topic {
            render::paint(render::style::WARN, format_args!("! {NO_DIRECT_ANSWER}"))
        } else {
            ask_headline(r, judged)
        };
        // Relevance not judged: the caveat leads, before the answer.
        let caveat = !problems && !off_topic && !r.grounded;
        if problems || caveat {
            writeln!(out, "{headline}\n")?;
        }
        if problems {
            render::sentences(out, &r.sentences, reasons, !reasons)?;
            writeln!(out)?;
        }
        if !streamed {
            writeln!(out, "{}", safe(&r.answer))?;
        }
        if r.truncated {
            writeln!(
                out,
                "\n  ! cut short: the model stopped at its token limit ({}); its unfinished last sentence was dropped",
                r.finish_reason.as_deref().unwrap_or("length")
            )?;
        }
        if reasons && !problems {
            writeln!(out)?;
            render::sentences(out, &r.sentences, true, false)?;
        }
        if off_topic {
            writeln!(out, "\n  ! {NO_DIRECT_ANSWER} Closest passages:")?;
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
        render::sources(out, &r.sources)?;
        if problems || caveat {
            gap = true;
        } else {
            writeln!(out, "\n{headline}")?;
        }
    }
    let t = &r.timings;
    writeln!(
        out,
        "{}generator: {}{}   retrieval: {}   time: {:.1} ms (retrieve {:.1}, gate {:.1}, generate {:.1}, check {:.1})",
        if gap { "\n" } else { "" },
        safe(&r.generator),
        if r.regenerated {
            " (regenerated once)"
        } else {
            ""
        },
        r.retrieval.as_str(),
        t.total_ms,
        t.retrieve_ms,
        t.gate_ms,
        t.generate_ms,
        t.check_ms,
    )?;
    if reasons {
        writeln!(
            out,
            "status: {}   grounded: {}   coverage: {:.0}%   answers the question: {}",
            r.status.as_str(),
            // A refusal claims nothing: it is not shown as a grounded answer.
            match (&r.refusal, r.grounded) {
                (Some(_), _) => "- (refused)",
                (None, true) => "yes",
                (None, false) => "no",
            },
            r.coverage * 100.0,
            answers_question(r)
        )?;
    }
    Ok(())
}

/// The headline of a served answer. Problems come first (as for
/// `check`); otherwise "Checked" only when both claims hold: the cited
/// sentences are stated in the sources, and the answer was judged to
/// answer the question. Without a model relevance is not judged, and the
/// headline says so rather than "Checked".
fn ask_headline(r: &AskResult, judged: bool) -> String {
    let support = render::headline(&r.findings, &r.counts, judged);
    if !support.starts_with("Checked") {
        return render::painted_headline(&r.findings, &r.counts, judged);
    }
    match r.answers_question.as_ref().map(|a| a.verdict) {
        Some(Relevance::Yes) if r.grounded => render::paint(
            render::style::GOOD,
            format_args!(
                "{} and answer{} the question.",
                support.trim_end_matches('.'),
                if r.counts.factual == 1 { "s" } else { "" }
            ),
        ),
        _ => format!(
            "{}\n{}",
            render::paint(render::style::WARN, SOURCES_FOUND_UNJUDGED),
            render::paint(
                render::style::DIM,
                "The cited sentences are stated in the sources; whether they answer the \
                 question is judged with the embedding model (scripts/fetch-model.sh)."
            )
        ),
    }
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
