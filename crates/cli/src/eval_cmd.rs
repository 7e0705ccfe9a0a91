//! `groundcite eval`: detection rates on labelled cases and on HaluEval.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use groundcite_core::Passage;
use groundcite_core::case::{self, Half, Label, Tally};
use groundcite_core::check;
use groundcite_core::config::CheckConfig;
use groundcite_support::LexicalVerifier;

use crate::input;

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
}

pub fn run(cmd: EvalCommand) -> Result<ExitCode> {
    match cmd {
        EvalCommand::Cases { file, verbose } => cases(&file, verbose),
        EvalCommand::Halueval { file, from, to } => halueval(&file, from, to),
    }
}

fn cases(file: &std::path::Path, verbose: bool) -> Result<ExitCode> {
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    let mut per_label: BTreeMap<Label, (usize, usize)> = BTreeMap::new();
    let mut overall = Tally::default();
    let mut per_half: BTreeMap<Half, Tally> = BTreeMap::new();
    let mut per_kind: BTreeMap<String, (Tally, Tally)> = BTreeMap::new();
    let mut per_form: BTreeMap<String, Tally> = BTreeMap::new();
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
        let half = case::half(&case);
        for s in &score.sentences {
            overall.add(s);
            per_half.entry(half).or_default().add(s);
            if let Some(kind) = &s.kind {
                let (all, held) = per_kind.entry(kind.clone()).or_default();
                all.add(s);
                if half == Half::Held {
                    held.add(s);
                }
            }
            if let Some(form) = &s.form {
                per_form.entry(form.clone()).or_default().add(s);
            }
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
    write_tallies(&mut out, &overall, &per_half, &per_kind, &per_form)?;
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The detection table of `eval cases`: overall, per half of the by-page split
/// (`core::case::half`), per `kind` (all cases, then the held-out half) and per `form`.
fn write_tallies(
    out: &mut impl Write,
    overall: &Tally,
    per_half: &BTreeMap<Half, Tally>,
    per_kind: &BTreeMap<String, (Tally, Tally)>,
    per_form: &BTreeMap<String, Tally>,
) -> Result<()> {
    let rate = |k: usize, n: usize| {
        if n == 0 {
            "    -".to_string()
        } else {
            format!("{:>5.2}", k as f64 / n as f64)
        }
    };
    let row = |name: &str, t: &Tally| {
        format!(
            "{name:<22} {:>7} {} {:>7} {} {:>7} {} {:>8}",
            format!("{}/{}", t.supported_kept, t.supported),
            rate(t.supported_kept, t.supported),
            format!("{}/{}", t.wrong_flagged, t.wrong),
            rate(t.wrong_flagged, t.wrong),
            format!("{}/{}", t.contradicted_labelled, t.contradicted),
            rate(t.contradicted_labelled, t.contradicted),
            t.balanced_accuracy()
                .map_or("-".to_string(), |b| format!("{b:.3}")),
        )
    };
    writeln!(
        out,
        "\n{:<22} {:>13} {:>13} {:>13} {:>8}",
        "", "supp. kept", "wrong flagged", "contr. as c.", "bal.acc"
    )?;
    writeln!(out, "{}", row("all", overall))?;
    for (half, t) in per_half {
        writeln!(out, "{}", row(&format!("{} half", half.as_str()), t))?;
    }
    if !per_kind.is_empty() {
        writeln!(out, "by kind (all cases; held-out half below it)")?;
        for (kind, (all, held)) in per_kind {
            writeln!(out, "{}", row(kind, all))?;
            if held.supported + held.wrong > 0 {
                writeln!(out, "{}", row("  held-out", held))?;
            }
        }
    }
    if !per_form.is_empty() {
        writeln!(out, "by form")?;
        for (form, t) in per_form {
            writeln!(out, "{}", row(form, t))?;
        }
    }
    Ok(())
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
