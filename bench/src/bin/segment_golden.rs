//! Prints everything the structural check decides about many realistic
//! texts: every sentence span, kind and factual reason, the markers, bad
//! ids, status, coverage and refusal. Record its output before changing
//! the structural check and diff after: any difference is a change of
//! behaviour.
//!
//! Texts: every page, section and paragraph of the Markdown handbook under
//! `shared/corpora/tts-handbook/` (plain, and with citation markers put in
//! deterministically around sentence ends), every text field of
//! `shared/datasets/halueval/qa-dev.jsonl`, and the dev answers.
//!
//! `cargo run --release -p groundcite-bench --bin segment_golden > before.txt`
use groundcite_core::Report;
use groundcite_core::case::Case;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared");

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("handbook directory")
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// Markers put in around sentence ends, cycling.
const INSERTS: &[(&str, bool)] = &[
    // (marker text, after the punctuation?)
    ("", false),
    (" [1]", false),
    ("[2][3]", false),
    (" [1, 3]", true),
    (" [2-4]", false),
    (" [0]", true),
    (" [99]", false),
    ("", false),
    (" [2–4]", true),
    ("\n[2]", true),
    (" [1][2]", true),
    (" [5-2]", false),
    (" [1-1000]", false),
    ("[3]", true),
];

/// Inserts markers before or after `.`, `!`, `?` that are followed by
/// white space or the end of the text.
fn with_markers(text: &str, seed: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut k = seed;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        let end_of_sentence =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
        if !end_of_sentence {
            out.push(c);
            continue;
        }
        let (ins, after) = INSERTS[k % INSERTS.len()];
        k += 1;
        if after {
            out.push(c);
            out.push_str(ins);
        } else {
            out.push_str(ins);
            out.push(c);
        }
    }
    out
}

/// Hand-written texts for the corners the corpora rarely reach.
const EDGE_CASES: &[&str] = &[
    "",
    "   ",
    "Not covered by the provided documents.",
    "  \"Not covered by the provided documents.\"\n",
    "“Not covered by the provided documents.”",
    "Not covered by the provided documents. [2]",
    "Refunds take 14 days [1]. Not covered by the provided documents.",
    "NOT_IN_SOURCES: the reimbursement schedule for contractors",
    "NOT_IN_SOURCES:",
    "  NOT_IN_SOURCES:   x  ",
    "Wait… it depends… Fine. It was… fine.",
    "He said “File it now.” Then he left. (See the FAQ.) Done!",
    "Claims settle in 30 days.\n[2]\n\nNext one.",
    "## Title ##\n[2]\n**Bold**:\n**a** and **b**\n---\n* * *\n| a | b |\n|---|---|\n| 1 | 2 |",
    "- item one [1]\n- item two. And more [2]\n• bullet [3]\n12) twelve\n1234. not a list\na. not a list",
    "See [the policy](https://x.example) and [1](https://y) and [^1] and [a] and [] and [v2] and [1.5] and [1,] [12",
    "Huge [99999999999999999999999999] and zero [0] and range [ 2 — 3 , 5 ] and [2–4].",
    "Is it covered? Yes, up to 7 days [1]. Great! Really?! Yes!!! [2] ok.",
    "Email hspd12.security@gsa.gov to start. Arrive at 9:30 a.m. sharp. The U.S. The job. Dr. Smith. etc. The end.",
    "Here is what I found:\n- Sure.\nI hope this helps!\nThanks [1].\nIn summary, the rule is clear and simple and applies to all.",
    "A line\r\nwrapped here\r\n\r\nNew para.\u{a0}\u{2003}Next\u{a0}one.\u{2028}",
    "\u{a0}[1]\u{a0}",
    "It was… [2] Fine. x.[3] Y. \"Go.\"Then more. 'Quoted.' Next [1]. [2] [3].",
    "Nested [1 [2]] and [1]][2] and [[3]].",
    "### \n#######\n# \n#x\n##",
];

fn describe(out: &mut String, text: &str, n_passages: usize) {
    let r = Report::check(text, n_passages);
    let _ = writeln!(
        out,
        "status={:?} coverage={:?} refusal={:?} cited={:?} bad={:?} malformed={}",
        r.status, r.coverage, r.refusal, r.cited, r.bad_ids, r.malformed
    );
    for m in &r.markers.markers {
        let _ = writeln!(
            out,
            "  marker {}..{} {:?} malformed={} {:?}",
            m.start,
            m.end,
            &text[m.span()],
            m.malformed,
            r.markers.ranges_of(m)
        );
    }
    for s in &r.sentences {
        let _ = writeln!(
            out,
            "  sentence {}..{} {:?} {:?} markers={:?} bad={} cites={:?} {:?}",
            s.start,
            s.end,
            s.kind,
            s.reason,
            s.markers,
            s.has_bad_id,
            r.valid_citations_of(s),
            &text[s.span()]
        );
    }
}

fn main() {
    let mut texts: Vec<String> = Vec::new();

    let mut files = Vec::new();
    markdown_files(&Path::new(SHARED).join("corpora/tts-handbook"), &mut files);
    for f in &files {
        let page = std::fs::read_to_string(f).expect("markdown page");
        texts.push(page.clone());
        // Sections: split before each heading line.
        let mut section = String::new();
        for line in page.split_inclusive('\n') {
            if line.starts_with('#') && !section.trim().is_empty() {
                texts.push(std::mem::take(&mut section));
            }
            section.push_str(line);
        }
        if !section.trim().is_empty() {
            texts.push(section);
        }
        // Paragraphs: split on blank lines.
        for para in page.split("\n\n") {
            if !para.trim().is_empty() {
                texts.push(para.to_string());
            }
        }
    }
    let n_plain = texts.len();
    for (i, t) in texts[..n_plain].to_vec().iter().enumerate() {
        texts.push(with_markers(t, i));
    }
    // Whole pages with CRLF line ends and non-breaking spaces.
    for t in texts[..n_plain].to_vec().iter().filter(|t| t.len() > 2000) {
        texts.push(t.replace('\n', "\r\n"));
        texts.push(t.replace(". ", ".\u{a0}").replace("\n\n", "\n\u{2003}\n"));
    }
    texts.extend(EDGE_CASES.iter().map(|s| s.to_string()));

    let qa = std::fs::read_to_string(Path::new(SHARED).join("datasets/halueval/qa-dev.jsonl"))
        .expect("halueval qa-dev");
    for (i, line) in qa.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for field in [
            "right_answer",
            "hallucinated_answer",
            "knowledge",
            "question",
        ] {
            if let Some(s) = v[field].as_str() {
                texts.push(s.to_string());
                texts.push(with_markers(s, i));
            }
        }
    }

    let dev = std::fs::read_to_string(Path::new(SHARED).join("cases/dev.jsonl")).expect("dev");
    for line in dev.lines().filter(|l| !l.trim().is_empty()) {
        let c: Case = serde_json::from_str(line).unwrap();
        texts.push(c.answer);
    }

    let mut out = String::new();
    for (i, t) in texts.iter().enumerate() {
        let _ = writeln!(
            out,
            "# text {i} ({} bytes, {} passages)",
            t.len(),
            1 + i % 5
        );
        describe(&mut out, t, 1 + i % 5);
    }
    print!("{out}");
}
