//! The words of a question that carry its topic: the one rule every
//! backend applies before it analyses a query with its own stemmer.

/// Lucene's English stop words plus the function words of questions ("how",
/// "many", "can", "my", "please", the pieces of "what's" and "don't"): they carry no topic, and leaving them in the
/// coverage denominator would make every question look half-answered.
pub(crate) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with", "how", "what", "when", "where", "which", "who",
    "whom", "why", "can", "could", "do", "does", "did", "i", "me", "my", "we", "our", "us", "you",
    "your", "he", "she", "his", "her", "its", "them", "am", "been", "being", "have", "has", "had",
    "would", "should", "may", "might", "must", "shall", "much", "many", "any", "some", "get",
    "got", "about", "from", "so", "than", "too", "very", "just", "here", "each", "per", "all",
    "also", "other", "only", "own", "please", "tell", "s", "t", "d", "m", "ll", "re", "ve", "don",
    "doesn", "isn", "aren", "won", "can't",
];

/// Words that only phrase a question ("how *long* does it *take*"): dropped
/// from queries (not from the index), so they neither rank hits nor weigh
/// in the coverage denominator of the normalised score.
pub(crate) const QUERY_ONLY_STOP_WORDS: &[&str] = &[
    "take", "takes", "taking", "long", "need", "needs", "want", "wants", "know", "happen",
    "happens", "allowed", "able", "like", "go", "goes", "there", "anyone", "someone", "way",
];

/// The words of a query that carry its topic, lowercased and unstemmed:
/// the query split like the index's tokenizer (on anything not
/// alphanumeric), without question-phrasing words and stop words. Other
/// backends analyse these words with their own stemmer, so that both
/// backends drop the same words from a question.
pub fn query_words(query: &str) -> Vec<String> {
    let stripped = strip_question_words(query);
    let mut out = Vec::new();
    for word in stripped
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() <= 40)
    {
        let lower = word.to_lowercase();
        if !STOP_WORDS.contains(&lower.as_str()) && !out.contains(&lower) {
            out.push(lower);
        }
    }
    out
}

/// The query with its question-phrasing words removed.
pub(crate) fn strip_question_words(query: &str) -> String {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|w| {
            !w.is_empty()
                && !QUERY_ONLY_STOP_WORDS
                    .iter()
                    .any(|s| w.eq_ignore_ascii_case(s))
        })
        .collect::<Vec<_>>()
        .join(" ")
}
