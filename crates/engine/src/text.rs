//! Small text helpers of the extractive generator: the content terms of a question or a
//! sentence, on the text layer's stop words and stemmer.

use groundcite_text::words::{is_question_filler, is_stop_word};

/// Whether a lowercased word carries no topic: a function word, or one of the generic verbs
/// questions are phrased with.
pub fn is_stop(word: &str) -> bool {
    is_stop_word(word) || is_question_filler(word)
}

/// The stem of a word, lowercased (see [`groundcite_text::stem`]).
pub fn stem(word: &str) -> String {
    groundcite_text::stem(&word.to_lowercase()).to_owned()
}

/// The content terms of a text: lower-cased stems of words that are not
/// stop words; numbers kept as written.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '$' || c == '%')) {
        let word = word.trim_matches(|c| c == '$' || c == '%');
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        if is_stop(&lower) || (lower.len() < 2 && !lower.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let t = stem(&lower);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_meet() {
        assert_eq!(stem("Reimbursements"), stem("reimbursement"));
        assert_eq!(stem("policies"), stem("policy"));
        assert_eq!(
            terms("How long does reimbursement take?"),
            ["reimbursement"]
        );
        assert_eq!(terms("Can I get reimbursed, and when?"), ["reimburs"]);
    }
}
