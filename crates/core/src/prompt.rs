//! The prompt contract: the rules of the citation contract, rendered for
//! any model.

use crate::passage::Context;
use crate::refusal::{REFUSAL_SENTENCE, RefusalForm, SENTINEL_PREFIX};

/// A rendered prompt: the system message (rules and passages) and the user
/// message (the question).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Prompt {
    /// The system message: the citation rules, then the numbered passages.
    pub system: String,
    /// The user message: the question.
    pub user: String,
}

/// The rules, with the refusal form chosen by config.
pub fn rules(form: RefusalForm, n_passages: usize) -> String {
    let refusal = match form {
        RefusalForm::Sentence => format!("   \"{REFUSAL_SENTENCE}\""),
        RefusalForm::Sentinel => format!("   {SENTINEL_PREFIX} <what would be needed to answer>"),
    };
    let range = match n_passages {
        0 => "No passages were given.".to_string(),
        1 => "The only passage is [1].".to_string(),
        n => format!("The passages are numbered [1] to [{n}]."),
    };
    format!(
        "You answer ONLY from the numbered passages below.\n\
         \n\
         Rules:\n\
         1. After every factual sentence you take from a passage, append its number in\n   \
         brackets, like this: Employees are reimbursed within 30 days [2].\n   \
         A sentence that uses several passages cites each of them, like [1][3].\n\
         2. Never cite a number you were not given. {range}\n\
         3. If the passages do not contain the answer, reply exactly:\n\
         {refusal}\n\
         4. Do not merge two passages into one sentence unless both numbers appear.\n\
         5. Do not use knowledge outside the passages, even if you are confident it is correct.\n"
    )
}

/// What a model asked for a structured answer
/// ([`crate::structured::answer_schema`]) is told besides the rules: the
/// JSON shape, with the citations moved out of the text. Sent only with
/// the schema; a server that rejects the schema gets the rules alone.
pub fn structured_instruction(n_passages: usize) -> String {
    let example = if n_passages >= 2 { 2 } else { 1 };
    format!(
        "Reply with one JSON object only, shaped like\n\
         {{\"sentences\": [{{\"text\": \"Employees are reimbursed within 30 days.\", \"citations\": [{example}]}}], \"refusal\": null}}\n\
         One entry per sentence: its text without brackets, and in \"citations\" the numbers of the passages it comes from.\n\
         If the passages do not contain the answer, reply\n\
         {{\"sentences\": [], \"refusal\": {{\"needed\": \"<what would be needed to answer>\"}}}}\n"
    )
}

/// Renders the full prompt for a question over an assembled context.
pub fn render(question: &str, context: &Context<'_>, form: RefusalForm) -> Prompt {
    let mut system = rules(form, context.len());
    system.push_str("\nPassages:\n\n");
    system.push_str(&context.render());
    Prompt {
        system,
        user: question.trim().to_string(),
    }
}

/// The short corrective message sent when an answer cited ids that were
/// never given: names the ids and the valid range.
pub fn corrective_message(bad_ids: &[u64], n_passages: usize) -> String {
    let list: Vec<String> = bad_ids.iter().map(|id| format!("[{id}]")).collect();
    let valid = match n_passages {
        0 => "No passages exist".to_string(),
        1 => "Only passage [1] exists".to_string(),
        n => format!("Only passages [1] to [{n}] exist"),
    };
    format!(
        "Your answer cited {}, which {} not exist. {valid}. Answer again, citing only those numbers, or refuse as the rules say.",
        list.join(", "),
        if bad_ids.len() == 1 { "does" } else { "do" }
    )
}

/// The corrective message sent when factual sentences carry no marker:
/// quotes them and asks for a marker on each, or their removal.
pub fn coverage_message(uncited: &[&str]) -> String {
    let quoted: Vec<String> = uncited
        .iter()
        .map(|s| format!("\"{}\"", s.trim()))
        .collect();
    format!(
        "These factual sentences of your answer cite no passage: {}. Answer again: end every factual sentence with the number of the passage it comes from, leave out what no passage says, or refuse as the rules say.",
        quoted.join(" ")
    )
}

impl Prompt {
    /// The whole prompt as one user message (rules, passages, then the
    /// question), for chat templates that drop or mangle system messages.
    pub fn as_user_message(&self) -> String {
        format!("{}\nQuestion: {}", self.system, self.user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passage::{ApproxTokens, AssemblyConfig, Passage, assemble};

    #[test]
    fn contract_contains_every_rule_and_the_refusal_form() {
        let passages = vec![Passage {
            id: "hr-2".into(),
            text: "Reimbursements settle within 30 days of approval.".into(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }];
        let ctx = assemble(&passages, &AssemblyConfig::default(), &ApproxTokens);
        let p = render(
            "How long does reimbursement take?",
            &ctx,
            RefusalForm::Sentence,
        );
        assert!(
            p.system
                .starts_with("You answer ONLY from the numbered passages below.")
        );
        assert!(
            p.system
                .contains("\"Not covered by the provided documents.\"")
        );
        assert!(
            p.system
                .contains("Never cite a number you were not given. The only passage is [1].")
        );
        assert!(p.system.contains("unless both numbers appear"));
        assert!(
            p.system
                .ends_with("[1] Reimbursements settle within 30 days of approval.")
        );
        let s = render("q", &ctx, RefusalForm::Sentinel);
        assert!(
            s.system
                .contains("NOT_IN_SOURCES: <what would be needed to answer>")
        );
        assert_eq!(
            corrective_message(&[7], 3),
            "Your answer cited [7], which does not exist. Only passages [1] to [3] exist. Answer again, citing only those numbers, or refuse as the rules say."
        );
    }
}
