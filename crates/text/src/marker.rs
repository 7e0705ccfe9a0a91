//! Citation markers as a claim's tokenizer sees them: spans to skip.

/// Byte ranges of citation markers (`[2]`, `[1][3]`, `[1, 3]`, `[2-4]`) and a leading list
/// bullet ("- ", "* ", "1. ") in a claim.
pub fn marker_ranges(text: &str, out: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    // Leading bullet.
    let lead = text.len() - text.trim_start().len();
    let t = &bytes[lead..];
    if t.len() >= 2 && matches!(t[0], b'-' | b'*' | b'+') && t[1] == b' ' {
        out.push((lead, lead + 2));
    } else {
        let mut k = 0;
        while k < t.len() && t[k].is_ascii_digit() {
            k += 1;
        }
        if k > 0 && k + 1 < t.len() && (t[k] == b'.' || t[k] == b')') && t[k + 1] == b' ' {
            out.push((lead, lead + k + 2));
        }
    }
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'[' {
            let mut j = i + 1;
            let mut digit = false;
            while j < bytes.len() && matches!(bytes[j], b'0'..=b'9' | b',' | b' ' | b'-') {
                digit |= bytes[j].is_ascii_digit();
                j += 1;
            }
            // also allow an en dash inside ranges
            while j + 2 < bytes.len() && &bytes[j..j + 3] == "–".as_bytes() {
                j += 3;
                while j < bytes.len() && matches!(bytes[j], b'0'..=b'9' | b' ') {
                    j += 1;
                }
            }
            if digit && j < bytes.len() && bytes[j] == b']' {
                out.push((i, j + 1));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize;

    #[test]
    fn markers_and_bullets_are_skipped() {
        let t = "- Refunds take 5 days [1][3], or [2-4].";
        let mut r = Vec::new();
        marker_ranges(t, &mut r);
        assert_eq!(r.len(), 4);
        let mut toks = Vec::new();
        tokenize(t, &r, true, &mut toks);
        let words: Vec<&str> = toks.iter().map(|k| k.text(t)).collect();
        assert_eq!(words, ["Refunds", "take", "5", "days", "or"]);
    }
}
