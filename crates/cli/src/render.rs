//! The readable terminal report.

use std::io::Write;

use groundcite_core::check::{CheckOutput, SentenceVerdict};

pub fn report(out: &mut dyn Write, _answer: &str, o: &CheckOutput) -> std::io::Result<()> {
    let ids = |v: &[u64]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter()
                .map(|id| format!("[{id}]"))
                .collect::<Vec<_>>()
                .join("")
        }
    };
    writeln!(
        out,
        "status: {}   grounded: {}   coverage: {:.0}%   cited: {}   bad ids: {}",
        o.status.as_str(),
        if o.grounded { "yes" } else { "no" },
        o.coverage * 100.0,
        ids(&o.cited),
        ids(&o.bad_ids)
    )?;
    if let Some(r) = &o.refusal {
        match &r.needed {
            Some(needed) => writeln!(
                out,
                "refusal: the passages do not cover it; needed: {needed}"
            )?,
            None => writeln!(out, "refusal: the passages do not cover it")?,
        }
    }
    writeln!(out)?;
    for (i, s) in o.sentences.iter().enumerate() {
        let mark = match s.verdict {
            SentenceVerdict::Supported => "ok ",
            SentenceVerdict::Contradicted => "XX ",
            SentenceVerdict::Unsupported => "?? ",
            SentenceVerdict::Uncited => "-- ",
            SentenceVerdict::NotFactual => "   ",
        };
        writeln!(
            out,
            "{:>2}. {mark}{:<13} {}",
            i + 1,
            s.verdict.as_str(),
            s.text.replace('\n', " ")
        )?;
        for r in &s.reasons {
            writeln!(out, "              {r}")?;
        }
        if let Some(e) = &s.evidence {
            writeln!(
                out,
                "              evidence [{}]: \"{}\"",
                e.passage,
                e.quote.split_whitespace().collect::<Vec<_>>().join(" ")
            )?;
        }
        if !s.suggested.is_empty() {
            writeln!(
                out,
                "              would be supported by: {}",
                s.suggested
                    .iter()
                    .map(|k| format!("[{k}]"))
                    .collect::<String>()
            )?;
        }
        if !s.idle_citations.is_empty() {
            writeln!(
                out,
                "              cites but not used: {}",
                s.idle_citations
                    .iter()
                    .map(|k| format!("[{k}]"))
                    .collect::<String>()
            )?;
        }
    }
    if !o.sources.is_empty() {
        writeln!(out, "\nsources:")?;
        for s in &o.sources {
            let nums: String = s.passages.iter().map(|k| format!("[{k}]")).collect();
            writeln!(
                out,
                "  {nums} {} <{}>",
                if s.label.is_empty() {
                    "(no label)"
                } else {
                    &s.label
                },
                s.url
            )?;
            writeln!(out, "      \"{}\"", s.quote)?;
        }
    }
    Ok(())
}
