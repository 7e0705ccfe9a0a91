//! Writes the model path's inputs for every dev question as JSONL, for
//! studying the gate and the extractive choice outside the product
//! the passages sent (id, section, retrieval score), and every
//! answer unit with its cosine to the question, the cosine of the unit
//! embedded after its section label, its answer-type adjustment and,
//! with `GROUNDCITE_JUDGES_DIR` set, the trained answer head's probability.
//!
//! ```sh
//! GROUNDCITE_MODEL_DIR=... cargo run --release -p groundcite-bench \
//!     --bin dump_answerability -- INDEX_DIR OUT.jsonl
//! ```
//!
//! INDEX_DIR is a handbook index ingested with this model's vectors
//! (`groundcite --index DIR ingest .../tts-handbook/pages --handbook`), so
//! retrieval is hybrid as in the product.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use groundcite_engine::eval;
use groundcite_engine::{AskOptions, Engine, Settings};
use groundcite_index::Index;

const FILES: &[&str] = &["questions-paraphrase-dev.jsonl", "questions-dev.jsonl"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let (Some(index_dir), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: dump_answerability INDEX_DIR OUT.jsonl".into());
    };
    let model_dir = std::env::var_os(groundcite_embed::MODEL_DIR_ENV)
        .map(PathBuf::from)
        .ok_or("set GROUNDCITE_MODEL_DIR to the model folder")?;
    let shared =
        groundcite_testdata::shared("the answerability dump").ok_or("../shared is missing")?;
    let index = Arc::new(Index::open(std::path::Path::new(&index_dir))?);
    let embedder = Arc::new(groundcite_embed::Embedder::load(&model_dir)?);
    // With GROUNDCITE_JUDGES_DIR set, each unit also gets the trained
    // answer head's probability (`trained`), beside the cosine.
    let judges = std::env::var_os(groundcite_embed::JUDGES_DIR_ENV)
        .map(|dir| groundcite_embed::Judges::load(dir, &model_dir))
        .transpose()?;
    let settings = Settings {
        model_dir: Some(model_dir),
        ..Settings::default()
    };
    let generator = groundcite_engine::pipeline::build_generator(&settings)?;
    let engine = Engine::new(settings, index, generator).with_embedder(Arc::clone(&embedder));
    let mut out = std::io::BufWriter::new(std::fs::File::create(out)?);
    for file in FILES {
        let text = std::fs::read_to_string(shared.join("cases").join(file))?;
        for q in eval::parse_questions(&text)? {
            let judged = engine
                .judge(&q.question, &AskOptions::default())?
                .ok_or("no model path")?;
            let j = &judged.judgement;
            let contexted: Vec<String> = j
                .units
                .iter()
                .map(|u| {
                    let section = &judged.passages[u.passage - 1].section;
                    format!("{section}: {}", u.embedded)
                })
                .collect();
            let mut texts: Vec<&str> = vec![q.question.as_str()];
            texts.extend(contexted.iter().map(String::as_str));
            let vectors = embedder.embed(&texts)?;
            let trained: Vec<Option<f32>> = match &judges {
                Some(judges) => {
                    let pairs: Vec<(&str, &str)> = j
                        .units
                        .iter()
                        .map(|u| (q.question.as_str(), u.embedded.as_str()))
                        .collect();
                    judges.answers(&pairs)?.into_iter().map(Some).collect()
                }
                None => vec![None; j.units.len()],
            };
            let units: Vec<serde_json::Value> = j
                .units
                .iter()
                .enumerate()
                .map(|(i, u)| {
                    serde_json::json!({
                        "passage": u.passage,
                        "text": u.text,
                        "embedded": u.embedded,
                        "sim": j.similarity[i],
                        "score": j.score[i],
                        "sim_ctx": groundcite_embed::cosine(vectors.row(0), vectors.row(i + 1)),
                        "trained": trained[i],
                        "kind": format!("{:?}", u.kind),
                    })
                })
                .collect();
            let row = serde_json::json!({
                "file": file,
                "id": q.id,
                "question": q.question,
                "answerable": q.answerable,
                "hard": q.hard,
                "gold": q.gold,
                "fact": q.fact,
                "answer_type": j.answer_type,
                "best_retrieval": judged.best_retrieval,
                "passages": judged.passages.iter().map(|p| serde_json::json!({
                    "id": p.id, "section": p.section, "score": p.score})).collect::<Vec<_>>(),
                "units": units,
            });
            writeln!(out, "{row}")?;
        }
    }
    out.flush()?;
    Ok(())
}
