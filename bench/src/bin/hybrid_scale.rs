//! Hybrid search at scale, in process: the parts of
//! `Index::search_hybrid` timed one at a time on an index ingested with
//! vectors (`bench/scale-dense.sh` writes one: a synthetic corpus with
//! synthetic vectors under the model's id), the dev questions as queries,
//! one at a time after one untimed pass.
//!
//! ```text
//! cargo run --release -p groundcite-bench --bin hybrid_scale -- MODEL_DIR INDEX_DIR \
//!     ../shared/cases/questions-dev.jsonl ../shared/cases/questions-paraphrase-dev.jsonl
//! ```
//!
//! Rows: BM25's top 10 (`Index::search`, what lexical `/v1/search`
//! runs), BM25 at the fusion's depth (`Index::search` too, so each hit's
//! coverage is also computed), the dense ranking
//! (`VectorStore::rank_for`), both rankings (`Index::rankings`: BM25
//! beside the dense side, the two sharing the cores), `search_hybrid` with the
//! question's vector given, and `search_hybrid_with` embedding the
//! question (what hybrid `/v1/search` runs, without HTTP). `ONLY=TEXT`
//! runs only the rows whose name contains TEXT (to profile one);
//! `PER_QUERY=1` also prints each timed question's time to stderr
//! (`PQ<TAB>row<TAB>question number<TAB>ms`), to see which questions make
//! the tail; `REPEAT=N` times each question N times (the percentiles over
//! all of them). The hybrid rows are then run again with the lexical side
//! over every chunk holding a query term (`Index::set_lexical_candidates`
//! 0), and the last line says how much of the hybrid top 10 the default
//! budget (`fusion::LEXICAL_CANDIDATES`) keeps.

use std::time::Instant;

use groundcite_index::fusion::{DENSE_DEPTH, Fusion, LEXICAL_CANDIDATES};
use groundcite_index::{Error as IndexError, Index};

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    sorted_ms[((sorted_ms.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err("usage: hybrid_scale MODEL_DIR INDEX_DIR QUESTIONS.jsonl...".into());
    }
    let model = groundcite_embed::Embedder::load(&args[0])?;
    let mut index = Index::open(std::path::Path::new(&args[1]))?;
    let mut questions = Vec::new();
    for path in &args[2..] {
        for line in std::fs::read_to_string(path)?
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)?;
            if let Some(q) = v["question"].as_str() {
                questions.push(q.to_string());
            }
        }
    }
    let vectors: Vec<Vec<f32>> = questions
        .iter()
        .map(|q| model.embed_one(q))
        .collect::<Result<_, _>>()?;
    let fusion = Fusion::default();
    eprintln!(
        "{} chunks, {} questions; machine load {}",
        index.num_chunks(),
        questions.len(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    type Step<'a> = Box<dyn Fn(&Index, usize) -> Result<usize, IndexError> + 'a>;
    let steps: Vec<(&str, Step)> = vec![
        (
            "BM25 top 10 (`search`)",
            Box::new(|index, i| Ok(index.search(&questions[i], 10)?.len())),
        ),
        (
            "BM25 at the fusion's depth",
            Box::new(|index, i| Ok(index.search(&questions[i], fusion.lexical_depth)?.len())),
        ),
        (
            "dense (`rank_for`)",
            Box::new(|index, i| {
                Ok(index
                    .vectors()
                    .rank_for(&vectors[i], DENSE_DEPTH, &[])?
                    .len())
            }),
        ),
        (
            "both rankings (`rankings`)",
            Box::new(|index, i| {
                let (d, l) = index.rankings(&questions[i], &vectors[i], fusion.lexical_depth)?;
                Ok(d.len() + l.len())
            }),
        ),
        (
            "`search_hybrid`, vector given",
            Box::new(|index, i| {
                Ok(index
                    .search_hybrid(&questions[i], &vectors[i], 10, &fusion)?
                    .len())
            }),
        ),
        (
            "`search_hybrid_with`, question embedded",
            Box::new(|index, i| {
                let q = &questions[i];
                let embed = || {
                    model
                        .embed_one(q)
                        .map_err(|e| IndexError::Embedding(e.to_string()))
                };
                Ok(index.search_hybrid_with(q, embed, 10, &fusion)?.len())
            }),
        ),
    ];
    // Then hybrid search again with its lexical side over every chunk
    // holding a query term (no budget): what the budget saves.
    let exact = " (lexical side over every chunk)";
    let runs = steps
        .iter()
        .map(|(name, step)| (name.to_string(), step, LEXICAL_CANDIDATES))
        .chain(
            steps
                .iter()
                .filter(|(name, _)| name.contains("search_hybrid"))
                .map(|(name, step)| (format!("{name}{exact}"), step, 0)),
        );
    println!("| step | p50 | p90 | p99 | max |");
    println!("|---|---:|---:|---:|---:|");
    let only = std::env::var("ONLY").ok();
    let per_query = std::env::var_os("PER_QUERY").is_some();
    let repeat: usize = match std::env::var("REPEAT") {
        Ok(n) => n.parse().map_err(|_| format!("REPEAT={n}: not a count"))?,
        Err(_) => 1,
    };
    for (name, step, budget) in runs {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        index.set_lexical_candidates(budget);
        let step = |i| step(&index, i);
        for i in 0..questions.len() {
            step(i)?;
        }
        let mut ms = Vec::new();
        for i in (0..repeat).flat_map(|_| 0..questions.len()) {
            let t = Instant::now();
            step(i)?;
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            if per_query {
                eprintln!("PQ\t{name}\t{i}\t{:.2}", ms[ms.len() - 1]);
            }
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} |",
            percentile(&ms, 0.5),
            percentile(&ms, 0.9),
            percentile(&ms, 0.99),
            ms[ms.len() - 1]
        );
    }
    // What the budget changes: the hybrid top 10 against the one with the
    // lexical side over every chunk, and how many questions' lexical side
    // holds fewer hits than the fusion reads.
    let mut top = Vec::new();
    let mut short = [0usize; 2];
    for (run, budget) in [LEXICAL_CANDIDATES, 0].into_iter().enumerate() {
        index.set_lexical_candidates(budget);
        let mut ids = Vec::new();
        for (q, v) in questions.iter().zip(&vectors) {
            let hits = index.search_hybrid(q, v, 10, &fusion)?;
            ids.push(hits.into_iter().map(|h| h.chunk.id).collect::<Vec<_>>());
            let (_, lexical) = index.rankings(q, v, fusion.lexical_depth)?;
            short[run] += usize::from(lexical.len() < fusion.lexical_depth);
        }
        top.push(ids);
    }
    let shared: usize = top[0]
        .iter()
        .zip(&top[1])
        .map(|(a, b)| a.iter().filter(|id| b.contains(id)).count())
        .sum();
    let total: usize = top[1].iter().map(Vec::len).sum();
    println!(
        "\nlexical budget {LEXICAL_CANDIDATES}: the hybrid top 10 holds {:.1}% of the one over every chunk; \
         {} of {} questions' lexical side holds fewer than {} hits ({} over every chunk)",
        100.0 * shared as f64 / total.max(1) as f64,
        short[0],
        questions.len(),
        fusion.lexical_depth,
        short[1]
    );
    Ok(())
}
