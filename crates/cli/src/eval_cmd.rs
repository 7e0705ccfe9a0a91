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

use crate::args::{self, CommonArgs, GeneratorArgs, settings};
use crate::input;
use crate::render::safe;
use groundcite_engine::Checker;

#[derive(Subcommand)]
pub enum EvalCommand {
    /// Score labelled cases: per label, how many sentences were flagged
    /// right; bad-id and status accuracy.
    #[command(
        after_help = "Examples:\n  groundcite eval cases ../shared/cases/dev.jsonl\n  groundcite eval cases ../shared/cases/paraphrase-dev.jsonl --json"
    )]
    Cases {
        /// The labelled cases (JSONL, the format of shared/cases/README.md).
        file: PathBuf,
        /// Also list every labelled sentence with its verdict.
        #[arg(long)]
        verbose: bool,
        /// Print the figures as JSON (with --verbose, every sentence; else
        /// the ones judged wrong).
        #[arg(long, conflicts_with = "fit_similarity")]
        json: bool,
        /// Fit the support config's `overrule_similarity` (needs a model): the
        /// threshold with the best balanced accuracy on the tune half of the
        /// by-page split, with its figures on both halves.
        #[arg(long)]
        fit_similarity: bool,
        /// Fit the support config's `trained_entailed` (needs the trained
        /// judges): the threshold with the best balanced accuracy on the tune
        /// half of the by-page split, with its figures on both halves.
        #[arg(long, conflicts_with_all = ["fit_similarity", "json"])]
        fit_trained: bool,
    },
    /// Balanced accuracy on HaluEval QA rows: knowledge as passage [1],
    /// each answer cited as [1]; right answers must come out supported,
    /// hallucinated ones flagged.
    #[command(
        after_help = "Examples:\n  groundcite eval halueval ../shared/datasets/halueval/qa-dev.jsonl\n  groundcite eval halueval ../shared/datasets/halueval/qa-dev.jsonl --from 1000 --to 2000 --json"
    )]
    Halueval {
        /// HaluEval QA rows (JSONL: knowledge, question, right_answer,
        /// hallucinated_answer).
        file: PathBuf,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
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
    #[command(
        after_help = "Examples:\n  groundcite --index /tmp/tts eval questions ../shared/cases/questions-dev.jsonl\n  groundcite --index /tmp/tts eval questions ../shared/cases/questions-dev.jsonl --verbose --json"
    )]
    Questions {
        /// The labelled questions (JSONL).
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
        EvalCommand::Cases {
            file,
            verbose,
            json,
            fit_similarity,
            fit_trained,
        } => {
            let fit = match (fit_similarity, fit_trained) {
                (true, _) => Some(Fit::Similarity),
                (_, true) => Some(Fit::Trained),
                _ => None,
            };
            cases(common, &file, verbose, json, fit)
        }
        EvalCommand::Halueval {
            file,
            json,
            from,
            to,
        } => halueval(common, &file, json, from, to),
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
    use groundcite_engine::eval;
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
            let outcome = if o.grounded {
                format!("{outcome}, certified")
            } else {
                outcome
            };
            let kind = match (o.answerable, o.hard) {
                (true, _) => "answerable",
                (false, true) => "near-miss",
                (false, false) => "unanswerable",
            };
            let rank = o.gold_rank.map_or("-".to_string(), |r| r.to_string());
            writeln!(
                out,
                "{:<6} {:<12} gold@{:<2} {:<37} {}",
                o.id,
                kind,
                rank,
                outcome,
                safe(&o.question)
            )?;
        }
        writeln!(out)?;
    }
    writeln!(
        out,
        "retrieval: {}   relevance judged: {}",
        s.retrieval,
        match s.relevance.as_str() {
            "semantic" => "yes (embedding model)",
            "trained" => "yes (trained answer judge)",
            _ => "no (no model: no answer is certified)",
        }
    )?;
    write_figures(&mut out, &s.all)?;
    for (name, f) in [("tune half", &s.tune), ("held-out half", &s.held_out)] {
        writeln!(out, "\n{name} (by page): {} questions", f.questions)?;
        write_figures(&mut out, f)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The figures of one set of questions, one line each.
fn write_figures(out: &mut impl Write, s: &groundcite_engine::eval::Figures) -> Result<()> {
    use groundcite_engine::eval::percent;
    let a = s.answerable;
    let reasons = |m: &BTreeMap<String, usize>| {
        if m.is_empty() {
            return String::new();
        }
        let list: Vec<String> = m.iter().map(|(r, n)| format!("{r} {n}")).collect();
        format!(" ({})", list.join(", "))
    };
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
        "certified without the fact: {}/{} ({:.1}%)",
        s.certified_without_fact,
        s.questions,
        percent(s.certified_without_fact, s.questions)
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
    if s.ranked > 0 {
        writeln!(
            out,
            "unit ranked first states the fact: {}/{} ({:.1}%) of answerable questions whose gold page was sent",
            s.ranked_first_states_fact,
            s.ranked,
            percent(s.ranked_first_states_fact, s.ranked)
        )?;
    }
    let auc = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |a| format!("{a:.3}"));
    if s.auc_unanswerable.is_some() || s.auc_hard.is_some() {
        writeln!(
            out,
            "answerability AUC (best unit's score, answerable against): unanswerable {}   hard near-misses {}",
            auc(s.auc_unanswerable),
            auc(s.auc_hard)
        )?;
    }
    Ok(())
}

/// The configured verifier runs (`check.verifier`: lexical by default; `semantic` needs
/// `--model-dir`, `GROUNDCITE_MODEL_DIR` or `model_dir`); the table's first line says which.
fn cases(
    common: &CommonArgs,
    file: &std::path::Path,
    verbose: bool,
    json: bool,
    fit: Option<Fit>,
) -> Result<ExitCode> {
    let settings = args::settings(common, &GeneratorArgs::default())?;
    // The configured thresholds (`[check]` and `[check.support]` of groundcite.toml; the
    // defaults without a file).
    let mut config = settings.check.clone();
    match fit {
        // Every sentence the rules find only words missing from is overruled, with its
        // similarity in the reasons: the fit replays each threshold from there.
        Some(Fit::Similarity) => {
            config.support.overrule_similarity = f32::NEG_INFINITY;
            config.verifier = groundcite_verify::VerifierKind::Semantic;
        }
        // Every sentence the judge sees comes out supported, with its probability of
        // entailment in the reasons.
        Some(Fit::Trained) => {
            config.support.trained_entailed = f32::NEG_INFINITY;
            config.verifier = groundcite_verify::VerifierKind::Trained;
        }
        None => {}
    }
    let settings = groundcite_engine::Settings {
        check: config.clone(),
        ..settings
    };
    let checker = Checker::from_settings(&settings, groundcite_engine::load_embedder(&settings)?)?;
    let mut fitted: Vec<(Half, case::SentenceScore, Option<f32>)> = Vec::new();
    let verifier = checker.verifier();
    let mut per_label: BTreeMap<Label, (usize, usize)> = BTreeMap::new();
    let mut overall = Tally::default();
    let mut per_half: BTreeMap<Half, Tally> = BTreeMap::new();
    let mut per_kind: BTreeMap<String, (Tally, Tally)> = BTreeMap::new();
    let mut per_form: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut n_cases, mut bad_ok, mut status_ok, mut failed) = (0, 0, 0, 0);
    let mut listed: Vec<case::SentenceScore> = Vec::new();
    let mut out = std::io::stdout().lock();
    for line in input::read_cases(file)? {
        let case = match line?.case {
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
            verifier,
        );
        let Some(score) = case::score(&case, &output) else {
            continue;
        };
        n_cases += 1;
        bad_ok += usize::from(score.bad_ids_correct);
        status_ok += usize::from(score.status_correct);
        let half = case::half(&case);
        if let Some(kind) = fit {
            for s in score.sentences {
                let recorded = output
                    .sentences
                    .iter()
                    .find(|o| o.text.contains(&s.matches))
                    .and_then(|o| o.reasons.first())
                    .and_then(|r| r.strip_prefix(kind.reason_prefix()))
                    .and_then(|v| v.split(' ').next())
                    .and_then(|v| v.parse::<f32>().ok());
                fitted.push((half, s, recorded));
            }
            continue;
        }
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
            if json {
                if verbose || !s.correct {
                    listed.push(s.clone());
                }
            } else if verbose || !s.correct {
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
    if let Some(kind) = fit {
        write_fit(&mut out, &fitted, kind)?;
        return Ok(ExitCode::SUCCESS);
    }
    let code = if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    if json {
        let labels: BTreeMap<&str, serde_json::Value> = per_label
            .iter()
            .map(|(label, (total, correct))| {
                (
                    label.as_str(),
                    serde_json::json!({"total": total, "correct": correct}),
                )
            })
            .collect();
        let tally = |t: &Tally| {
            let mut v = serde_json::to_value(t).unwrap_or_default();
            v["balanced_accuracy"] = serde_json::json!(t.balanced_accuracy());
            v
        };
        let json = serde_json::json!({
            "verifier": verifier.kind().as_str(),
            "cases": n_cases,
            "unreadable_lines": failed,
            "bad_ids_correct": bad_ok,
            "status_correct": status_ok,
            "labels": labels,
            "all": tally(&overall),
            "halves": per_half.iter().map(|(h, t)| (h.as_str(), tally(t))).collect::<BTreeMap<_, _>>(),
            "kinds": per_kind.iter().map(|(k, (all, held))| (k.clone(), serde_json::json!({"all": tally(all), "held": tally(held)}))).collect::<BTreeMap<_, _>>(),
            "forms": per_form.iter().map(|(f, t)| (f.clone(), tally(t))).collect::<BTreeMap<_, _>>(),
            "sentences": listed,
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(code);
    }
    writeln!(out, "\nverifier: {}", verifier.kind().as_str())?;
    writeln!(
        out,
        "cases: {n_cases}   bad_ids correct: {bad_ok}/{n_cases}   status correct: {status_ok}/{n_cases}"
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
    Ok(code)
}

/// Which support threshold `eval cases` fits.
#[derive(Debug, Clone, Copy)]
enum Fit {
    /// `overrule_similarity`, of the semantic verifier.
    Similarity,
    /// `trained_entailed`, of the trained verifier.
    Trained,
}

impl Fit {
    /// The reason that records the score of a judged sentence.
    fn reason_prefix(self) -> &'static str {
        match self {
            Fit::Similarity => "paraphrase: ",
            Fit::Trained => "entailment: ",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Fit::Similarity => "overrule_similarity",
            Fit::Trained => "trained_entailed",
        }
    }

    /// The lowest threshold tried (the highest is 0.95).
    fn lowest(self) -> f32 {
        match self {
            Fit::Similarity => 0.50,
            Fit::Trained => 0.05,
        }
    }
}

/// `eval cases --fit-similarity` / `--fit-trained`: every threshold from the lowest to 0.95
/// replayed on the recorded scores (a sentence with one is supported at or above the
/// threshold, else unsupported), the figures of each half, and the threshold with the best
/// balanced accuracy on the tune half (ties: the higher, which supports less).
fn write_fit(
    out: &mut impl Write,
    fit: &[(Half, case::SentenceScore, Option<f32>)],
    kind: Fit,
) -> Result<()> {
    use groundcite_core::check::SentenceVerdict;
    let tally = |threshold: f32, half: Half| {
        let mut t = Tally::default();
        for (_, s, similarity) in fit.iter().filter(|(h, _, _)| *h == half) {
            let mut s = s.clone();
            if let Some(sim) = similarity {
                s.verdict = Some(if *sim >= threshold {
                    SentenceVerdict::Supported
                } else {
                    SentenceVerdict::Unsupported
                });
            }
            t.add(&s);
        }
        t
    };
    writeln!(
        out,
        "threshold   tune: kept flagged bal.acc   held-out: kept flagged bal.acc"
    )?;
    let mut best: Option<(f32, f64)> = None;
    let steps = ((0.95 - kind.lowest()) * 100.0).round() as usize;
    for step in 0..=steps {
        let threshold = kind.lowest() + step as f32 * 0.01;
        let (tune, held) = (tally(threshold, Half::Tune), tally(threshold, Half::Held));
        let rate = |k: usize, n: usize| k as f64 / n.max(1) as f64;
        let ba = tune.balanced_accuracy().unwrap_or(0.0);
        writeln!(
            out,
            "{threshold:>9.2}   {:>10.2} {:>7.2} {:>7.3}   {:>14.2} {:>7.2} {:>7.3}",
            rate(tune.supported_kept, tune.supported),
            rate(tune.wrong_flagged, tune.wrong),
            ba,
            rate(held.supported_kept, held.supported),
            rate(held.wrong_flagged, held.wrong),
            held.balanced_accuracy().unwrap_or(0.0),
        )?;
        if best.is_none_or(|(_, b)| ba >= b) {
            best = Some((threshold, ba));
        }
    }
    if let Some((threshold, ba)) = best {
        writeln!(
            out,
            "best on the tune half: {} = {threshold:.2} (balanced accuracy {ba:.3})",
            kind.key()
        )?;
    }
    Ok(())
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

/// The verifier is chosen as for `eval cases` (`check.verifier`).
fn halueval(
    common: &CommonArgs,
    file: &std::path::Path,
    json: bool,
    from: usize,
    to: Option<usize>,
) -> Result<ExitCode> {
    let text = input::read_text(file)?;
    let settings = args::settings(common, &GeneratorArgs::default())?;
    let config = settings.check.clone();
    let checker = Checker::from_settings(&settings, groundcite_engine::load_embedder(&settings)?)?;
    let verifier = checker.verifier();
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
            let o = check::check(Some(&row.question), &passages, &answer, &config, verifier);
            o.counts.contradicted + o.counts.unsupported > 0
        };
        right_total += 1;
        right_ok += usize::from(!flagged(&row.right_answer));
        hall_total += 1;
        hall_ok += usize::from(flagged(&row.hallucinated_answer));
    }
    let right = right_ok as f64 / right_total.max(1) as f64;
    let hall = hall_ok as f64 / hall_total.max(1) as f64;
    if json {
        let json = serde_json::json!({
            "verifier": verifier.kind().as_str(),
            "from": from,
            "to": from + right_total,
            "rows": right_total,
            "right_supported": right_ok,
            "hallucinated_flagged": hall_ok,
            "balanced_accuracy": (right + hall) / 2.0,
        });
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("verifier: {}", verifier.kind().as_str());
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
