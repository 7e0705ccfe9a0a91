//! Fits the model path's answerability thresholds on half of the
//! handbook's pages and reports the other half.
//!
//!     GROUNDCITE_MODEL_DIR=... cargo run --release -p groundcite-bench --bin fit_answerability [INDEX_DIR]
//!
//! The questions of `shared/cases/questions-paraphrase-dev.jsonl` and
//! `questions-dev.jsonl` are split by page: an answerable question goes
//! with its first gold page, a page to the fitting half or the held-out
//! half by a hash of its path; an unanswerable question (no page) by a
//! hash of its id. On the fitting half it searches `min_answer`,
//! `retrieval_weight`, `type_bonus` and `type_penalty` (ties to the first
//! of the grid, the smaller adjustment) for the best balanced accuracy between answering the
//! answerable questions whose gold page was sent and refusing the
//! unanswerable ones, under at least 90% of those refused
//! (`min_relevance`, when an answer is certified, is fitted end to end by
//! `bench/fit-relevance.py`). It prints first how far
//! the unit scores can go under the default adjustments (`report_ceiling`:
//! how well the best unit's score separates answerable questions from
//! unanswerable ones and near-misses, and how often the best unit states
//! the fact), then the fitted values, then asks every question end to end with the extractive
//! generator and the fitted values (and again with the defaults, when they
//! differ), and prints the rates of each half,
//! also restricted to questions whose gold page was sent. Retrieval is
//! hybrid, as the product's with a model: the handbook is ingested with
//! chunk vectors, into INDEX_DIR when given (incrementally: an index
//! already holding this model's vectors is reused as it is), else into a
//! temporary folder (embedding the handbook takes minutes).
//!
//! With `GROUNDCITE_JUDGES_DIR` set, units are scored by the trained
//! judges' answer head (`answerability.scorer = "trained"`) instead of the
//! cosine.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use groundcite_engine::eval::{self, Question};
use groundcite_engine::{AnswerabilityConfig, AskOptions, Engine, Settings};
use groundcite_index::{ChunkIndex, Index, IngestOptions};

const FILES: &[&str] = &["questions-paraphrase-dev.jsonl", "questions-dev.jsonl"];

/// One question's gate inputs under one type adjustment.
#[derive(Clone)]
struct Row {
    id: String,
    held_out: bool,
    answerable: bool,
    gold_sent: bool,
    best_unit: f32,
    best_retrieval: f32,
    /// The best score of a unit that states the fact, if one was sent.
    fact_unit: Option<f32>,
}

/// One question's units: cosine to the question, whether the unit holds
/// an answer of the question's type (`None`: no type asked), and whether
/// it states the fact. They do not depend on the thresholds.
struct Judged {
    id: String,
    /// The question file it comes from.
    file: String,
    hard: bool,
    held_out: bool,
    answerable: bool,
    gold_sent: bool,
    best_retrieval: f32,
    units: Vec<(f32, Option<bool>, bool)>,
}

impl Judged {
    /// The gate's inputs with `bonus` for a unit of the asked type and
    /// `penalty` for one without.
    fn row(&self, bonus: f32, penalty: f32) -> Row {
        let score = |&(sim, typed, _): &(f32, Option<bool>, bool)| match typed {
            None => sim,
            Some(true) => sim + bonus,
            Some(false) => sim - penalty,
        };
        Row {
            id: self.id.clone(),
            held_out: self.held_out,
            answerable: self.answerable,
            gold_sent: self.gold_sent,
            best_unit: self
                .units
                .iter()
                .map(score)
                .reduce(f32::max)
                .unwrap_or(-1.0),
            best_retrieval: self.best_retrieval,
            fact_unit: self
                .units
                .iter()
                .filter(|u| u.2)
                .map(score)
                .reduce(f32::max),
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model_dir = std::env::var_os(groundcite_embed::MODEL_DIR_ENV)
        .map(PathBuf::from)
        .ok_or("set GROUNDCITE_MODEL_DIR to the model folder (scripts/fetch-model.sh prints it)")?;
    let shared = groundcite_testdata::shared("fitting the answerability gate")
        .ok_or("../shared is missing")?;
    // Retrieval as in the product with a model: hybrid, over chunk vectors
    // computed at ingest. An index folder given as the first argument is
    // ingested incrementally (its vectors reused); otherwise a temporary one.
    let embedder = Arc::new(groundcite_embed::Embedder::load(&model_dir)?);
    let judges = match std::env::var_os(groundcite_embed::JUDGES_DIR_ENV) {
        Some(dir) => Some(Arc::new(groundcite_embed::Judges::load(dir, &model_dir)?)),
        None => None,
    };
    let temporary = tempfile::tempdir()?;
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| temporary.path().to_path_buf(), PathBuf::from);
    let mut index = Index::open_or_create(&dir)?;
    index.set_embedder(embedder.clone());
    let summary = index.ingest(
        &[shared.join("corpora/tts-handbook/pages")],
        &IngestOptions::handbook(),
        &mut |_| {},
    )?;
    eprintln!(
        "index {}: {} chunk vectors computed",
        dir.display(),
        summary.embedded
    );
    let index = Arc::new(index);
    let engine_with = |mut config: AnswerabilityConfig| {
        if judges.is_some() {
            config.scorer = groundcite_engine::UnitScorer::Trained;
        }
        let settings = Settings {
            answerability: config,
            model_dir: Some(model_dir.clone()),
            ..Settings::default()
        };
        let generator = groundcite_engine::pipeline::build_generator(&settings)
            .expect("the extractive generator");
        Engine::new(settings, index.clone(), generator)
            .with_models(Arc::clone(&embedder), judges.clone())
    };

    let mut questions: Vec<(String, Question)> = Vec::new();
    for file in FILES {
        let text = std::fs::read_to_string(shared.join("cases").join(file))?;
        for q in eval::parse_questions(&text)? {
            questions.push((file.to_string(), q));
        }
    }
    let held_out = |q: &Question| eval::half(q) == groundcite_core::case::Half::Held;

    // The gate's inputs (they do not depend on the thresholds).
    let engine = engine_with(AnswerabilityConfig::default());
    let judge = engine.answerability().expect("a model is configured");
    let mut judged_all = Vec::new();
    for (file, q) in &questions {
        let judged = engine
            .judge(&q.question, &AskOptions::default())?
            .expect("a model is configured");
        let gold_sent = judged.passages.iter().any(|p| {
            q.gold
                .iter()
                .any(|g| p.id.split('#').next() == Some(g.as_str()))
        });
        let fact = q.fact.as_deref().map(str::to_lowercase);
        let j = &judged.judgement;
        let units = j
            .units
            .iter()
            .zip(&j.similarity)
            .map(|(u, &sim)| {
                let typed = judge.held(j.answer_type, &u.embedded);
                let states = fact
                    .as_ref()
                    .is_some_and(|f| u.text.to_lowercase().contains(f));
                (sim, typed, states)
            })
            .collect();
        judged_all.push(Judged {
            id: q.id.clone(),
            file: file.clone(),
            hard: q.hard,
            held_out: held_out(q),
            answerable: q.answerable,
            gold_sent,
            best_retrieval: judged.best_retrieval,
            units,
        });
    }
    let n_fit = judged_all.iter().filter(|j| !j.held_out).count();
    println!(
        "questions: {} ({} to fit on, {} held out)",
        judged_all.len(),
        n_fit,
        judged_all.len() - n_fit
    );

    report_ceiling(&judged_all);

    // The type adjustment, the retrieval weight and the threshold together.
    let mut config = AnswerabilityConfig::default();
    // ((meets the refusal floor, balanced accuracy), bonus, penalty, weight, threshold)
    type Choice = ((bool, f32), f32, f32, f32, f32);
    let mut chosen: Option<Choice> = None;
    for bonus in [0.0, 0.05, 0.1] {
        for penalty in [0.0, 0.1, 0.2, 0.3] {
            let rows: Vec<Row> = judged_all.iter().map(|j| j.row(bonus, penalty)).collect();
            let fit: Vec<&Row> = rows.iter().filter(|r| !r.held_out).collect();
            let (w, t, key) = fit_threshold(&fit, &[0.0, 0.1, 0.2, 0.3, 0.4]);
            if chosen.is_none_or(|(best, ..)| key > best) {
                chosen = Some((key, bonus, penalty, w, t));
            }
        }
    }
    let ((_, acc), bonus, penalty, weight, threshold) = chosen.expect("a grid");
    config.type_bonus = bonus;
    config.type_penalty = penalty;
    config.retrieval_weight = weight;
    if judges.is_some() {
        config.scorer = groundcite_engine::UnitScorer::Trained;
        config.trained.min_answer = threshold;
    } else {
        config.min_answer = threshold;
    }
    let rows: Vec<Row> = judged_all.iter().map(|j| j.row(bonus, penalty)).collect();
    // `min_relevance` (when an answer is certified) is fitted end to end
    // by bench/fit-relevance.py on `eval questions --json`; it stays as
    // configured here.
    println!(
        "fitted: min_answer = {threshold:.2}, retrieval_weight = {weight:.1}, type_bonus = {bonus:.2}, \
         type_penalty = {penalty:.1} (balanced accuracy {acc:.3}); min_relevance kept at {:.2} \
         (bench/fit-relevance.py fits it)",
        config.min_relevance
    );
    println!("[answerability]\n{}", toml_of(&config));

    // End to end with the fitted values, and with the defaults when they
    // differ (a fit that scores better on the gate's inputs may cite fewer
    // facts end to end).
    let hard: HashMap<&str, bool> = questions
        .iter()
        .map(|(_, q)| (q.id.as_str(), q.hard))
        .collect();
    let fitted = engine_with(config.clone());
    let defaults = (config != AnswerabilityConfig::default())
        .then(|| engine_with(AnswerabilityConfig::default()));
    let runs =
        std::iter::once(("fitted", &fitted)).chain(defaults.as_ref().map(|e| ("defaults", e)));
    for (run, engine) in runs {
        println!("end to end with the {run} values:");
        for file in FILES {
            let set: Vec<Question> = questions
                .iter()
                .filter(|(f, _)| f == file)
                .map(|(_, q)| q.clone())
                .collect();
            let summary = eval::questions(engine, &set).await?;
            for (name, want_held_out) in [("fit half", false), ("held-out half", true)] {
                let outcomes: Vec<_> = summary
                    .outcomes
                    .iter()
                    .zip(&set)
                    .filter(|(_, q)| held_out(q) == want_held_out)
                    .map(|(o, _)| o)
                    .collect();
                let count = |f: &dyn Fn(&&eval::QuestionOutcome) -> bool| {
                    outcomes.iter().filter(|o| f(o)).count()
                };
                let answerable = count(&|o| o.answerable);
                let gold = count(&|o| o.answerable && o.gold_sent);
                let facts = count(&|o| o.answerable && o.fact_cited);
                let facts_gold = count(&|o| o.answerable && o.gold_sent && o.fact_cited);
                let unanswerable = count(&|o| !o.answerable);
                let refused = count(&|o| !o.answerable && o.refused);
                let hard_n = count(&|o| !o.answerable && hard[o.id.as_str()]);
                let hard_refused = count(&|o| !o.answerable && o.refused && hard[o.id.as_str()]);
                let no_direct = count(&|o| o.refusal_reason.as_deref() == Some("no_direct_answer"));
                println!(
                    "{file} {name}: gold page sent {gold}/{answerable}; fact cited {facts}/{answerable} \
                 ({facts_gold}/{gold} where the gold page was sent); unanswerable refused \
                 {refused}/{unanswerable}; hard near-misses refused {hard_refused}/{hard_n}; \
                 no_direct_answer refusals {no_direct}"
                );
            }
            if std::env::var_os("VERBOSE").is_some() {
                for (o, row) in summary
                    .outcomes
                    .iter()
                    .zip(rows.iter().filter(|r| set.iter().any(|q| q.id == r.id)))
                {
                    println!(
                        "  {:<5} held_out:{:<5} gold:{:<5} fact:{:<5} refused:{:<20} unit {:.3} retrieval {:.3} | {}",
                        o.id,
                        row.held_out,
                        o.gold_sent,
                        o.fact_cited,
                        o.refusal_reason.as_deref().unwrap_or("-"),
                        row.best_unit,
                        row.best_retrieval,
                        o.answer.lines().next().unwrap_or("")
                    );
                }
            }
        }
    }

    // The two off-topic answers.
    let judge = fitted.answerability().expect("a model is configured");
    for (question, answer) in EXAMPLES {
        let a = judge.answers_question(question, &[answer])?;
        println!(
            "answers_question {:?} {:?}: {question:?}",
            a.verdict, a.score
        );
    }
    Ok(())
}

/// How far the unit scores can take the gate and the extractive answer,
/// under the default type adjustments, per half: how well the best unit's
/// score separates answerable questions whose fact-stating unit was sent
/// from unanswerable ones and from the hard near-misses (AUC: the chance
/// that a random answerable question outscores a random unanswerable one),
/// and the ceiling of a perfect gate: the answerable questions whose
/// best-scoring unit states the fact.
fn report_ceiling(judged: &[Judged]) {
    let d = AnswerabilityConfig::default();
    for (name, want_held_out) in [("fit half", false), ("held-out half", true)] {
        let rows: Vec<(&Judged, Row)> = judged
            .iter()
            .filter(|j| j.held_out == want_held_out)
            .map(|j| (j, j.row(d.type_bonus, d.type_penalty)))
            .collect();
        let scores = |keep: &dyn Fn(&Judged, &Row) -> bool| -> Vec<f32> {
            rows.iter()
                .filter(|(j, r)| keep(j, r))
                .map(|(_, r)| r.best_unit)
                .collect()
        };
        let pos = scores(&|_, r| r.answerable && r.fact_unit.is_some());
        let neg = scores(&|_, r| !r.answerable);
        let hard = scores(&|j, r| !r.answerable && j.hard);
        println!(
            "{name}: AUC of the best unit's score, answerable with the fact sent ({}) against \
             unanswerable ({}) {:.3}, against hard near-misses ({}) {:.3}",
            pos.len(),
            neg.len(),
            eval::auc(&pos, &neg).unwrap_or(f64::NAN),
            hard.len(),
            eval::auc(&pos, &hard).unwrap_or(f64::NAN)
        );
        for file in FILES {
            let answerable: Vec<&Row> = rows
                .iter()
                .filter(|(j, r)| j.file == *file && r.answerable)
                .map(|(_, r)| r)
                .collect();
            let sent = answerable.iter().filter(|r| r.fact_unit.is_some()).count();
            let best = answerable
                .iter()
                .filter(|r| r.fact_unit == Some(r.best_unit))
                .count();
            println!(
                "  {file}: the best unit states the fact for {best}/{} answerable questions (a \
                 perfect gate's ceiling for the extractive answer); a unit stating it was sent for {sent}",
                answerable.len()
            );
        }
    }
}

/// The examples of answers that do not address the question.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "What is the per diem rate when I travel?",
        "In the side bar you can filter by hotel class, amenities and more, such as Hide hotels over Per Diem limit ($XXX.00) [2].",
    ),
    (
        "What is the Wi-Fi password in the San Francisco office?",
        "From the airport, public transit (BART) takes you downtown [1].",
    ),
];

/// The best (weight, threshold) on `rows` by balanced accuracy between
/// answering answerable questions whose gold page was sent and refusing
/// unanswerable ones, among those that refuse at least 90% of the
/// unanswerable (the best overall when none does). Ties go to the lower
/// threshold and weight.
fn fit_threshold(rows: &[&Row], weights: &[f32]) -> (f32, f32, (bool, f32)) {
    let positives: Vec<&&Row> = rows
        .iter()
        .filter(|r| r.answerable && r.gold_sent)
        .collect();
    let negatives: Vec<&&Row> = rows.iter().filter(|r| !r.answerable).collect();
    let mut best: Option<(bool, f32, f32, f32)> = None;
    for &w in weights {
        for step in 0..=80 {
            let t = 0.1 + step as f32 * 0.01;
            let answers = |r: &Row| r.best_unit + w * r.best_retrieval >= t;
            let tpr = positives.iter().filter(|r| answers(r)).count() as f32
                / positives.len().max(1) as f32;
            let tnr = negatives.iter().filter(|r| !answers(r)).count() as f32
                / negatives.len().max(1) as f32;
            let ok = tnr >= 0.9;
            let acc = (tpr + tnr) / 2.0;
            if best.is_none_or(|(b_ok, _, _, b_acc)| (ok, acc) > (b_ok, b_acc)) {
                best = Some((ok, w, t, acc));
            }
        }
    }
    let (ok, w, t, acc) = best.expect("a grid");
    (w, (t * 100.0).round() / 100.0, (ok, acc))
}

fn toml_of(c: &AnswerabilityConfig) -> String {
    toml::to_string(c).unwrap_or_default()
}
