//! The readable terminal report, and [`safe`]: what every readable output
//! passes text it did not write through.

use std::borrow::Cow;
use std::io::Write;

use groundcite_core::check::{CheckOutput, SentenceVerdict};

/// Text from documents, file names, urls or a model, made safe to print on
/// a terminal: control characters (C0 but `\n` and `\t`, DEL, C1 such as
/// the one-byte CSI `\u{9b}`) and bidirectional overrides are written as
/// visible escapes (`\x1b`, `\u{202e}`), so no escape sequence (title
/// change, screen clear, OSC-8 hyperlink) reaches the terminal and no text
/// is silently hidden. Every readable renderer of the CLI prints untrusted
/// text through this one function; JSON output is escaped by serde.
pub fn safe(text: &str) -> Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

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
                "refusal: the passages do not cover it; needed: {}",
                safe(needed)
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
            safe(&s.text.replace('\n', " "))
        )?;
        for r in &s.reasons {
            writeln!(out, "              {}", safe(r))?;
        }
        if let Some(e) = &s.evidence {
            writeln!(
                out,
                "              evidence [{}]: \"{}\"",
                e.passage,
                safe(&e.quote.split_whitespace().collect::<Vec<_>>().join(" "))
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
                    Cow::Borrowed("(no label)")
                } else {
                    safe(&s.label)
                },
                safe(&s.url)
            )?;
            writeln!(out, "      \"{}\"", safe(&s.quote))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::safe;

    #[test]
    fn control_characters_are_escaped_and_plain_text_is_borrowed() {
        assert!(matches!(
            safe("Plain, ünïcode\n\ttext"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            safe("a\u{1b}]0;t\u{7}b\rc\u{9b}2J\u{7f}\u{202e}d"),
            "a\\x1b]0;t\\x07b\\x0dc\\u{9b}2J\\x7f\\u{202e}d"
        );
    }
}
