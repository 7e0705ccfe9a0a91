//! Abbreviations and initials: the one list every sentence splitter asks whether a period
//! ends a sentence.

/// What the word before a period is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abbrev {
    /// Not an abbreviation.
    None,
    /// Titles and Latin abbreviations that never end a sentence (`Dr.`, `e.g.`, `No.`).
    NeverEnds,
    /// `U.S.`, `J.`: ends one only before a typical sentence start.
    Initialism,
    /// `etc.`, `Inc.`, `Jan.`, `a.m.`: ends one before a capital letter.
    Other,
}

/// Classifies `token`, the word right before a period (without it), ASCII case-insensitively.
pub fn abbreviation(token: &[u8]) -> Abbrev {
    if token.is_empty() || token.len() > 8 {
        return Abbrev::None;
    }
    let mut buf = [0u8; 8];
    for (d, c) in buf.iter_mut().zip(token) {
        *d = c.to_ascii_lowercase();
    }
    match &buf[..token.len()] {
        // Titles and Latin abbreviations: never the end of a sentence.
        b"mr" | b"mrs" | b"ms" | b"dr" | b"prof" | b"rev" | b"hon" | b"gen" | b"sen" | b"rep"
        | b"sgt" | b"capt" | b"lt" | b"col" | b"st" | b"mt" | b"e.g" | b"i.e" | b"cf" | b"vs"
        | b"viz" | b"approx" | b"incl" | b"esp" | b"fig" | b"figs" | b"no" | b"nos" | b"vol"
        | b"pp" | b"sec" | b"ch" | b"dept" | b"est" | b"ave" | b"blvd" => return Abbrev::NeverEnds,
        // May end one, before a capital letter.
        b"etc" | b"inc" | b"ltd" | b"co" | b"corp" | b"jr" | b"sr" | b"llc" | b"al" | b"jan"
        | b"feb" | b"mar" | b"apr" | b"jun" | b"jul" | b"aug" | b"sep" | b"sept" | b"oct"
        | b"nov" | b"dec" | b"mon" | b"tue" | b"tues" | b"wed" | b"thu" | b"thur" | b"thurs"
        | b"fri" | b"sat" | b"sun" | b"a.m" | b"p.m" | b"hrs" | b"min" | b"mins" | b"yrs"
        | b"ft" | b"oz" | b"lb" | b"lbs" | b"max" => return Abbrev::Other,
        _ => {}
    }
    // Initialisms: `U.S`, `J`, `D.C` (letters separated by dots).
    let is_initialism = token.len() % 2 == 1
        && token.iter().enumerate().all(|(k, &c)| {
            if k % 2 == 0 {
                c.is_ascii_alphabetic()
            } else {
                c == b'.'
            }
        })
        && (token.len() > 1 || token[0].is_ascii_uppercase());
    if is_initialism {
        return Abbrev::Initialism;
    }
    Abbrev::None
}

#[cfg(test)]
mod tests {
    use super::{Abbrev, abbreviation};

    #[test]
    fn classes() {
        assert_eq!(abbreviation(b"Dr"), Abbrev::NeverEnds);
        assert_eq!(abbreviation(b"no"), Abbrev::NeverEnds);
        assert_eq!(abbreviation(b"Inc"), Abbrev::Other);
        assert_eq!(abbreviation(b"U.S"), Abbrev::Initialism);
        assert_eq!(abbreviation(b"J"), Abbrev::Initialism);
        assert_eq!(abbreviation(b"j"), Abbrev::None);
        assert_eq!(abbreviation(b"days"), Abbrev::None);
    }
}
