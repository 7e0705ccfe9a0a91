//! The handbook end to end: ingest the 250 pages of shared/corpora, ask the
//! questions of shared/cases/questions-dev.jsonl with the extractive
//! generator, and hold the bars of the issue: a gold page sent for ≥ 90%
//! of answerable questions, ≥ 80% answered with their fact and cited,
//! every unanswerable question refused.

use std::sync::Arc;

use groundcite_engine::eval;
use groundcite_engine::{Engine, ExtractiveGenerator, Settings};
use groundcite_index::{ChunkIndex, Index, IngestOptions};

#[tokio::test]
async fn handbook_questions_meet_the_bars() {
    let Some(shared) = groundcite_testdata::shared("the handbook questions end to end") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let pages = shared.join("corpora/tts-handbook/pages");
    let summary = index
        .ingest(&[pages], &IngestOptions::handbook(), &mut |_| {})
        .unwrap();
    assert!(summary.chunks > 1000, "{summary:?}");
    let settings = Settings::default();
    let generator = Arc::new(ExtractiveGenerator::new(
        settings.extractive.clone(),
        settings.check.refusal_form,
    ));
    let engine = Engine::new(settings, Arc::new(index), generator);
    let text = std::fs::read_to_string(shared.join("cases/questions-dev.jsonl")).unwrap();
    let questions = eval::parse_questions(&text).unwrap();
    let s = eval::questions(&engine, &questions).await.unwrap();
    for o in &s.outcomes {
        eprintln!(
            "{:<5} gold:{:<5} fact:{:<5} refused:{:<5} {:?} {:?}",
            o.id,
            o.gold_sent,
            o.fact_cited,
            o.refused,
            o.refusal_reason,
            o.answer.lines().next().unwrap_or("")
        );
    }
    eprintln!(
        "gold sent {}/{}; fact cited {}/{}; unanswerable refused {}/{}",
        s.gold_sent,
        s.answerable,
        s.fact_cited,
        s.answerable,
        s.refused_unanswerable,
        s.unanswerable
    );
    assert!(
        s.gold_sent * 10 >= s.answerable * 9,
        "gold sent {}/{}",
        s.gold_sent,
        s.answerable
    );
    assert!(
        s.fact_cited * 10 >= s.answerable * 8,
        "fact cited {}/{}",
        s.fact_cited,
        s.answerable
    );
    assert_eq!(
        s.refused_unanswerable, s.unanswerable,
        "every unanswerable question refused"
    );
}
