//! Can a passage sentence be served as an answer on its own? The rules the
//! extractive generator applies to every candidate, with or without a
//! model, before it chooses: a sentence it serves must hold what the
//! question asks for and read on its own. When no sentence qualifies the
//! generator steps back (the answer is the closest passages, linked),
//! rather than serve a sentence that merely shares the question's words.
//!
//! Pure: text in, a verdict out. The rules are about the shape of English
//! prose (announcements, lead-ins, worked examples), never about a
//! corpus's own words.

use crate::answerability::{AnswerType, contains_phrase, quantities};

/// Why a sentence cannot answer on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAlone {
    /// Fewer than four words, neither a list item read after its lead-in
    /// nor a `label: value` pair (a table row under its header): a label
    /// ("Paid Parental Leave"), not a statement.
    Fragment,
    /// It asks rather than states ("What happens next?").
    Question,
    /// It introduces what follows ("You will need to file if:").
    LeadIn,
    /// It announces a topic instead of stating a fact ("First, let's take
    /// a look at the ownership rules.").
    Signpost,
    /// Its numbers belong to a worked example ("For example, if you start
    /// in March, there are 14 pay periods left."): they are not the rule.
    Example,
    /// The question asks for a kind of quantity (a duration, a count, an
    /// amount, a date, a frequency) and the sentence holds none.
    NoAnswerOfType,
}

/// Whether `text` can be served alone as an answer to a question of
/// `answer_type`. `before` is what precedes it in its passage (the
/// sentence before, or a list item's lead-in), `section` its passage's
/// label.
pub fn standalone(
    text: &str,
    before: Option<&str>,
    section: &str,
    answer_type: AnswerType,
) -> Result<(), NotAlone> {
    let trimmed = text.trim_end();
    let under_lead_in = before.is_some_and(|b| b.trim_end().ends_with(':'));
    let pair = trimmed.trim_end_matches(['.', ':']).contains(": ");
    let words = trimmed
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    if words < MIN_WORDS && !under_lead_in && !pair {
        return Err(NotAlone::Fragment);
    }
    if trimmed.ends_with('?') {
        return Err(NotAlone::Question);
    }
    if trimmed.ends_with(':') {
        return Err(NotAlone::LeadIn);
    }
    let lower = trimmed.to_lowercase();
    if is_signpost(&lower) {
        return Err(NotAlone::Signpost);
    }
    if let Some(false) = answer_type.held_by(text, &quantities(text)) {
        return Err(NotAlone::NoAnswerOfType);
    }
    let typed = answer_type != AnswerType::Other;
    if typed && in_example(&lower, before, section) {
        return Err(NotAlone::Example);
    }
    Ok(())
}

/// A statement has at least this many words.
const MIN_WORDS: usize = 4;

/// Discourse words a sentence may open with before what it announces.
const OPENERS: &[&str] = &[
    "first", "now", "next", "then", "finally", "so", "here", "below", "above",
];

/// How an announcement starts: the writer tells what comes next instead
/// of stating it.
const ANNOUNCING: &[&str] = &[
    "let's",
    "let’s",
    "let us",
    "we'll",
    "we’ll",
    "we will",
    "we're going to",
    "we’re going to",
    "we are going to",
    "in this section",
    "in this chapter",
    "this section",
    "this chapter",
    "the next section",
    "the next chapter",
    "the following section",
    "the following chapter",
];

/// An announcement: an opening phrase of [`ANNOUNCING`], after at most
/// one discourse word of [`OPENERS`] ("First, let's look at …").
fn is_signpost(lower: &str) -> bool {
    let mut rest = lower.trim_start();
    if let Some((word, after)) = rest.split_once([',', ' '])
        && OPENERS.contains(&word)
    {
        rest = after.trim_start_matches([',', ' ']);
    }
    ANNOUNCING
        .iter()
        .any(|a| rest.starts_with(a) && !rest[a.len()..].starts_with(char::is_alphanumeric))
}

/// How a worked example opens.
const EXAMPLE_OPENERS: &[&str] = &[
    "for example",
    "for instance",
    "e.g.",
    "suppose",
    "say you",
    "let's say",
    "let’s say",
    "imagine",
    "as an example",
    "in this example",
    "in the example",
];

/// The sentence is part of a worked example: it opens one, the sentence
/// before it (or its list's lead-in) does, or its section is one.
fn in_example(lower: &str, before: Option<&str>, section: &str) -> bool {
    let opens = |t: &str| {
        let t = t.trim_start();
        EXAMPLE_OPENERS.iter().any(|o| t.starts_with(o))
    };
    opens(lower)
        || before.is_some_and(|b| {
            let b = b.to_lowercase();
            opens(&b) || (b.trim_end().ends_with(':') && contains_phrase(&b, "example"))
        })
        || contains_phrase(&section.to_lowercase(), "example")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alone(text: &str, t: AnswerType) -> Result<(), NotAlone> {
        standalone(text, None, "", t)
    }

    #[test]
    fn announcements_do_not_answer() {
        for s in [
            "First, let's take a look at the ownership rules.",
            "Let’s look at how leave is counted.",
            "In this section we describe the approval flow.",
            "Now, we'll see how references work.",
        ] {
            assert_eq!(alone(s, AnswerType::Other), Err(NotAlone::Signpost), "{s}");
        }
        // Stating, not announcing.
        assert_eq!(
            alone("Each value in Rust has an owner.", AnswerType::Other),
            Ok(())
        );
        assert_eq!(
            alone(
                "Letters of offer go out within 5 days.",
                AnswerType::Duration
            ),
            Ok(())
        );
    }

    #[test]
    fn a_label_is_no_statement_unless_its_lead_in_comes_with_it() {
        for label in ["Paid Parental Leave", "Paid Parental Leave ."] {
            assert_eq!(alone(label, AnswerType::Other), Err(NotAlone::Fragment));
        }
        assert_eq!(
            standalone(
                "Docusign",
                Some("The approved e-signature tool is:"),
                "",
                AnswerType::Other
            ),
            Ok(())
        );
        assert_eq!(alone("Mileage: 67 cents.", AnswerType::Amount), Ok(()));
    }

    #[test]
    fn lead_ins_and_questions_do_not_answer_alone() {
        assert_eq!(
            alone(
                "You will need to submit multiple leave requests if:",
                AnswerType::Other
            ),
            Err(NotAlone::LeadIn)
        );
        assert_eq!(
            alone(
                "What happens when the owner goes out of scope?",
                AnswerType::Other
            ),
            Err(NotAlone::Question)
        );
    }

    #[test]
    fn a_typed_question_needs_a_quantity_of_its_kind() {
        assert_eq!(
            alone(
                "Your leave days are not back-to-back.",
                AnswerType::Duration
            ),
            Err(NotAlone::NoAnswerOfType)
        );
        assert_eq!(
            alone(
                "Full-time staff earn 4 hours of leave per pay period.",
                AnswerType::Duration
            ),
            Ok(())
        );
        // Untyped questions take any stating sentence.
        assert_eq!(
            alone("Your leave days are not back-to-back.", AnswerType::Other),
            Ok(())
        );
    }

    #[test]
    fn a_worked_example_is_not_the_rule() {
        let t = AnswerType::Count;
        assert_eq!(
            alone(
                "For example, there are 14 pay periods left until December 31st.",
                t
            ),
            Err(NotAlone::Example)
        );
        assert_eq!(
            standalone(
                "That leaves 14 pay periods until December 31st.",
                Some("Suppose you start on March 3."),
                "",
                t
            ),
            Err(NotAlone::Example)
        );
        assert_eq!(
            standalone(
                "There are 26 pay periods a year.",
                None,
                "Worked example",
                t
            ),
            Err(NotAlone::Example)
        );
        assert_eq!(
            standalone(
                "There are 26 pay periods a year.",
                Some("Pay is biweekly."),
                "Pay",
                t
            ),
            Ok(())
        );
    }
}
