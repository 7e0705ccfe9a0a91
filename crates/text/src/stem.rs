//! A light stemmer: plurals, -ed, -ing, -ly and a final -e or -y come off, so that inflections
//! of a word share a stem ("settle", "settled"; "policies", "policy"; "weekly", "week").

/// The length of the stem of a lowercase word: a prefix of it. Words that are not all ASCII
/// letters are their own stem.
pub fn stem_len(word: &[u8]) -> usize {
    if word.is_empty() || !word.iter().all(u8::is_ascii_alphabetic) {
        return word.len();
    }
    letters_stem_len(word)
}

/// [`stem_len`] of a non-empty lowercase word of ASCII letters.
pub(crate) fn letters_stem_len(word: &[u8]) -> usize {
    let ends = |n: usize, suffix: &[u8]| word[..n].ends_with(suffix);
    let mut n = word.len();
    // "policies" and "policy" share the stem "polic": no -y comes off after -ies.
    let mut y_end = false;
    if n > 4 && ends(n, b"ies") {
        n -= 3;
        y_end = true;
    } else if ends(n, b"sses") {
        n -= 2;
    } else if n > 3 && ends(n, b"s") && !ends(n, b"ss") && !ends(n, b"us") && !ends(n, b"is") {
        n -= 1;
    }
    if !y_end {
        let before = n;
        if n > 5 && ends(n, b"ing") {
            n -= 3;
        } else if n > 4 && ends(n, b"ed") && !ends(n, b"eed") {
            n -= 2;
        }
        // A doubled consonant ("stopped", "hopping"), except ll, ss, zz.
        if n != before
            && n >= 2
            && word[n - 1] == word[n - 2]
            && !matches!(word[n - 1], b'l' | b's' | b'z')
        {
            n -= 1;
        }
        if n > 4 && ends(n, b"ly") {
            n -= 2;
        }
    }
    if n > 3 && word[n - 1] == b'e' {
        n -= 1;
    }
    if !y_end && n > 3 && word[n - 1] == b'y' {
        n -= 1;
    }
    n
}

/// The stem of a lowercase word (see [`stem_len`]).
pub fn stem(word: &str) -> &str {
    &word[..stem_len(word.as_bytes())]
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn stems_unify_inflections() {
        for (a, b) in [
            ("settle", "settled"),
            ("issues", "issued"),
            ("processes", "processed"),
            ("meetings", "meeting"),
            ("policies", "policy"),
            ("weekly", "week"),
            ("hopping", "hop"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("naïve"), "naïve");
    }
}
