//! Small text helpers shared by the extractive generator: terms, stems,
//! stop words.

/// Words that carry no topic: function words, question words and the
/// generic verbs questions are phrased with.
const STOP: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "during",
    "each",
    "for",
    "from",
    "get",
    "gets",
    "getting",
    "give",
    "given",
    "gives",
    "go",
    "goes",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "long",
    "many",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "need",
    "needs",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "per",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "take",
    "takes",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "use",
    "used",
    "very",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "allowed",
    "able",
    "happen",
    "happens",
    "work",
    "know",
    "include",
    "includes",
    "including",
    "included",
];

pub fn is_stop(word: &str) -> bool {
    STOP.contains(&word)
}

/// A light stemmer: plural and verb endings, enough to match
/// "reimbursed", "reimbursement" and "reimbursements".
pub fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    for suffix in [
        "ements", "ement", "ments", "ment", "ations", "ation", "ables", "able", "ings", "ing",
        "ied", "ies", "ed", "es", "s",
    ] {
        // Plural `s` comes off words of four letters or more ("days").
        let min_base = if suffix == "s" { 3 } else { 4 };
        if w.len() >= suffix.len() + min_base
            && let Some(base) = w.strip_suffix(suffix)
        {
            if suffix == "ied" || suffix == "ies" {
                return format!("{base}y");
            }
            if suffix == "s" && base.ends_with('s') {
                return w;
            }
            return base.to_string();
        }
    }
    w
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
        assert_eq!(stem("reimbursement"), stem("reimbursed"));
        assert_eq!(stem("reimbursements"), stem("reimbursed"));
        assert_eq!(stem("policies"), "policy");
        assert_eq!(terms("How long does reimbursement take?"), ["reimburs"]);
    }
}
