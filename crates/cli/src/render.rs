//! The readable terminal report (plain words first: the correction, then
//! the sentence; the machine reasons on demand), the findings `--fail-on`
//! gates on, and [`safe`]: what every readable output passes text it did
//! not write through.

use std::borrow::Cow;
use std::io::Write;

use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use groundcite_core::check::{CheckOutput, Counts, Findings, SentenceOut, SentenceVerdict};
use groundcite_core::resolve::Source;
use groundcite_core::validate::Status;

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

/// Styles of the readable output. Everything readable is written through
/// `anstream`, which drops them when the stream is not a terminal, under
/// `NO_COLOR`, or with `--color never` (and keeps them with `--color
/// always`).
pub mod style {
    use super::{AnsiColor, Style};
    /// "groundcite: error:".
    pub const ERROR: Style = AnsiColor::Red.on_default().bold();
    /// A headline naming problems ("Needs review: ...").
    pub const WARN: Style = AnsiColor::Yellow.on_default().bold();
    /// "Checked: ...".
    pub const GOOD: Style = AnsiColor::Green.on_default().bold();
    /// "No answer: ..." (a refusal).
    pub const REFUSAL: Style = AnsiColor::Magenta.on_default().bold();
    /// Secondary text (the origin of a configuration value, timings).
    pub const DIM: Style = Style::new().dimmed();
}

/// `text` in `style` (reset after it).
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

/// The colour of a verdict: green supported, red contradicted, yellow
/// unsupported or uncited.
pub fn verdict_style(verdict: SentenceVerdict) -> Style {
    match verdict {
        SentenceVerdict::Supported => AnsiColor::Green.on_default(),
        SentenceVerdict::Contradicted => AnsiColor::Red.on_default().bold(),
        SentenceVerdict::Unsupported | SentenceVerdict::Uncited => AnsiColor::Yellow.on_default(),
        SentenceVerdict::NotFactual => Style::new(),
    }
}

/// A verdict word (`supported`, `contradicted`, ...) in its colour.
pub fn paint_verdict(word: &str) -> String {
    let style = match word {
        "supported" => verdict_style(SentenceVerdict::Supported),
        "contradicted" => verdict_style(SentenceVerdict::Contradicted),
        "unsupported" => verdict_style(SentenceVerdict::Unsupported),
        "uncited" => verdict_style(SentenceVerdict::Uncited),
        _ => Style::new(),
    };
    paint(style, safe(word))
}

/// The headline, coloured by what it says.
pub fn painted_headline(o: &Findings, counts: &Counts, judged: bool) -> String {
    let text = headline(o, counts, judged);
    let style = if text.starts_with("Needs review") {
        style::WARN
    } else if text.starts_with("Checked") {
        style::GOOD
    } else {
        Style::new()
    };
    paint(style, text)
}

/// What a reader sees of a Markdown snippet or label: the text without
/// emphasis marks, link targets, code ticks, heading hashes or HTML tags
/// (`<em>before</em>` reads `before`), whitespace collapsed. For display
/// only: offsets and JSON keep the stored text.
pub fn plain_text(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, TagEnd};
    let mut out = String::with_capacity(markdown.len());
    for event in Parser::new(markdown) {
        match event {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::Html(h) | Event::InlineHtml(h) => {
                out.push_str(&groundcite_index::html::strip_tags(&h));
            }
            Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {}
            Event::SoftBreak | Event::HardBreak | Event::End(_) => out.push(' '),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Findings a script can fail on: `check` and `ask` exit 1 when one of
/// those named by `--fail-on` is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Finding {
    /// A sentence its cited passage contradicts.
    Contradicted,
    /// A sentence its cited passage does not state.
    Unsupported,
    /// A citation names a passage that was never sent.
    Unverified,
    /// A factual sentence without a citation.
    Uncited,
    /// No answer: the passages do not cover the question.
    Refused,
    /// Nothing: exit 0 whatever was found.
    None,
}

/// The findings of a report.
pub fn found(o: &Findings, counts: &Counts, refused: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    if counts.contradicted > 0 {
        out.push(Finding::Contradicted);
    }
    if counts.unsupported > 0 {
        out.push(Finding::Unsupported);
    }
    if o.status == Status::Unverified || !o.bad_ids.is_empty() {
        out.push(Finding::Unverified);
    }
    if counts.uncited > 0 {
        out.push(Finding::Uncited);
    }
    if refused {
        out.push(Finding::Refused);
    }
    out
}

/// Exit 1 when a finding named by `fail_on` is present, else 0; a note on
/// stderr says which.
pub fn exit_code(found: &[Finding], fail_on: &[Finding]) -> ExitCode {
    let hits: Vec<String> = found
        .iter()
        .filter(|f| fail_on.contains(f))
        .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
        .collect();
    if hits.is_empty() {
        return ExitCode::SUCCESS;
    }
    anstream::eprintln!(
        "{} on: {} (see --fail-on)",
        paint(style::WARN, "groundcite: failing (exit 1)"),
        hits.join(", ")
    );
    ExitCode::from(1)
}

fn ids<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter().map(|id| format!("[{id}]")).collect()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first line: what a reader needs to know, worst first. "Checked"
/// only for what was checked: without support checking it says so.
pub fn headline(o: &Findings, counts: &Counts, judged: bool) -> String {
    let mut problems = Vec::new();
    if counts.contradicted > 0 {
        problems.push(format!(
            "{} the cited source",
            plural(
                counts.contradicted,
                "sentence contradicts",
                "sentences contradict"
            )
        ));
    }
    if !o.bad_ids.is_empty() {
        problems.push(format!(
            "{} never sent ({})",
            plural(
                o.bad_ids.len(),
                "citation names a passage that was",
                "citations name passages that were"
            ),
            ids(&o.bad_ids)
        ));
    } else if o.status == Status::Unverified {
        problems.push("a citation marker is malformed (such as [9-2])".to_string());
    }
    if counts.unsupported > 0 {
        problems.push(format!(
            "{} not stated by the cited source",
            plural(counts.unsupported, "sentence is", "sentences are")
        ));
    }
    if counts.uncited > 0 {
        problems.push(format!(
            "{} no citation",
            plural(
                counts.uncited,
                "factual sentence has",
                "factual sentences have"
            )
        ));
    }
    if !problems.is_empty() {
        return format!("Needs review: {}.", problems.join("; "));
    }
    if counts.factual == 0 {
        return "No factual sentence to check.".to_string();
    }
    if !judged {
        return format!(
            "Citations resolve for {}; support was not checked.",
            plural(counts.factual, "factual sentence", "factual sentences")
        );
    }
    if o.supported {
        format!(
            "Checked: {} stated in the cited source{}.",
            match counts.factual {
                1 => "the factual sentence is".to_string(),
                n => format!("all {n} factual sentences are"),
            },
            if counts.factual == 1 { "" } else { "s" }
        )
    } else {
        "Needs review: too few factual sentences carry a citation.".to_string()
    }
}

fn mark(verdict: SentenceVerdict) -> &'static str {
    match verdict {
        SentenceVerdict::Supported => "\u{2713}",
        SentenceVerdict::Contradicted => "\u{2717}",
        SentenceVerdict::Unsupported => "?",
        SentenceVerdict::Uncited => "\u{2013}",
        SentenceVerdict::NotFactual => " ",
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One line per sentence: its mark and plain note first, the sentence
/// after, then (for a flagged one) what the source says. `reasons` adds
/// the machine reasons. `only_problems` skips sentences with nothing to
/// say (the answer is printed whole elsewhere).
pub fn sentences(
    out: &mut dyn Write,
    list: &[SentenceOut],
    reasons: bool,
    only_problems: bool,
) -> std::io::Result<()> {
    for (i, s) in list.iter().enumerate() {
        let problem = !matches!(
            s.verdict,
            SentenceVerdict::Supported | SentenceVerdict::NotFactual
        );
        if only_problems && !problem {
            continue;
        }
        let text = one_line(&s.text);
        if s.message.is_empty() {
            writeln!(out, "{:>2}.   {}", i + 1, safe(&text))?;
        } else {
            writeln!(
                out,
                "{:>2}. {}",
                i + 1,
                paint(
                    verdict_style(s.verdict),
                    format_args!("{} {}", mark(s.verdict), safe(&s.message))
                )
            )?;
            writeln!(out, "      \u{201c}{}\u{201d}", safe(&text))?;
        }
        // What the cited source says, for a sentence it contradicts or
        // does not state (an uncited sentence's nearest passage is not
        // its source).
        let cited_problem = s.verdict.is_flagged();
        if let Some(e) = s.evidence.as_ref().filter(|_| cited_problem || reasons) {
            writeln!(
                out,
                "      [{}] says: \u{201c}{}\u{201d}",
                e.passage,
                safe(&one_line(&e.quote))
            )?;
        }
        if reasons {
            writeln!(
                out,
                "      verdict: {}",
                paint(verdict_style(s.verdict), s.verdict.as_str())
            )?;
            for r in &s.reasons {
                writeln!(out, "      reason: {}", safe(r))?;
            }
            if !s.idle_citations.is_empty() {
                writeln!(out, "      cited but not used: {}", ids(&s.idle_citations))?;
            }
        }
    }
    Ok(())
}

/// The sources, one per document, with the quote behind the citation.
pub fn sources(out: &mut dyn Write, list: &[Source]) -> std::io::Result<()> {
    if list.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nSources:")?;
    for s in list {
        let label = if s.label.is_empty() {
            Cow::Borrowed("(no label)")
        } else {
            safe(&s.label)
        };
        if s.url.is_empty() {
            writeln!(out, "  {} {label}", ids(&s.passages))?;
        } else {
            writeln!(out, "  {} {label} <{}>", ids(&s.passages), safe(&s.url))?;
        }
        writeln!(out, "      \u{201c}{}\u{201d}", safe(&one_line(&s.quote)))?;
    }
    Ok(())
}

/// The readable report of `check`: the headline, every sentence with its
/// plain note, the sources; `reasons` adds the machine fields.
pub fn report(
    out: &mut dyn Write,
    o: &CheckOutput,
    judged: bool,
    reasons: bool,
) -> std::io::Result<()> {
    if let Some(r) = &o.refusal {
        let lead = paint(style::REFUSAL, "The answer is a refusal:");
        match &r.needed {
            Some(needed) => writeln!(
                out,
                "{lead} the passages do not cover the question (needed: {}).",
                safe(needed)
            )?,
            None => writeln!(out, "{lead} the passages do not cover the question.")?,
        }
    } else {
        writeln!(out, "{}", painted_headline(&o.findings, &o.counts, judged))?;
    }
    writeln!(out)?;
    sentences(out, &o.sentences, reasons, false)?;
    sources(out, &o.sources)?;
    if reasons {
        writeln!(
            out,
            "\nstatus: {}   grounded: {}   coverage: {:.0}%   cited: {}   bad ids: {}",
            o.status.as_str(),
            o.grounded,
            o.coverage * 100.0,
            ids(&o.cited),
            ids(&o.bad_ids)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{plain_text, safe};

    #[test]
    fn snippets_and_labels_read_as_plain_text() {
        assert_eq!(
            plain_text("Get set up <em>before</em> onboarding"),
            "Get set up before onboarding"
        );
        assert_eq!(
            plain_text(
                "## Leave\n\nStaff get **13 days** ([policy](https://x.example/p)) `per year`."
            ),
            "Leave Staff get 13 days (policy) per year."
        );
    }

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
