//! Dense search at scale: exact ranking against the inverted
//! file (`groundcite_index::ann::Ivf`) over synthetic chunk vectors, with
//! recall@10 of the approximate ranking against the exact one and the
//! latency of each.
//!
//! ```text
//! cargo run --release -p groundcite-bench --bin ann -- MODEL_DIR INDEX_DIR CHUNKS \
//!     ../shared/cases/questions-dev.jsonl ../shared/cases/questions-paraphrase-dev.jsonl \
//!     [--cosine 0.9] [--probes 32,64,128] [--candidates 500,1000,2000] [--rerank 0,500]
//! ```
//!
//! INDEX_DIR is an index ingested with the model (the handbook: 2,430
//! chunks and about 13,000 answer units with vectors). Embedding a million
//! chunks on 2 cores takes hours, so the CHUNKS synthetic chunks are
//! derived from the real ones: chunk `j` copies a real chunk drawn at
//! random (seeded by `j`) and adds uniform noise to its vector and to each
//! of its answer units' vectors, scaled so that a copy's cosine with its
//! original is about `--cosine` on average (0.9 unless given; the measured
//! mean is printed), then made unit length again. Like the synthetic text
//! corpus of `bench/scale.sh`, it holds near-copies of every section (about
//! 410 of each at a million chunks), which is what makes the top 10 hard
//! to find: it is decided among near-copies by noise. The queries are the
//! real dev questions, embedded by the model. Chunks go 10 to a file.
//!
//! The truth is each chunk's `vectors::dense_similarity` (the mean of its
//! own cosine and its best unit's) over every chunk. The first table is a
//! grid over the inverted file itself: its `candidates` chunks from
//! `probes` cells, re-ranked by that exact similarity: every candidate
//! (`--rerank 0`) or the `rerank` best by the estimate of that similarity
//! from the chunk's 8-bit codes and its units' sign codes
//! (`ann::SignCodes`), as `rank_for` does. The second is the
//! index's own search, `VectorStore::rank_for`'s top 10: every chunk
//! scored (what an index below `vectors::ANN_MIN_CHUNKS` does), then
//! through the approximate index an ingest builds, with its defaults, then
//! the same written and opened as an index opens it, with its rows left in
//! the file (`VectorStore::open`), and this process's resident memory
//! before and after. One query at a time, as a request is served (the
//! inverted file scans its cells on all cores).

use std::time::Instant;

use groundcite_index::ann::{Ivf, IvfParams, SignCodes, dot};
use groundcite_index::vectors::{
    ANN_CANDIDATES, ANN_PROBES, ANN_RERANK, FileVectors, dense_similarity,
};
use groundcite_index::{ChunkEmbedder, VectorStore};
use rayon::prelude::*;

struct Source {
    chunk: Vec<f32>,
    units: Vec<f32>,
}

/// Chunks a synthetic file holds (the synthetic text corpus has about 10
/// a page).
const PER_FILE: usize = 10;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `v` plus uniform noise of half-width `a` per value, unit length again.
fn noisy(v: &[f32], a: f32, state: &mut u64, out: &mut Vec<f32>) {
    let start = out.len();
    for x in v {
        let u = (splitmix64(state) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
        out.push(x + a * u);
    }
    let row = &mut out[start..];
    let norm = dot(row, row).sqrt();
    row.iter_mut().for_each(|x| *x /= norm);
}

/// The seeded state of synthetic chunk `j` and the real chunk it copies.
fn original(sources: &[Source], j: usize) -> (u64, &Source) {
    let mut state = 0x5eed ^ (j as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
    let s = &sources[(splitmix64(&mut state) % sources.len() as u64) as usize];
    (state, s)
}

/// A store of `n` synthetic chunks in files of [`PER_FILE`], in key order.
fn synthesize(
    sources: &[Source],
    dim: usize,
    n: usize,
    cosine: f32,
) -> groundcite_index::Result<VectorStore> {
    // A unit vector plus noise of variance s² per value has, on average,
    // cosine 1 / sqrt(1 + dim·s²) with itself; uniform noise of half-width
    // a has variance a²/3.
    let variance = (1.0 / (cosine * cosine) - 1.0) / dim as f32;
    let a = (3.0 * variance).sqrt();
    let files: Vec<(String, FileVectors)> = (0..n.div_ceil(PER_FILE))
        .into_par_iter()
        .map(|f| {
            let mut file = FileVectors::default();
            for j in f * PER_FILE..((f + 1) * PER_FILE).min(n) {
                let (mut state, s) = original(sources, j);
                file.ids.push(format!("p{f:07}.md#L{j}-L{j}"));
                noisy(&s.chunk, a, &mut state, &mut file.data);
                file.unit_counts.push((s.units.len() / dim) as u32);
                for u in s.units.chunks_exact(dim) {
                    noisy(u, a, &mut state, &mut file.unit_data);
                }
            }
            (format!("synthetic\u{1f}p{f:07}.md"), file)
        })
        .collect();
    VectorStore::from_files("synthetic".into(), dim, files.into_iter().collect())
}

/// Row `r` of the store (file `r / PER_FILE`, chunk `r % PER_FILE`) by
/// `vectors::dense_similarity` to `query`.
fn similarity(files: &[&FileVectors], dim: usize, r: usize, query: &[f32]) -> f32 {
    let (file, i) = (files[r / PER_FILE], r % PER_FILE);
    let own = dot(&file.data[i * dim..(i + 1) * dim], query);
    let start: usize = file.unit_counts[..i].iter().map(|&c| c as usize).sum();
    let count = file.unit_counts[i] as usize;
    let best = file.unit_data[start * dim..(start + count) * dim]
        .chunks_exact(dim)
        .map(|u| dot(u, query))
        .reduce(f32::max);
    dense_similarity(own, best)
}

/// The `k` best of `scored`, best first (ties by row).
fn top(mut scored: Vec<(f32, usize)>, k: usize) -> Vec<(f32, usize)> {
    let by = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, by);
        scored.truncate(k);
    }
    scored.sort_unstable_by(by);
    scored
}

fn top10(scored: Vec<(f32, usize)>) -> Vec<usize> {
    top(scored, 10).into_iter().map(|(_, i)| i).collect()
}

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    let i = ((sorted_ms.len() as f64 - 1.0) * p).round() as usize;
    sorted_ms[i]
}

fn list(args: &mut Vec<String>, flag: &str, default: &str) -> Vec<String> {
    let value = match args.iter().position(|a| a == flag) {
        Some(i) if i + 1 < args.len() => {
            let v = args.remove(i + 1);
            args.remove(i);
            v
        }
        _ => default.to_string(),
    };
    value.split(',').map(str::to_string).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let cosine: f32 = list(&mut args, "--cosine", "0.9")[0].parse()?;
    let probes: Vec<usize> = list(&mut args, "--probes", "4,8,16,32,64")
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_, _>>()?;
    let candidates: Vec<usize> = list(&mut args, "--candidates", "50,100,200")
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_, _>>()?;
    let reranked: Vec<usize> = list(&mut args, "--rerank", "0")
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_, _>>()?;
    if args.len() < 4 {
        return Err("usage: ann MODEL_DIR INDEX_DIR CHUNKS QUESTIONS.jsonl... [--cosine C] [--probes P,..] [--candidates C,..] [--rerank R,..]".into());
    }
    let model = groundcite_embed::Embedder::load(&args[0])?;
    let store = VectorStore::read(std::path::Path::new(&args[1]))?;
    let n: usize = args[2].parse()?;
    let dim = store.dim;
    let mut sources = Vec::new();
    for file in store.files().expect("read whole").values() {
        let mut units = file.unit_data.chunks_exact(dim);
        for (i, chunk) in file.data.chunks_exact(dim).enumerate() {
            let count = file.unit_counts[i] as usize;
            sources.push(Source {
                chunk: chunk.to_vec(),
                units: units.by_ref().take(count).flatten().copied().collect(),
            });
        }
    }
    if sources.is_empty() {
        return Err(format!("{}: no vectors (ingest it with a model first)", args[1]).into());
    }
    let mut questions = Vec::new();
    let mut fit = Vec::new();
    for path in &args[3..] {
        for line in std::fs::read_to_string(path)?
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)?;
            if let Some(q) = v["question"].as_str() {
                // The fitting half: the first byte of BLAKE3 of the first
                // gold page (of the question, when it has none) is even,
                // as in bench/src/bin/fusion.rs.
                let by = v["gold"][0].as_str().unwrap_or(q);
                fit.push(blake3::hash(by.as_bytes()).as_bytes()[0].is_multiple_of(2));
                questions.push(q.to_string());
            }
        }
    }
    let texts: Vec<&str> = questions.iter().map(String::as_str).collect();
    let queries = model.embed_texts(&texts)?;
    let queries: Vec<&[f32]> = queries.chunks_exact(dim).collect();

    let started = Instant::now();
    let mut store = synthesize(&sources, dim, n, cosine)?;
    let files: Vec<&FileVectors> = store.files().expect("in memory").values().collect();
    let units: usize = files.iter().map(|f| f.unit_data.len() / dim).sum();
    eprintln!(
        "{n} chunks and {units} units from {} real chunks in {:.1} s",
        sources.len(),
        started.elapsed().as_secs_f64()
    );
    // The mean cosine of a copy with its original, measured.
    let copies = n.min(2_000);
    let mean_cosine: f32 = (0..copies)
        .map(|j| {
            let row = &files[j / PER_FILE].data[(j % PER_FILE) * dim..][..dim];
            dot(&original(&sources, j).1.chunk, row)
        })
        .sum::<f32>()
        / copies as f32;

    // The truth: every chunk by its exact similarity, queries spread over
    // the cores.
    let exact: Vec<Vec<usize>> = queries
        .par_iter()
        .map(|q| top10((0..n).map(|r| (similarity(&files, dim, r, q), r)).collect()))
        .collect();

    let started = Instant::now();
    let chunk_rows: Vec<f32> = files.iter().flat_map(|f| f.data.iter().copied()).collect();
    let ivf = Ivf::build(&chunk_rows, dim, &IvfParams::for_rows(n));
    drop(chunk_rows);
    let build_s = started.elapsed().as_secs_f64();
    // The units' sign codes, and where each row's units are among them.
    let mut unit_codes = SignCodes::new(dim);
    let mut unit_rows = vec![0usize];
    for f in &files {
        unit_codes.push_rows(&f.unit_data);
        for &c in &f.unit_counts {
            unit_rows.push(unit_rows.last().unwrap() + c as usize);
        }
    }

    println!(
        "dense search over {n} synthetic chunks ({units} answer units; copies' cosine with their originals {mean_cosine:.3}), {} queries, top 10",
        queries.len()
    );
    println!(
        "IVF over the chunk vectors: {} cells, built in {build_s:.1} s, {:.0} MB; the units' sign codes {:.0} MB (the vectors: {:.0} MB)",
        ivf.lists(),
        ivf.heap_bytes() as f64 / 1e6,
        unit_codes.heap_bytes() as f64 / 1e6,
        (n + units) as f64 * dim as f64 * 4.0 / 1e6
    );
    let n_fit = fit.iter().filter(|&&f| f).count();
    println!(
        "recall@10: mean over the fitting half ({n_fit} questions) and the held-out half ({}), split by gold page",
        fit.len() - n_fit
    );
    println!(
        "re-ranked: the candidates re-ranked exactly, the best by the estimate from the chunk's codes and its units' sign codes (0: every candidate)"
    );
    println!(
        "| probes | candidates | re-ranked | recall fit | recall held out | queries with recall < 0.9 | p50 ms | p99 ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &p in &probes {
        for &c in &candidates {
            for &r in &reranked {
                let runs: Vec<(f64, f64)> = queries
                    .iter()
                    .zip(&exact)
                    .map(|(q, truth)| {
                        let t = Instant::now();
                        let mut rows: Vec<(f32, usize)> = ivf
                            .search(q, p, c)
                            .into_iter()
                            .map(|cand| (cand.score, cand.row as usize))
                            .collect();
                        if r > 0 {
                            let table = unit_codes.query(q);
                            for (score, row) in &mut rows {
                                let best = (unit_rows[*row]..unit_rows[*row + 1])
                                    .map(|u| table.dot(u))
                                    .reduce(f32::max);
                                *score = dense_similarity(*score, best);
                            }
                            rows = top(rows, r);
                        }
                        let scored = rows
                            .into_iter()
                            .map(|(_, row)| (similarity(&files, dim, row, q), row))
                            .collect();
                        let top = top10(scored);
                        let ms = t.elapsed().as_secs_f64() * 1e3;
                        (recall(&top, truth), ms)
                    })
                    .collect();
                print_row(&format!("| {p} | {c} | {r} |"), &runs, &fit);
            }
        }
    }
    drop(unit_codes);
    drop(ivf);

    // What search does (one query at a time, as a request is served):
    // `VectorStore::rank_for` over every chunk, then through the
    // approximate index the ingest builds, with its defaults.
    // A synthetic id `pFILE.md#Lrow-Lrow` names its row.
    let row_of = |id: &str| -> usize {
        let (_, lines) = id.rsplit_once("#L").expect("a synthetic id");
        lines
            .split('-')
            .next()
            .and_then(|l| l.parse().ok())
            .expect("a synthetic id")
    };
    // Each query through `store.rank_for`'s top 10: recall and time.
    let ranked = |store: &VectorStore| -> Vec<(f64, f64)> {
        queries
            .iter()
            .zip(&exact)
            .map(|(q, truth)| {
                let t = Instant::now();
                let top: Vec<usize> = store
                    .rank_for(q, 10, &[])
                    .expect("rows readable")
                    .iter()
                    .map(|h| row_of(&h.id))
                    .collect();
                let ms = t.elapsed().as_secs_f64() * 1e3;
                (recall(&top, truth), ms)
            })
            .collect()
    };
    drop(files);
    let exact_runs = ranked(&store);
    let started = Instant::now();
    store.build_ann(&IvfParams::for_rows(n));
    let build_s = started.elapsed().as_secs_f64();
    let ann_runs = ranked(&store);
    // As an index opens it: written, then opened with the rows left in
    // the file; a query reads its candidates' rows.
    let store_dir = std::env::temp_dir().join(format!("groundcite-ann-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&store_dir)?;
    let started = Instant::now();
    store.write(&store_dir)?;
    let write_s = started.elapsed().as_secs_f64();
    drop(store);
    let rss_before = resident_mb();
    let started = Instant::now();
    let opened = VectorStore::open(&store_dir)?;
    let open_s = started.elapsed().as_secs_f64();
    let disk_runs = ranked(&opened);
    let rss_after = resident_mb();
    let file_mb = std::fs::metadata(store_dir.join(groundcite_index::vectors::VECTORS_FILE))?.len()
        as f64
        / 1e6;
    drop(opened);
    std::fs::remove_dir_all(&store_dir)?;
    println!();
    println!(
        "the index's own search (`VectorStore`), the approximate index built in {build_s:.1} s; the vectors file ({file_mb:.0} MB) written in {write_s:.1} s and opened with its rows on disk in {open_s:.1} s; resident memory {rss_before:.0} MB before opening it, {rss_after:.0} MB after opening it and answering the queries:"
    );
    println!(
        "| search | recall fit | recall held out | queries with recall < 0.9 | p50 ms | p99 ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    print_row(
        "| exact, every chunk scored (`rank_for` without the approximate index) |",
        &exact_runs,
        &fit,
    );
    print_row(
        &format!(
            "| approximate, {ANN_PROBES} cells, {ANN_CANDIDATES} candidates, {ANN_RERANK} re-ranked (`rank_for`) |"
        ),
        &ann_runs,
        &fit,
    );
    print_row(
        "| approximate, rows read from the file (`VectorStore::open`, `rank_for`) |",
        &disk_runs,
        &fit,
    );
    Ok(())
}

/// This process's resident memory (VmRSS), in MB.
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1e3)
}

fn recall(top: &[usize], truth: &[usize]) -> f64 {
    let found = top.iter().filter(|i| truth.contains(i)).count();
    found as f64 / truth.len().max(1) as f64
}

fn print_row(head: &str, runs: &[(f64, f64)], fit: &[bool]) {
    let mean = |half: bool| {
        let r: Vec<f64> = runs
            .iter()
            .zip(fit)
            .filter(|(_, f)| **f == half)
            .map(|(r, _)| r.0)
            .collect();
        r.iter().sum::<f64>() / r.len().max(1) as f64
    };
    let low = runs.iter().filter(|r| r.0 < 0.9).count();
    let mut ms: Vec<f64> = runs.iter().map(|r| r.1).collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "{head} {:.3} | {:.3} | {low} | {:.2} | {:.2} |",
        mean(true),
        mean(false),
        percentile(&ms, 0.5),
        percentile(&ms, 0.99)
    );
}
