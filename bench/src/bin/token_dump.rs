//! Regression dump: every token (all fields) and sentence span of the handbook pages, the dev
//! cases, the HaluEval texts and synthetic edge cases, to standard output. Record before a
//! change to the text layer, diff after it:
//!
//! ```sh
//! cargo run --release -p groundcite-bench --bin token_dump > /tmp/tok-before.txt
//! # ... change ...
//! cargo run --release -p groundcite-bench --bin token_dump | diff /tmp/tok-before.txt -
//! ```
//!
//! The data are read from `shared/` beside the repository, as the tests do.

use std::fmt::Write as _;

use groundcite_text::{Markers, list_bullet, sentence_spans, tokenize};

fn main() {
    let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared");
    let mut texts: Vec<String> = Vec::new();
    let mut pages = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(format!(
        "{shared}/corpora/tts-handbook"
    ))];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("handbook dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                pages.push(p);
            }
        }
    }
    pages.sort();
    for p in &pages {
        texts.push(std::fs::read_to_string(p).expect("page"));
    }
    let strings = |file: &str, texts: &mut Vec<String>| {
        let body = std::fs::read_to_string(format!("{shared}/{file}")).expect("jsonl");
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::String(s) => out.push(s.clone()),
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        for line in body.lines().filter(|l| !l.trim().is_empty()) {
            walk(&serde_json::from_str(line).expect("json"), texts);
        }
    };
    strings("cases/dev.jsonl", &mut texts);
    strings("cases/questions-dev.jsonl", &mut texts);
    strings("datasets/halueval/qa-dev.jsonl", &mut texts);
    // Synthetic edge cases: joiners, non-ASCII, long words, end-of-text words, all lengths.
    let pieces: Vec<&str> =
        ("don't~Doesn’t~non-billable~Non-profit~not-for-profit~No. 5~1,000~3.5~2nd~21st~\
         naïve~Café~über~x~I~re-enter~unpaid~disallowed~inaccessible~rebooking~\
         supercalifragilisticexpialidocious~internationalization~abcdefghijklmnop~\
         abcdefghijklmnopq~12345678~123456789~e.g.~U.S.~Dr.~etc.~Mr. Smith.~end.First~?~!~\
         \n~\n\n~\n- ~\n* ~\n1. ~\n| a |~|\n~#~ ~\t~’s~Smith's~policies~processed~weekly~—~\
         –~…~\u{a0}~•~·~[1]~[2-4]~- ~Jan.~Sept. ~'~''~a'b~x-y~abc-def~9.~.9~1.2.3~1,2,3~\
         Ωmega~日本語~ǅ~İstanbul~straße~ﬁle~\r\n~abcdefgh~ABCDEFGHIJ~Monday~May~NOT~Only~\
         non-~non-Ωx~it's~can't~rock'n'roll~5-day~40-hour~x'~’~1st.~a.b~3,5~3,~,5~hopping~\
         studies~\"Quote\"~Unbelievable~reenter~indivisible~dissatisfied~AbC1~a1b2c3d4e5")
            .split('~')
            .collect();
    let mut seed = 0x1234_5678_9abc_def0u64;
    for _ in 0..4000 {
        let mut s = String::new();
        let k = (seed >> 60) as usize + 1;
        for _ in 0..k {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            if (seed >> 20) & 3 != 0 {
                s.push(' ');
            }
        }
        texts.push(s);
    }
    let mut out = String::new();
    let mut toks = Vec::new();
    let mut spans = Vec::new();
    let mut skip = Vec::new();
    for (ti, t) in texts.iter().enumerate() {
        writeln!(out, "# {ti} {}", t.len()).unwrap();
        skip.clear();
        // What a claim's tokenizer skips: a leading bullet and the markers.
        skip.extend(list_bullet(t).map(|r| (r.start, r.end)));
        skip.extend(Markers::parse(t).markers.iter().map(|m| (m.start, m.end)));
        for (mode, sk) in [(false, &[][..]), (true, &skip[..])] {
            toks.clear();
            tokenize(t, sk, mode, &mut toks);
            for k in &toks {
                writeln!(
                    out,
                    "{} {} {:x} {:x} {:x} {}",
                    k.start, k.end, k.key, k.alt, k.pre, k.flags
                )
                .unwrap();
            }
            writeln!(out, "-").unwrap();
        }
        spans.clear();
        sentence_spans(t, &mut spans);
        for (a, b) in &spans {
            writeln!(out, "s {a} {b}").unwrap();
        }
    }
    print!("{out}");
}
