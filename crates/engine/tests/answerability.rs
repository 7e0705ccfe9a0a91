//! The model path: the gate's judgement, the extractive
//! generator by meaning, `answers_question` and `grounded`. The tests that
//! need all-MiniLM-L6-v2 find it through GROUNDCITE_MODEL_DIR or at the
//! default path under the repository root; they are required when CI=true
//! and skipped, saying so, otherwise.

use std::path::PathBuf;
use std::sync::Arc;

use groundcite_embed::Embedder;
use groundcite_engine::answerability::Answerability;
use groundcite_engine::{
    AnswerabilityConfig, AnswersQuestion, AskOptions, AskResult, Engine, ExtractiveGenerator,
    NO_DIRECT_ANSWER, RefusalReason, Relevance, Retriever, Settings,
};
use groundcite_index::vectors::{
    ChunkTexts, UnitVectorScheme, UnitVectors, chunk_embedder, embed_chunks,
};
use groundcite_index::{Chunk, Hit};
use groundcite_llm::{Generator, ScriptedGenerator};

fn model_dir() -> Option<PathBuf> {
    groundcite_testdata::model_dir("the answerability tests")
}

/// The same passages, scored `score`, for every query.
struct Fixed {
    passages: Vec<(&'static str, &'static str)>,
    score: f32,
}

impl Retriever for Fixed {
    fn search(&self, _: &str, _: usize) -> groundcite_index::Result<Vec<Hit>> {
        Ok(self
            .passages
            .iter()
            .enumerate()
            .map(|(i, (section, text))| Hit {
                chunk: Chunk {
                    id: format!("page{i}.md#L1-L9"),
                    path: format!("page{i}.md"),
                    title: section.to_string(),
                    section: section.to_string(),
                    source_url: format!("https://handbook.example/page{i}"),
                    text: text.to_string(),
                    start: 0,
                    end: text.len(),
                    metadata: serde_json::Value::Null,
                },
                score: self.score,
                raw_score: self.score,
                units: None,
            })
            .collect())
    }
}

const EXPENSES: (&str, &str) = (
    "Expenses › Reimbursement",
    "Reimbursements settle within 30 days of approval. Questions about a claim go to the finance help desk.",
);
const TRANSIT: (&str, &str) = (
    "Offices › San Francisco",
    "From the airport, public transit (BART) takes you downtown. The office is a short walk from the Montgomery station.",
);
const LAPTOP: (&str, &str) = (
    "Equipment › Laptops",
    "To request a new laptop you need:\n\n- a signed equipment request form\n- your supervisor's approval\n",
);

fn settings(model: Option<PathBuf>, config: AnswerabilityConfig) -> Settings {
    Settings {
        model_dir: model,
        answerability: config,
        ..Settings::default()
    }
}

fn extractive(settings: &Settings) -> Arc<dyn Generator> {
    Arc::new(ExtractiveGenerator::new(
        settings.extractive.clone(),
        settings.check.refusal_form,
    ))
}

async fn ask(engine: &Engine, question: &str) -> AskResult {
    engine.ask(question, &AskOptions::default()).await.unwrap()
}

fn with_model(
    dir: PathBuf,
    config: AnswerabilityConfig,
    passages: Vec<(&'static str, &'static str)>,
    generator: Option<Arc<dyn Generator>>,
) -> Engine {
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let settings = settings(Some(dir), config);
    let generator = generator.unwrap_or_else(|| extractive(&settings));
    Engine::new(
        settings,
        Arc::new(Fixed {
            passages,
            score: 0.9,
        }),
        generator,
    )
    .with_embedder(embedder)
}

#[tokio::test]
async fn without_a_model_relevance_is_unchecked_and_grounding_unchanged() {
    let settings = settings(None, AnswerabilityConfig::default());
    let generator = Arc::new(ScriptedGenerator::new(vec![
        "From the airport, public transit (BART) takes you downtown [1].".to_string(),
    ]));
    let engine = Engine::new(
        settings,
        Arc::new(Fixed {
            passages: vec![TRANSIT],
            score: 0.9,
        }),
        generator,
    );
    let r = ask(
        &engine,
        "What is the Wi-Fi password in the San Francisco office?",
    )
    .await;
    assert!(r.refusal.is_none(), "{r:#?}");
    assert_eq!(r.answers_question, Some(AnswersQuestion::unchecked()));
    // Stated in the source, but relevance was not judged: not grounded.
    assert!(r.supported && !r.grounded, "{r:#?}");
    assert_eq!(r.timings.gate_ms, 0.0, "no answerability judgement ran");
}

#[tokio::test]
async fn an_answer_that_does_not_address_the_question_is_not_grounded() {
    let Some(dir) = model_dir() else { return };
    // A gate that lets everything through, to check what any generator
    // serves: here, an off-topic but well cited sentence, which must not be
    // grounded.
    let open_gate = AnswerabilityConfig {
        min_answer: -10.0,
        ..AnswerabilityConfig::default()
    };
    let generator: Arc<dyn Generator> = Arc::new(ScriptedGenerator::new(vec![
        "From the airport, public transit (BART) takes you downtown [1].".to_string(),
    ]));
    let engine = with_model(dir, open_gate, vec![TRANSIT], Some(generator));
    let r = ask(
        &engine,
        "What is the Wi-Fi password in the San Francisco office?",
    )
    .await;
    assert!(r.refusal.is_none(), "{r:#?}");
    let aq = r.answers_question.clone().unwrap();
    assert_eq!(aq.verdict, Relevance::No, "{aq:?}");
    assert_eq!(aq.method, "semantic");
    assert!(aq.score.is_some());
    assert_eq!(r.counts.supported, 1, "the sentence itself is supported");
    assert!(!r.grounded, "grounded requires answers_question");
}

#[tokio::test]
async fn the_extractive_generator_answers_by_meaning() {
    let Some(dir) = model_dir() else { return };
    let engine = with_model(
        dir,
        AnswerabilityConfig::default(),
        vec![TRANSIT, EXPENSES],
        None,
    );
    let r = ask(&engine, "How long do reimbursements take to settle?").await;
    assert!(r.refusal.is_none(), "{r:#?}");
    assert!(
        r.answer
            .contains("Reimbursements settle within 30 days of approval [2]."),
        "{}",
        r.answer
    );
    assert_eq!(
        r.answers_question.as_ref().map(|a| a.verdict),
        Some(Relevance::Yes),
        "{:?}",
        r.answers_question
    );
    assert!(r.grounded, "{r:#?}");
    // The answerability judgement is timed apart from retrieval.
    let t = r.timings;
    assert!(t.gate_ms > 0.0, "{t:?}");
    assert!(t.retrieve_ms + t.gate_ms <= t.total_ms, "{t:?}");
}

/// `eval questions` on the model path reports, per question, the score of
/// its best unit and whether the unit the judge ranked first states the
/// fact, and over the questions how well that score separates answerable
/// questions from unanswerable ones (AUC).
#[tokio::test]
async fn eval_questions_reports_the_judges_ranking_and_separation() {
    let Some(dir) = model_dir() else { return };
    let engine = with_model(
        dir,
        AnswerabilityConfig::default(),
        vec![TRANSIT, EXPENSES],
        None,
    );
    let questions = groundcite_engine::eval::parse_questions(concat!(
        r#"{"id": "a1", "question": "How long do reimbursements take to settle?", "answerable": true, "gold": ["page1.md"], "fact": "30 days"}"#,
        "\n",
        r#"{"id": "a2", "question": "Which train takes me downtown from the airport?", "answerable": true, "gold": ["page0.md"], "fact": "BART"}"#,
        "\n",
        r#"{"id": "a3", "question": "Who do I ask about a claim?", "answerable": true, "gold": ["page9.md"], "fact": "help desk"}"#,
        "\n",
        r#"{"id": "u1", "question": "What is the Wi-Fi password in the San Francisco office?", "answerable": false, "hard": true}"#,
        "\n",
    ))
    .unwrap();
    let s = groundcite_engine::eval::questions(&engine, &questions)
        .await
        .unwrap();
    let first: Vec<Option<bool>> = s
        .outcomes
        .iter()
        .map(|o| o.ranked_first_states_fact)
        .collect();
    // a3's gold page was not sent: it is not ranked; u1 has no fact.
    assert_eq!(first, [Some(true), Some(true), None, None]);
    assert_eq!((s.ranked, s.ranked_first_states_fact), (2, 2));
    let scores: Vec<f32> = s.outcomes.iter().map(|o| o.unit_score.unwrap()).collect();
    let expected = groundcite_engine::eval::auc(&scores[..3], &scores[3..]);
    assert!(expected.is_some());
    assert_eq!(s.auc_unanswerable, expected);
    assert_eq!(s.auc_hard, expected);
}

#[tokio::test]
async fn a_list_item_is_served_after_its_lead_in() {
    let Some(dir) = model_dir() else { return };
    let engine = with_model(dir, AnswerabilityConfig::default(), vec![LAPTOP], None);
    let r = ask(&engine, "What do I need to request a new laptop?").await;
    assert!(r.refusal.is_none(), "{r:#?}");
    assert_eq!(
        r.answer,
        "To request a new laptop you need [1]. a signed equipment request form [1]. \
         your supervisor's approval [1]."
    );
}

#[tokio::test]
async fn a_strong_passage_that_does_not_answer_is_no_direct_answer() {
    let Some(dir) = model_dir() else { return };
    let engine = with_model(
        dir,
        AnswerabilityConfig::default(),
        vec![EXPENSES, TRANSIT],
        None,
    );
    let r = ask(
        &engine,
        "What interest rate is charged on a late reimbursement?",
    )
    .await;
    let refusal = r.refusal.as_ref().expect("refused");
    assert_eq!(refusal.reason, RefusalReason::NoDirectAnswer, "{r:#?}");
    assert!(r.answer.starts_with(NO_DIRECT_ANSWER), "{}", r.answer);
    assert_eq!(refusal.closest_passages[0].id, "page0.md#L1-L9");
    assert!(r.answer.contains("<https://handbook.example/page0>"));
    assert_eq!(r.answers_question, None, "a refusal claims nothing");
}

/// The vectors of each passage's units, as the index stores them.
fn stored_units(embedder: &Embedder, passage: (&str, &str)) -> UnitVectors {
    let units = groundcite_core::unit::units(&[passage]);
    let texts: Vec<&str> = units.iter().map(|u| u.embedded.as_str()).collect();
    UnitVectors {
        dim: embedder.dim(),
        data: embedder.embed(&texts).unwrap().into_flat(),
    }
}

#[test]
fn unit_vectors_from_ingest_are_reused_when_they_line_up() {
    let Some(dir) = model_dir() else { return };
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let fresh = || Answerability::new(Arc::clone(&embedder), AnswerabilityConfig::default());
    let passages = [EXPENSES, LAPTOP];
    let question = "How long until I get my money back for a claim?";
    let embedded = fresh().judge(question, &passages).unwrap();

    // Stored vectors give the judgement embedding gives.
    let stored: Vec<UnitVectors> = passages
        .iter()
        .map(|&p| stored_units(&embedder, p))
        .collect();
    let reused = fresh()
        .judge_with(question, &passages, &[Some(&stored[0]), Some(&stored[1])])
        .unwrap();
    assert_eq!(reused.units, embedded.units);
    for (a, b) in reused.similarity.iter().zip(&embedded.similarity) {
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }

    // They are what is read: passage 2's stored vectors replaced by the
    // question's own vector make its units match the question exactly.
    let q = embedder.embed_one(question).unwrap();
    let n = stored[1].len();
    let planted = UnitVectors {
        dim: embedder.dim(),
        data: q.repeat(n),
    };
    let judged = fresh()
        .judge_with(question, &passages, &[None, Some(&planted)])
        .unwrap();
    for (u, s) in judged.units.iter().zip(&judged.similarity) {
        if u.passage == 2 {
            assert!((s - 1.0).abs() < 1e-4, "{}: {s}", u.text);
        }
    }

    // Vectors that do not line up with the passage's units (one row short)
    // are not used: the passage is embedded.
    let short = UnitVectors {
        dim: embedder.dim(),
        data: q.repeat(n - 1),
    };
    let judged = fresh()
        .judge_with(question, &passages, &[None, Some(&short)])
        .unwrap();
    for (a, b) in judged.similarity.iter().zip(&embedded.similarity) {
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }
}

#[test]
fn pooled_units_score_alike_from_an_ingest_and_from_the_passage_alone() {
    let Some(dir) = model_dir() else { return };
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let pooled = || {
        Answerability::new(Arc::clone(&embedder), AnswerabilityConfig::default())
            .with_unit_vectors(UnitVectorScheme::PooledUnits)
    };
    let passages = [EXPENSES, LAPTOP];
    let question = "How long until I get my money back for a claim?";
    // What an ingest under `unit_vectors = "pooled-units"` stores for each passage.
    let ingest = chunk_embedder(Arc::clone(&embedder), UnitVectorScheme::PooledUnits);
    let stored: Vec<UnitVectors> = passages
        .iter()
        .map(|&(section, text)| {
            let chunk = ChunkTexts::of(section, text);
            let chunk = [&chunk];
            let (_, data, dim) = embed_chunks(ingest.as_ref(), &chunk, 0, &mut |_, _| {}).unwrap();
            UnitVectors { dim, data }
        })
        .collect();
    let from_passages = pooled().judge(question, &passages).unwrap();
    let from_ingest = pooled()
        .judge_with(question, &passages, &[Some(&stored[0]), Some(&stored[1])])
        .unwrap();
    for (a, b) in from_ingest.similarity.iter().zip(&from_passages.similarity) {
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }
    // Pooled in their passage's context, the units score otherwise than
    // embedded alone.
    let separate = Answerability::new(Arc::clone(&embedder), AnswerabilityConfig::default())
        .judge(question, &passages)
        .unwrap();
    assert_eq!(separate.units, from_passages.units);
    assert!(
        separate
            .similarity
            .iter()
            .zip(&from_passages.similarity)
            .any(|(a, b)| (a - b).abs() > 1e-2)
    );
}

#[test]
fn pooled_chunks_keep_each_units_own_vector_and_read_the_chunk_from_its_units() {
    let Some(dir) = model_dir() else { return };
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let ingest = chunk_embedder(Arc::clone(&embedder), UnitVectorScheme::PooledChunks);
    assert!(ingest.model_id().ends_with("+pooled-chunks"));
    let with_units = ChunkTexts::of(EXPENSES.0, EXPENSES.1);
    // A chunk without answer units (a bare heading) is embedded whole.
    let without = ChunkTexts::of("Expenses", "# Expenses");
    assert!(without.units.is_empty());
    let chunks = [&with_units, &without];
    let (chunk_data, unit_data, dim) =
        embed_chunks(ingest.as_ref(), &chunks, 0, &mut |_, _| {}).unwrap();
    // Every unit's vector is the one it gets embedded on its own.
    let own: Vec<&str> = with_units.units.iter().map(|u| u.1.as_str()).collect();
    let alone = embedder.embed(&own).unwrap();
    assert_eq!(unit_data.len(), own.len() * dim);
    for (got, want) in unit_data.chunks_exact(dim).zip(alone.rows()) {
        assert!(groundcite_embed::cosine(got, want) > 0.99999);
    }
    let whole = embedder
        .embed(&[with_units.text.as_str(), without.text.as_str()])
        .unwrap();
    let rows: Vec<&[f32]> = chunk_data.chunks_exact(dim).collect();
    assert!(groundcite_embed::cosine(rows[1], whole.row(1)) > 0.99999);
    // Read from its units and its label, the chunk is near, not equal, to
    // the chunk read whole, and nearer to it than to another passage.
    let near = groundcite_embed::cosine(rows[0], whole.row(0));
    let other = embedder
        .embed_one(&ChunkTexts::of(LAPTOP.0, LAPTOP.1).text)
        .unwrap();
    assert!(near > 0.8 && near < 0.9999, "{near}");
    assert!(
        near > groundcite_embed::cosine(rows[0], &other) + 0.2,
        "{near}"
    );
}

/// [`Fixed`], with the unit vectors an index would store for each hit.
struct FixedWithUnits(Fixed, Vec<UnitVectors>);

impl Retriever for FixedWithUnits {
    fn search(&self, query: &str, k: usize) -> groundcite_index::Result<Vec<Hit>> {
        let mut hits = self.0.search(query, k)?;
        for (hit, units) in hits.iter_mut().zip(&self.1) {
            hit.units = Some(units.clone());
        }
        Ok(hits)
    }
}

#[tokio::test]
async fn an_ask_judges_with_the_unit_vectors_of_its_hits() {
    let Some(dir) = model_dir() else { return };
    let embedder = Arc::new(Embedder::load(&dir).unwrap());
    let question = "What is the Wi-Fi password in the San Francisco office?";
    // Embedding the transit sentences itself, the gate refuses.
    let plain = with_model(
        dir.clone(),
        AnswerabilityConfig::default(),
        vec![TRANSIT],
        None,
    );
    assert!(ask(&plain, question).await.refusal.is_some());
    // Stored vectors that say the transit sentences answer this: the gate
    // reads them and answers.
    let q = embedder.embed_one(question).unwrap();
    let n = groundcite_core::unit::units(&[TRANSIT]).len();
    let planted = UnitVectors {
        dim: embedder.dim(),
        data: q.repeat(n),
    };
    let settings = settings(Some(dir), AnswerabilityConfig::default());
    let engine = Engine::new(
        settings.clone(),
        Arc::new(FixedWithUnits(
            Fixed {
                passages: vec![TRANSIT],
                score: 0.9,
            },
            vec![planted],
        )),
        extractive(&settings),
    )
    .with_embedder(embedder);
    let r = ask(&engine, question).await;
    assert!(r.refusal.is_none(), "{r:#?}");
    assert!(r.answer.contains("[1]"), "{}", r.answer);
}
