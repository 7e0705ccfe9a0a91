//! Folding: the form a word is compared in.

/// Lowercases `word` into `out` (cleared first), dropping apostrophes (`'` and `’`) and
/// hyphens, and a possessive `'s` / `’s` at its end: "Doesn’t" → "doesnt", "Smith's" →
/// "smith", "non-billable" → "nonbillable".
pub fn fold_into(word: &str, out: &mut String) {
    out.clear();
    if word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        // Most words: ASCII letters and digits.
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    let word = if word.len() > 2 {
        word.strip_suffix("'s")
            .or_else(|| word.strip_suffix("’s"))
            .unwrap_or(word)
    } else {
        word
    };
    for c in word.chars() {
        match c {
            '\'' | '-' | '’' => {}
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
}

/// [`fold_into`] a new string.
pub fn fold(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    fold_into(word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_case_apostrophes_hyphens_and_possessives() {
        assert_eq!(fold("Doesn’t"), "doesnt");
        assert_eq!(fold("Smith's"), "smith");
        assert_eq!(fold("Café’s"), "café");
        assert_eq!(fold("non-billable"), "nonbillable");
        assert_eq!(fold("İstanbul"), "i\u{307}stanbul");
        // Too short to be a possessive.
        assert_eq!(fold("'s"), "s");
    }
}
