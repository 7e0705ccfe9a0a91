//! Measures dense + lexical fusion on labelled questions: recall of a gold
//! page in the first 1/3/5 hits for each method of `groundcite_index::fusion`
//! and a grid of its parameters, fitted on half the gold pages and reported
//! on the other half (and on all).
//!
//! ```text
//! cargo run -p groundcite-bench --bin fusion -- MODEL_DIR INDEX_DIR \
//!     ../shared/corpora/tts-handbook/pages \
//!     ../shared/cases/questions-paraphrase-dev.jsonl ../shared/cases/questions-dev.jsonl
//! ```
//!
//! The index in INDEX_DIR is ingested (incrementally) with the handbook
//! preset and the model. The split is by gold page: a question is in the
//! fitting half when the first byte of BLAKE3(its first gold path) is even,
//! so every question about one page falls on the same side and the split
//! never changes. With `--text-only`, chunks are also embedded without
//! their section label, and the dense ranking over those is compared; with
//! `--chunk-only`, the dense ranking by the chunk vectors alone (without
//! their best answer unit: `vectors::dense_similarity`) is compared. With
//! `--lexical-candidates N`, BM25's side ranks about N chunks
//! (`fusion::lexical_candidates`; 0: every chunk holding a query term)
//! instead of the default `fusion::LEXICAL_CANDIDATES`. With
//! `--unit-vectors NAME`, the index is built under that
//! `vectors::UnitVectorScheme` (`separate`, `pooled`, `pooled-chunks`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use groundcite_index::fusion::{self, Fusion, LexicalHit, Method};
use groundcite_index::vectors::{DenseHit, UnitVectorScheme, chunk_embedder};
use groundcite_index::{ChunkIndex, Index, IngestOptions};

struct Question {
    question: String,
    gold: Vec<String>,
    fit: bool,
}

struct Ranked {
    question: usize,
    dense: Vec<DenseHit>,
    dense_text_only: Option<Vec<DenseHit>>,
    lexical: Vec<LexicalHit>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let text_only = args.iter().any(|a| a == "--text-only");
    let with_title = args.iter().any(|a| a == "--with-title");
    let chunk_only = args.iter().any(|a| a == "--chunk-only");
    args.retain(|a| a != "--text-only" && a != "--with-title" && a != "--chunk-only");
    let mut lexical_candidates = fusion::LEXICAL_CANDIDATES;
    if let Some(at) = args.iter().position(|a| a == "--lexical-candidates") {
        let n = args
            .get(at + 1)
            .ok_or("--lexical-candidates needs a count")?;
        lexical_candidates = n
            .parse()
            .map_err(|_| format!("--lexical-candidates {n}: not a count"))?;
        args.drain(at..at + 2);
    }
    let mut scheme = UnitVectorScheme::default();
    if let Some(at) = args.iter().position(|a| a == "--unit-vectors") {
        let name = args.get(at + 1).ok_or("--unit-vectors needs a name")?;
        scheme = UnitVectorScheme::named(name)
            .ok_or_else(|| format!("--unit-vectors {name}: not a scheme"))?;
        args.drain(at..at + 2);
    }
    if args.len() < 4 {
        return Err(
            "usage: fusion MODEL_DIR INDEX_DIR PAGES QUESTIONS.jsonl... [--text-only | --with-title | --chunk-only] [--lexical-candidates N] [--unit-vectors NAME]".into(),
        );
    }
    let model = Arc::new(groundcite_embed::Embedder::load(&args[0])?);
    let mut index = Index::open_or_create(&PathBuf::from(&args[1]))?;
    index.set_embedder(chunk_embedder(model.clone(), scheme));
    index.set_lexical_candidates(lexical_candidates);
    let started = std::time::Instant::now();
    let summary = index.ingest(
        &[PathBuf::from(&args[2])],
        &IngestOptions::handbook(),
        &mut |_| {},
    )?;
    eprintln!(
        "ingest: {} indexed, {} unchanged, {} vectors computed, {:.1} s; {} chunks",
        summary.indexed,
        summary.unchanged,
        summary.embedded,
        started.elapsed().as_secs_f64(),
        index.num_chunks()
    );
    // The alternative embedded text (`--text-only` or `--with-title`).
    let alternative = if with_title {
        "title › section + text"
    } else if chunk_only {
        "section + text, the chunk vector alone"
    } else {
        "text alone"
    };
    // The alternative dense side: (chunk id, vector) for every chunk.
    let text_only_store: Option<Vec<(String, Vec<f32>)>> = if chunk_only {
        let store = index.vectors();
        Some(
            store
                .to_resident()?
                .files()
                .expect("in memory")
                .values()
                .flat_map(|f| {
                    f.ids
                        .iter()
                        .cloned()
                        .zip(f.data.chunks_exact(store.dim).map(<[f32]>::to_vec))
                })
                .collect(),
        )
    } else if text_only || with_title {
        let chunks = index.all_chunks()?;
        let texts: Vec<String> = chunks
            .iter()
            .map(|c| {
                if with_title {
                    groundcite_index::vectors::titled_text(c)
                } else {
                    c.text.clone()
                }
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = model.embed(&texts)?;
        Some(
            chunks
                .into_iter()
                .map(|c| c.id)
                .zip(vectors.rows().map(<[f32]>::to_vec))
                .collect(),
        )
    } else {
        None
    };

    for file in &args[3..] {
        let mut questions = Vec::new();
        let mut unanswerable = Vec::new();
        for line in std::fs::read_to_string(file)?
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)?;
            let question = v["question"].as_str().unwrap_or_default().to_string();
            if !v["answerable"].as_bool().unwrap_or(false) {
                unanswerable.push(question);
                continue;
            }
            let gold: Vec<String> = v["gold"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|g| g.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let fit = gold
                .first()
                .is_some_and(|g| blake3::hash(g.as_bytes()).as_bytes()[0].is_multiple_of(2));
            questions.push(Question {
                question,
                gold,
                fit,
            });
        }
        let mut ranked = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            let vector = model.embed_one(&q.question)?;
            let (dense, lexical) = index.rankings(&q.question, &vector, 200)?;
            let dense_text_only = text_only_store.as_ref().map(|rows| {
                let mut d: Vec<DenseHit> = rows
                    .iter()
                    .map(|(id, row)| DenseHit {
                        key: String::new(),
                        id: id.clone(),
                        cosine: row.iter().zip(&vector).map(|(a, b)| a * b).sum(),
                    })
                    .collect();
                d.sort_by(|a, b| b.cosine.total_cmp(&a.cosine));
                d
            });
            ranked.push(Ranked {
                question: i,
                dense,
                dense_text_only,
                lexical,
            });
        }
        let n_fit = questions.iter().filter(|q| q.fit).count();
        println!(
            "\n== {file}: {} answerable ({} fitting, {} held out), split by gold page",
            questions.len(),
            n_fit,
            questions.len() - n_fit
        );
        let mut grid: Vec<Fusion> = vec![Fusion {
            method: Method::Dense,
            lexical_depth: 0,
        }];
        for depth in [20, 50, 100, 200] {
            grid.push(Fusion {
                method: Method::Rescore,
                lexical_depth: depth,
            });
            for w in 10..=19 {
                grid.push(Fusion {
                    method: Method::Weighted {
                        dense_weight: w as f32 * 0.05,
                    },
                    lexical_depth: depth,
                });
            }
            for lexical_weight in [0.1, 0.25, 0.5, 1.0] {
                for k0 in [10.0, 60.0] {
                    grid.push(Fusion {
                        method: Method::Rrf {
                            dense_weight: 1.0,
                            lexical_weight,
                            k0,
                        },
                        lexical_depth: depth,
                    });
                }
            }
        }
        let eval_capped = |fusion: &Fusion,
                           keep: &dyn Fn(&Question) -> bool,
                           text_only: bool,
                           per_page: usize| {
            let mut at = [0usize; 3];
            let mut n = 0;
            for r in &ranked {
                let q = &questions[r.question];
                if !keep(q) {
                    continue;
                }
                n += 1;
                let dense = match (&r.dense_text_only, text_only) {
                    (Some(d), true) => d,
                    _ => &r.dense,
                };
                let mut pages: HashMap<&str, usize> = HashMap::new();
                let fused = fusion::fuse(dense, &r.lexical, fusion, 50);
                let top: Vec<_> = fused
                    .iter()
                    .filter(|f| {
                        let n = pages
                            .entry(f.id.split('#').next().unwrap_or_default())
                            .or_default();
                        *n += 1;
                        *n <= per_page
                    })
                    .take(5)
                    .collect();
                let rank = top.iter().position(|f| {
                    let page = f.id.split('#').next().unwrap_or_default();
                    q.gold.iter().any(|g| g == page)
                });
                for (slot, k) in [1, 3, 5].into_iter().enumerate() {
                    at[slot] += usize::from(rank.is_some_and(|r| r < k));
                }
            }
            (at, n)
        };
        let eval = |fusion: &Fusion, keep: &dyn Fn(&Question) -> bool, text_only: bool| {
            eval_capped(fusion, keep, text_only, usize::MAX)
        };
        let show = |(at, n): ([usize; 3], usize)| {
            format!(
                "@1 {:>2}/{n} @3 {:>2}/{n} @5 {:>2}/{n} ({:.0}%)",
                at[0],
                at[1],
                at[2],
                100.0 * at[2] as f64 / n.max(1) as f64
            )
        };
        let all = |_: &Question| true;
        let fit = |q: &Question| q.fit;
        let held = |q: &Question| !q.fit;
        let objective = |(at, _): ([usize; 3], usize)| 4 * at[2] + 2 * at[1] + at[0];
        // The best of each method on the fitting half, then its figures.
        type IsMethod = fn(&Method) -> bool;
        let methods: [(&str, IsMethod); 4] = [
            ("dense", |m| matches!(m, Method::Dense)),
            ("rescore", |m| matches!(m, Method::Rescore)),
            ("weighted", |m| matches!(m, Method::Weighted { .. })),
            ("rrf", |m| matches!(m, Method::Rrf { .. })),
        ];
        for (name, is) in methods {
            let best = grid
                .iter()
                .filter(|f| is(&f.method))
                .max_by_key(|f| objective(eval(f, &fit, false)))
                .copied()
                .expect("every method is in the grid");
            println!(
                "{name:<9} fitted {:?} depth {}\n          fit {}\n          held-out {}\n          all {}",
                best.method,
                best.lexical_depth,
                show(eval(&best, &fit, false)),
                show(eval(&best, &held, false)),
                show(eval(&best, &all, false))
            );
        }
        let equal_rrf = Fusion {
            method: Method::Rrf {
                dense_weight: 1.0,
                lexical_weight: 1.0,
                k0: 60.0,
            },
            lexical_depth: 200,
        };
        println!(
            "equal-weight RRF (k0 60, depth 200): all {}",
            show(eval(&equal_rrf, &all, false))
        );
        let lexical_only = Fusion {
            method: Method::Weighted { dense_weight: 0.0 },
            lexical_depth: 200,
        };
        println!(
            "BM25 alone (hybrid's side, over the body): all {}",
            show(eval(&lexical_only, &all, false))
        );
        let chosen = Fusion::default();
        println!(
            "default {:?} depth {}: fit {} | held-out {} | all {}",
            chosen.method,
            chosen.lexical_depth,
            show(eval(&chosen, &fit, false)),
            show(eval(&chosen, &held, false)),
            show(eval(&chosen, &all, false))
        );
        // The default's method at every depth the grid tries: how much
        // the lexical side's depth buys (BM25 at depth 100 is most of a
        // hybrid query's time at a million chunks).
        for depth in [20, 50, 100, 200] {
            let at_depth = Fusion {
                lexical_depth: depth,
                ..chosen
            };
            println!(
                "default at depth {depth}: fit {} | held-out {} | all {}",
                show(eval(&at_depth, &fit, false)),
                show(eval(&at_depth, &held, false)),
                show(eval(&at_depth, &all, false))
            );
        }
        for per_page in [1, 2, 3] {
            println!(
                "default, at most {per_page} chunks per page: fit {} | held-out {} | all {}",
                show(eval_capped(&chosen, &fit, false, per_page)),
                show(eval_capped(&chosen, &held, false, per_page)),
                show(eval_capped(&chosen, &all, false, per_page))
            );
        }
        if text_only_store.is_some() {
            let dense = Fusion {
                method: Method::Dense,
                lexical_depth: 0,
            };
            println!(
                "as ranked (section + text and best unit): dense all {}; default fit {} | held-out {} | all {}",
                show(eval(&dense, &all, false)),
                show(eval(&chosen, &fit, false)),
                show(eval(&chosen, &held, false)),
                show(eval(&chosen, &all, false))
            );
            println!(
                "{alternative}: dense all {}; default fit {} | held-out {} | all {}",
                show(eval(&dense, &all, true)),
                show(eval(&chosen, &fit, true)),
                show(eval(&chosen, &held, true)),
                show(eval(&chosen, &all, true))
            );
        }
        // The gate's view: the best hybrid score of the top 5, answerable
        // against unanswerable (AUC: the chance an answerable question
        // scores above an unanswerable one).
        let best_score = |question: &str| -> Result<(f32, f32, f32), Box<dyn std::error::Error>> {
            let vector = model.embed_one(question)?;
            let hits = index.search_hybrid(question, &vector, 5, &chosen)?;
            let lexical = index.search(question, 5)?;
            let (dense, _) = index.rankings(question, &vector, 0)?;
            Ok((
                hits.iter().map(|h| h.score).fold(0.0, f32::max),
                lexical.iter().map(|h| h.score).fold(0.0, f32::max),
                dense.first().map_or(0.0, |d| d.cosine),
            ))
        };
        let mut pos = Vec::new();
        for q in &questions {
            pos.push(best_score(&q.question)?);
        }
        let mut neg = Vec::new();
        for q in &unanswerable {
            neg.push(best_score(q)?);
        }
        let auc = |pick: fn(&(f32, f32, f32)) -> f32| {
            let mut wins = 0.0;
            for p in &pos {
                for n in &neg {
                    wins += match pick(p).partial_cmp(&pick(n)) {
                        Some(std::cmp::Ordering::Greater) => 1.0,
                        Some(std::cmp::Ordering::Equal) => 0.5,
                        _ => 0.0,
                    };
                }
            }
            wins / (pos.len() * neg.len()).max(1) as f64
        };
        let mean =
            |v: &[(f32, f32, f32)]| v.iter().map(|s| s.0).sum::<f32>() / v.len().max(1) as f32;
        println!(
            "gate view, best of top 5: hybrid score mean {:.2} answerable / {:.2} unanswerable; AUC hybrid {:.2}, lexical {:.2}, top cosine {:.2}",
            mean(&pos),
            mean(&neg),
            auc(|s| s.0),
            auc(|s| s.1),
            auc(|s| s.2)
        );
    }
    Ok(())
}
