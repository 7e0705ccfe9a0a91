//! `groundcite eval`: detection rates on labelled cases and on HaluEval.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use groundcite_core::Passage;
use groundcite_core::case::{self, Label};
use groundcite_core::check;
use groundcite_core::config::CheckConfig;
use groundcite_support::LexicalVerifier;

use crate::args::{CommonArgs, GeneratorArgs, settings};
use crate::input;
use crate::render::safe;

#[derive(Subcommand)]
pub enum EvalCommand {
    /// Score labelled cases: per label, how many sentences were flagged
    /// right; bad-id and status accuracy.
    Cases {
        file: PathBuf,
        /// Also list every labelled sentence with its verdict.
        #[arg(long)]
        verbose: bool,
    },
    /// Balanced accuracy on HaluEval QA rows: knowledge as passage [1],
    /// each answer cited as [1]; right answers must come out supported,
    /// hallucinated ones flagged.
    Halueval {
        file: PathBuf,
        /// First row (0-based).
        #[arg(long, default_value_t = 0)]
        from: usize,
        /// One past the last row.
        #[arg(long)]
        to: Option<usize>,
    },
    /// Ask labelled questions (JSONL: id, question, answerable, gold
    /// pages, fact, hard) through the configured engine: recall@1/3/5 of a
    /// gold page, answered with the fact and cited, refusals by reason,
    /// unanswerable and hard near-misses refused.
    Questions {
        file: PathBuf,
        /// Also list every question with its outcome.
        #[arg(long)]
        verbose: bool,
        /// The summary and every outcome as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        generator: GeneratorArgs,
    },
}

pub fn run(common: &CommonArgs, cmd: EvalCommand) -> Result<ExitCode> {
    match cmd {
        EvalCommand::Cases { file, verbose } => cases(&file, verbose),
        EvalCommand::Halueval { file, from, to } => halueval(&file, from, to),
        EvalCommand::Questions {
            file,
            verbose,
            json,
            generator,
        } => questions(common, &generator, &file, verbose, json),
    }
}

fn questions(
    common: &CommonArgs,
    generator: &GeneratorArgs,
    file: &std::path::Path,
    verbose: bool,
    json: bool,
) -> Result<ExitCode> {
    use groundcite_engine::eval::{self, percent};
    let settings = settings(common, generator)?;
    let text = input::read_text(file)?;
    let questions =
        eval::parse_questions(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let s = runtime.block_on(async move {
        let engine = groundcite_engine::Engine::from_settings(settings)?;
        eval::questions(&engine, &questions).await
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &s)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if verbose {
        for o in &s.outcomes {
            let outcome = match (&o.refusal_reason, o.fact_cited) {
                (Some(reason), _) => format!("refused ({reason})"),
                (None, true) => "fact cited".to_string(),
                (None, false) if o.answerable => "answered without the fact".to_string(),
                (None, false) => "answered".to_string(),
            };
            let kind = match (o.answerable, o.hard) {
                (true, _) => "answerable",
                (false, true) => "near-miss",
                (false, false) => "unanswerable",
            };
            let rank = o.gold_rank.map_or("-".to_string(), |r| r.to_string());
            writeln!(
                out,
                "{:<6} {:<12} gold@{:<2} {:<26} {}",
                o.id,
                kind,
                rank,
                outcome,
                safe(&o.question)
            )?;
        }
        writeln!(out)?;
    }
    let a = s.answerable;
    let reasons = |m: &BTreeMap<String, usize>| {
        if m.is_empty() {
            return String::new();
        }
        let list: Vec<String> = m.iter().map(|(r, n)| format!("{r} {n}")).collect();
        format!(" ({})", list.join(", "))
    };
    writeln!(out, "retrieval: {}", s.retrieval)?;
    writeln!(
        out,
        "gold page in the top 1: {}/{a} ({:.1}%)   top 3: {}/{a} ({:.1}%)   top 5: {}/{a} ({:.1}%)",
        s.recall_at_1,
        percent(s.recall_at_1, a),
        s.recall_at_3,
        percent(s.recall_at_3, a),
        s.recall_at_5,
        percent(s.recall_at_5, a)
    )?;
    writeln!(
        out,
        "gold page sent: {}/{a} ({:.1}%)",
        s.gold_sent,
        percent(s.gold_sent, a)
    )?;
    writeln!(
        out,
        "answered with the fact and cited: {}/{a} ({:.1}%)",
        s.fact_cited,
        percent(s.fact_cited, a)
    )?;
    writeln!(
        out,
        "answerable refused: {}/{a}{}",
        s.refused_answerable,
        reasons(&s.answerable_refusals)
    )?;
    writeln!(
        out,
        "unanswerable refused: {}/{} ({:.1}%){}",
        s.refused_unanswerable,
        s.unanswerable,
        percent(s.refused_unanswerable, s.unanswerable),
        reasons(&s.unanswerable_refusals)
    )?;
    writeln!(
        out,
        "hard near-misses refused: {}/{} ({:.1}%)",
        s.refused_hard,
        s.hard,
        percent(s.refused_hard, s.hard)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn cases(file: &std::path::Path, verbose: bool) -> Result<ExitCode> {
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    let mut per_label: BTreeMap<Label, (usize, usize)> = BTreeMap::new();
    let (mut n_cases, mut bad_ok, mut status_ok, mut failed) = (0, 0, 0, 0);
    let mut out = std::io::stdout().lock();
    for line in input::read_cases(file)? {
        let case = match line.case {
            Ok(c) => c,
            Err(e) => {
                eprintln!("groundcite: {e}");
                failed += 1;
                continue;
            }
        };
        let output = check::check(
            case.question.as_deref(),
            &case.passages,
            &case.answer,
            &config,
            &verifier,
        );
        let Some(score) = case::score(&case, &output) else {
            continue;
        };
        n_cases += 1;
        bad_ok += usize::from(score.bad_ids_correct);
        status_ok += usize::from(score.status_correct);
        for s in &score.sentences {
            let e = per_label.entry(s.label).or_default();
            e.0 += 1;
            e.1 += usize::from(s.correct);
            if verbose || !s.correct {
                writeln!(
                    out,
                    "{} {:<4} {:<12} got {:<12} {:?}",
                    if s.correct { "  " } else { "!!" },
                    s.case,
                    s.label.as_str(),
                    s.verdict.map_or("(no match)", |v| v.as_str()),
                    s.matches
                )?;
            }
        }
    }
    writeln!(
        out,
        "\ncases: {n_cases}   bad_ids correct: {bad_ok}/{n_cases}   status correct: {status_ok}/{n_cases}"
    )?;
    writeln!(
        out,
        "{:<13} {:>6} {:>8} {:>7}",
        "label", "total", "correct", "rate"
    )?;
    for (label, (total, correct)) in &per_label {
        let meaning = match label {
            Label::Supported => "not flagged",
            Label::Contradicted => "flagged contradicted",
            Label::Unsupported => "flagged unsupported or contradicted",
            Label::Unmarked => "reported uncited",
        };
        writeln!(
            out,
            "{:<13} {:>6} {:>8} {:>6.1}%   ({meaning})",
            label.as_str(),
            total,
            correct,
            100.0 * *correct as f64 / (*total).max(1) as f64
        )?;
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(serde::Deserialize)]
struct HaluRow {
    knowledge: String,
    question: String,
    right_answer: String,
    hallucinated_answer: String,
}

fn halueval(file: &std::path::Path, from: usize, to: Option<usize>) -> Result<ExitCode> {
    let text = input::read_text(file)?;
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    let (mut right_total, mut right_ok, mut hall_total, mut hall_ok) =
        (0usize, 0usize, 0usize, 0usize);
    let to = to.unwrap_or(usize::MAX);
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(i, l)| *i >= from && *i < to && !l.trim().is_empty())
    {
        let row: HaluRow = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: malformed row", file.display(), i + 1))?;
        let passages = [Passage {
            id: format!("row{i}"),
            text: row.knowledge.clone(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }];
        let flagged = |answer: &str| {
            let answer = format!("{} [1]", answer.trim());
            let o = check::check(Some(&row.question), &passages, &answer, &config, &verifier);
            o.counts.contradicted + o.counts.unsupported > 0
        };
        right_total += 1;
        right_ok += usize::from(!flagged(&row.right_answer));
        hall_total += 1;
        hall_ok += usize::from(flagged(&row.hallucinated_answer));
    }
    let right = right_ok as f64 / right_total.max(1) as f64;
    let hall = hall_ok as f64 / hall_total.max(1) as f64;
    println!("rows {from}..{}: {right_total}", from + right_total);
    println!(
        "right answers supported:      {right_ok}/{right_total} ({:.1}%)",
        right * 100.0
    );
    println!(
        "hallucinated answers flagged: {hall_ok}/{hall_total} ({:.1}%)",
        hall * 100.0
    );
    println!(
        "balanced accuracy:            {:.1}%",
        (right + hall) * 50.0
    );
    Ok(ExitCode::SUCCESS)
}
