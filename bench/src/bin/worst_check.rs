//! The worst checks a request inside the limits can ask for (`[check.limits]`
//! and the service's 1 MiB body), each admitted and checked once, timed:
//! what `bench/worst-check.sh` runs under `/usr/bin/time` for its CPU.
//!
//! `cargo run --release -p groundcite-bench --bin worst_check -- CASE`
//! (`all` runs each in turn). Cases:
//!
//! - `links`: one sentence of `[1](` repeated to 260 KB (a link's start, not
//!   a marker; every `1` a quantity);
//! - `words`: one sentence of 40,000 distinct words (256 KB);
//! - `sentences`: 4,000 sentences citing `[1]`, a 250 KB passage whose every
//!   sentence shares their words;
//! - `wide`: 4,000 sentences citing `[1-64]`, 64 passages of 12 KB (768 KB);
//! - `uncited`: 4,000 sentences with no marker over 64 passages of 12 KB
//!   (an uncited claim is looked for in every passage);
//! - `many`: 2,000 sentences citing `[1-64][65-100]` (4,000 markers), 100
//!   passages of one sentence (the cost of a sentence per passage, whatever
//!   its size);
//! - `sentences-max`, `wide-max`, `uncited-max`: the same with as many
//!   sentences as `max_aligned_bytes` admits (sentences × passage bytes).
use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_core::passage::Passage;
use groundcite_verify::LexicalVerifier;

fn passage(id: usize, text: String) -> Passage {
    Passage {
        id: format!("p{id}"),
        text,
        source_url: String::new(),
        section: String::new(),
        score: None,
    }
}

fn small() -> Vec<Passage> {
    vec![passage(
        1,
        "Refunds take 30 days. The office opens at nine.".into(),
    )]
}

/// Passage sentences that share the claims' words.
fn refund_sentences(bytes: usize) -> String {
    let s = "Refunds of travel expenses take 30 days from the date of approval. ";
    s.repeat(bytes / s.len())
}

fn case(name: &str, config: &CheckConfig) -> (Vec<Passage>, String) {
    let (base, max) = match name.strip_suffix("-max") {
        Some(base) => (base, true),
        None => (name, false),
    };
    let passages: Vec<Passage> = match base {
        "links" | "words" => small(),
        "sentences" => vec![passage(1, refund_sentences(250_000))],
        "many" => (1..=100)
            .map(|k| passage(k, format!("Refunds take {k} days.")))
            .collect(),
        "wide" | "uncited" => (1..=64)
            .map(|k| passage(k, refund_sentences(12_000)))
            .collect(),
        other => {
            panic!("no case {other:?}: links, words, sentences, wide, uncited, their -max, all")
        }
    };
    let bytes: usize = passages.iter().map(|p| p.text.len()).sum();
    // 4,000 sentences, or as many as the limit admits.
    let n = if max {
        config.limits.max_aligned_bytes / bytes
    } else {
        4_000
    };
    let answer = match base {
        "links" => "[1](".repeat(65_000),
        "words" => {
            let words: String = (0..36_000u32).map(|k| format!("w{k:x}q ")).collect();
            format!("{words}[1].")
        }
        "sentences" => (0..n)
            .map(|k| format!("Refunds take {k} days [1]. "))
            .collect(),
        "many" => (0..n.min(2_000))
            .map(|k| format!("Refunds take {k} days [1-64][65-100]. "))
            .collect(),
        _ => {
            let marker = if base == "wide" { " [1-64]" } else { "" };
            (0..n)
                .map(|k| format!("Refunds take {k} days{marker}. "))
                .collect()
        }
    };
    (passages, answer)
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    let names: Vec<&str> = if name == "all" {
        vec![
            "links",
            "words",
            "sentences",
            "wide",
            "uncited",
            "many",
            "sentences-max",
            "wide-max",
            "uncited-max",
        ]
    } else {
        vec![name.as_str()]
    };
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::new(config.support.clone());
    for name in names {
        let (passages, answer) = case(name, &config);
        let bytes = answer.len() + passages.iter().map(|p| p.text.len()).sum::<usize>();
        let start = std::time::Instant::now();
        let admitted = config.limits.admit(&passages, &answer);
        let report = admitted
            .as_ref()
            .ok()
            .map(|()| check(None, &passages, &answer, &config, &verifier));
        let outcome = match (&admitted, &report) {
            (Err(e), _) => format!("refused: {e}"),
            (Ok(()), Some(r)) => format!("checked: {} sentences", r.counts.sentences),
            (Ok(()), None) => unreachable!(),
        };
        println!(
            "{name}\t{bytes} bytes\t{:.3} s\t{outcome}",
            start.elapsed().as_secs_f64()
        );
    }
}
