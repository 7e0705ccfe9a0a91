//! Quantities: numbers (digits and words), ranges, money, percentages, durations, weekdays,
//! month names, calendar years and ordinals, with their bounds ("at least", "up to", ...).

use crate::text::{Lower, QUANT, STOP, Token};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Unit {
    /// A number with no recognised unit.
    Bare,
    Percent,
    Money,
    Minute,
    Hour,
    Day,
    BusinessDay,
    Week,
    MonthSpan,
    Year,
    Weekday,
    MonthName,
    CalendarYear,
    /// An ordinal ("third season"), with the key of the noun after it (0 if none).
    Ordinal(u64),
    /// A count of something else ("6.213 km", "40 drug stores"): the key of the noun.
    Other(u64),
}

impl Unit {
    fn days(self) -> Option<f64> {
        Some(match self {
            Unit::Minute => 1.0 / 1440.0,
            Unit::Hour => 1.0 / 24.0,
            Unit::Day | Unit::BusinessDay => 1.0,
            Unit::Week => 7.0,
            Unit::MonthSpan => 30.0,
            Unit::Year => 365.0,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    Exact,
    AtLeast,
    AtMost,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantity {
    pub lo: f64,
    pub hi: f64,
    pub unit: Unit,
    pub bound: Bound,
    /// Byte span of the number and its unit in the source text.
    pub start: u32,
    pub end: u32,
}

impl Quantity {
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start as usize..self.end as usize]
    }
}

fn eq(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Whether evidence quantity `e` states claim quantity `c` (same value, compatible unit).
pub(crate) fn states(c: &Quantity, e: &Quantity) -> bool {
    let (clo, chi, elo, ehi) = match (c.unit.days(), e.unit.days()) {
        (Some(a), Some(b)) => (c.lo * a, c.hi * a, e.lo * b, e.hi * b),
        _ => {
            let compatible = match (c.unit, e.unit) {
                (Unit::Bare, _) | (_, Unit::Bare) => true,
                (Unit::Ordinal(a), Unit::Ordinal(b)) => a == b || a == 0 || b == 0,
                // The same number before another noun ("240 annual", "32 hours"): lenient.
                (Unit::Other(_), _) | (_, Unit::Other(_)) => true,
                (a, b) => a == b,
            };
            if !compatible {
                return false;
            }
            (c.lo, c.hi, e.lo, e.hi)
        }
    };
    if eq(clo, chi) {
        (eq(clo, elo) && eq(chi, ehi)) || (clo >= elo - 1e-9 && clo <= ehi + 1e-9)
    } else {
        eq(clo, elo) && eq(chi, ehi)
    }
}

/// Whether `c` and `e` measure the same kind of thing, so that different values conflict.
pub(crate) fn comparable(c: &Quantity, e: &Quantity) -> bool {
    if c.unit.days().is_some() && e.unit.days().is_some() {
        return true;
    }
    match (c.unit, e.unit) {
        (Unit::Ordinal(a), Unit::Ordinal(b)) => a == b && a != 0,
        (Unit::Other(a), Unit::Other(b)) => a == b,
        (Unit::Bare, _) | (_, Unit::Bare) => false,
        (a, b) => a == b,
    }
}

/// Opposite bounds on the same value ("at least 30" vs "at most 30").
pub(crate) fn bounds_conflict(c: &Quantity, e: &Quantity) -> bool {
    matches!(
        (c.bound, e.bound),
        (Bound::AtLeast, Bound::AtMost) | (Bound::AtMost, Bound::AtLeast)
    )
}

/// Number words, ordinal words and weekday names (flagged as quantity tokens).
pub(crate) const QUANT_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "dozen",
    "million",
    "billion",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "twentieth",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
];

/// Month names (quantity tokens when capitalised).
pub(crate) const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

pub(crate) fn word_number(w: &[u8]) -> Option<f64> {
    Some(match w {
        b"zero" => 0.0,
        b"one" => 1.0,
        b"two" => 2.0,
        b"three" => 3.0,
        b"four" => 4.0,
        b"five" => 5.0,
        b"six" => 6.0,
        b"seven" => 7.0,
        b"eight" => 8.0,
        b"nine" => 9.0,
        b"ten" => 10.0,
        b"eleven" => 11.0,
        b"twelve" => 12.0,
        b"thirteen" => 13.0,
        b"fourteen" => 14.0,
        b"fifteen" => 15.0,
        b"sixteen" => 16.0,
        b"seventeen" => 17.0,
        b"eighteen" => 18.0,
        b"nineteen" => 19.0,
        b"twenty" => 20.0,
        b"thirty" => 30.0,
        b"forty" => 40.0,
        b"fifty" => 50.0,
        b"sixty" => 60.0,
        b"seventy" => 70.0,
        b"eighty" => 80.0,
        b"ninety" => 90.0,
        b"hundred" => 100.0,
        b"thousand" => 1000.0,
        b"dozen" => 12.0,
        b"million" => 1e6,
        b"billion" => 1e9,
        _ => return None,
    })
}

pub(crate) fn word_ordinal(w: &[u8]) -> Option<f64> {
    Some(match w {
        b"first" => 1.0,
        b"second" => 2.0,
        b"third" => 3.0,
        b"fourth" => 4.0,
        b"fifth" => 5.0,
        b"sixth" => 6.0,
        b"seventh" => 7.0,
        b"eighth" => 8.0,
        b"ninth" => 9.0,
        b"tenth" => 10.0,
        b"eleventh" => 11.0,
        b"twelfth" => 12.0,
        b"thirteenth" => 13.0,
        b"fourteenth" => 14.0,
        b"fifteenth" => 15.0,
        b"twentieth" => 20.0,
        _ => return None,
    })
}

/// "19th", "32nd", "1st", "3rd".
pub(crate) fn ordinal_digits(w: &str) -> Option<f64> {
    let digits = w.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    match &w[digits..] {
        "st" | "nd" | "rd" | "th" => w[..digits].parse().ok(),
        _ => None,
    }
}

pub(crate) fn weekday(w: &[u8]) -> Option<f64> {
    let w = w.strip_suffix(b"s").unwrap_or(w);
    Some(match w {
        b"monday" => 1.0,
        b"tuesday" => 2.0,
        b"wednesday" => 3.0,
        b"thursday" => 4.0,
        b"friday" => 5.0,
        b"saturday" => 6.0,
        b"sunday" => 7.0,
        _ => return None,
    })
}

pub(crate) fn month(w: &[u8]) -> Option<f64> {
    Some(match w {
        b"january" => 1.0,
        b"february" => 2.0,
        b"march" => 3.0,
        b"april" => 4.0,
        b"may" => 5.0,
        b"june" => 6.0,
        b"july" => 7.0,
        b"august" => 8.0,
        b"september" => 9.0,
        b"october" => 10.0,
        b"november" => 11.0,
        b"december" => 12.0,
        _ => return None,
    })
}

/// `time_unit` of a token's lowercased text. Only a `TIME` token can be one (the tokenizer
/// flags exactly these words), so the others are not lowercased.
fn token_time_unit(t: &Token, text: &str) -> Option<Unit> {
    if t.flags & crate::text::TIME == 0 {
        return None;
    }
    time_unit(Lower::new(t.text(text)).bytes())
}

fn time_unit(w: &[u8]) -> Option<Unit> {
    Some(match w {
        b"minute" | b"minutes" | b"min" | b"mins" => Unit::Minute,
        b"hour" | b"hours" | b"hr" | b"hrs" => Unit::Hour,
        b"day" | b"days" => Unit::Day,
        b"week" | b"weeks" => Unit::Week,
        b"month" | b"months" => Unit::MonthSpan,
        b"year" | b"years" | b"yr" | b"yrs" => Unit::Year,
        _ => return None,
    })
}

fn lower_eq(t: &Token, text: &str, w: &str) -> bool {
    t.text(text).eq_ignore_ascii_case(w)
}

fn number_value(word: &str) -> Option<f64> {
    // Fast path: up to 15 digits (with thousands separators) are an exact integer, which is
    // what `parse` returns for them.
    let mut v = 0u64;
    let mut digits = 0;
    let mut plain = true;
    for &b in word.as_bytes() {
        if b.is_ascii_digit() {
            v = v * 10 + (b - b'0') as u64;
            digits += 1;
            if digits > 15 {
                plain = false;
                break;
            }
        } else if b != b',' {
            plain = false;
            break;
        }
    }
    if plain && digits > 0 {
        return Some(v as f64);
    }
    let mut buf = [0u8; 40];
    let mut n = 0;
    for &b in word.as_bytes() {
        if b == b',' {
            continue;
        }
        if n >= buf.len() {
            return None;
        }
        buf[n] = b;
        n += 1;
    }
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// The number a token stands for, if any, and whether it is an ordinal.
fn token_number(t: &Token, text: &str) -> Option<(f64, bool)> {
    token_number_lower(t, text, None)
}

/// `token_number`, given the token's lowercased text if already at hand.
fn token_number_lower(t: &Token, text: &str, lower: Option<&Lower>) -> Option<(f64, bool)> {
    if t.flags & QUANT == 0 {
        return None;
    }
    let word = t.text(text);
    if word.as_bytes()[0].is_ascii_digit() {
        if let Some(v) = number_value(word) {
            return Some((v, false));
        }
        return ordinal_digits(&word.to_ascii_lowercase_small()).map(|v| (v, true));
    }
    let owned;
    let lower = match lower {
        Some(l) => l,
        None => {
            owned = Lower::new(word);
            &owned
        }
    };
    let lw = lower.bytes();
    if let Some(v) = word_number(lw) {
        return Some((v, false));
    }
    word_ordinal(lw).map(|v| (v, true))
}

trait SmallLower {
    fn to_ascii_lowercase_small(&self) -> String;
}
impl SmallLower for str {
    // Only used on short ordinal tokens such as "19TH" (rare).
    fn to_ascii_lowercase_small(&self) -> String {
        if self.bytes().any(|b| b.is_ascii_uppercase()) {
            self.to_ascii_lowercase()
        } else {
            self.to_owned()
        }
    }
}

/// Whether the gap between two tokens is a range dash.
fn dash_gap(text: &str, a: &Token, b: &Token) -> bool {
    let gap = &text[a.end as usize..b.start as usize];
    if gap == " " {
        return false; // the usual gap
    }
    !gap.trim().is_empty()
        && gap
            .chars()
            .all(|c| matches!(c, '-' | '–' | '—' | ' ' | '$'))
        && gap.chars().any(|c| matches!(c, '-' | '–' | '—'))
}

fn bound_before(toks: &[Token], i: usize, text: &str) -> Bound {
    let p = |k: usize| -> &str { if i >= k { toks[i - k].text(text) } else { "" } };
    let (p1, p2) = (p(1), p(2));
    let is = |s: &str, w: &str| s.eq_ignore_ascii_case(w);
    if is(p1, "least") && is(p2, "at")
        || is(p1, "minimum")
        || is(p1, "min")
        || (is(p1, "of") && is(p2, "minimum"))
        || (is(p1, "than") && (is(p2, "more") || is(p2, "greater") || is(p2, "longer")))
        || is(p1, "over")
        || is(p1, "above")
        || is(p1, "exceeding")
    {
        return Bound::AtLeast;
    }
    if is(p1, "most") && is(p2, "at")
        || (is(p1, "to") && is(p2, "up"))
        || is(p1, "within")
        || is(p1, "maximum")
        || is(p1, "max")
        || (is(p1, "of") && is(p2, "maximum"))
        || (is(p1, "than") && (is(p2, "less") || is(p2, "fewer") || is(p2, "shorter")))
        || is(p1, "under")
        || is(p1, "below")
        || (is(p1, "exceed") && is(p2, "to"))
    {
        return Bound::AtMost;
    }
    Bound::Exact
}

/// Extract the quantities of a token sequence (tokens of `text`).
pub(crate) fn extract(text: &str, toks: &[Token], out: &mut Vec<Quantity>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        // "a year", "an hour".
        if toks
            .get(i + 1)
            .is_some_and(|n| n.flags & crate::text::TIME != 0)
            && (lower_eq(t, text, "a") || lower_eq(t, text, "an"))
            && let Some(next) = toks.get(i + 1)
            && let Some(unit) = time_unit(Lower::new(next.text(text)).bytes())
            && !(i > 0
                && ["per", "once", "twice", "times", "every", "each"]
                    .iter()
                    .any(|w| lower_eq(&toks[i - 1], text, w)))
        {
            out.push(Quantity {
                lo: 1.0,
                hi: 1.0,
                unit,
                bound: bound_before(toks, i, text),
                start: t.start,
                end: next.end,
            });
            i += 2;
            continue;
        }
        if t.flags & QUANT == 0 {
            i += 1;
            continue;
        }
        let word = t.text(text);
        // A word starting with a digit is no weekday or month name: no need to lowercase it.
        let lower = (!word.as_bytes()[0].is_ascii_digit()).then(|| Lower::new(word));
        let lw = lower.as_ref().map_or(&b""[..], |l| l.bytes());
        if let Some(d) = weekday(lw) {
            let mut q = Quantity {
                lo: d,
                hi: d,
                unit: Unit::Weekday,
                bound: Bound::Exact,
                start: t.start,
                end: t.end,
            };
            // "Monday - Friday", "Monday through Friday"
            if let Some(n) = toks.get(i + 1) {
                let (j, ok) = if dash_gap(text, t, n) {
                    (i + 1, true)
                } else if lower_eq(n, text, "to") || lower_eq(n, text, "through") {
                    (i + 2, true)
                } else {
                    (i + 1, false)
                };
                if ok
                    && let Some(m) = toks.get(j)
                    && let Some(d2) = weekday(Lower::new(m.text(text)).bytes())
                {
                    q.hi = d2.max(d);
                    q.lo = d2.min(d);
                    q.end = m.end;
                    i = j;
                }
            }
            out.push(q);
            i += 1;
            continue;
        }
        if t.flags & crate::text::CAP != 0
            && let Some(m) = month(lw)
        {
            out.push(Quantity {
                lo: m,
                hi: m,
                unit: Unit::MonthName,
                bound: Bound::Exact,
                start: t.start,
                end: t.end,
            });
            i += 1;
            continue;
        }
        let Some((mut value, ordinal)) = token_number_lower(t, text, lower.as_ref()) else {
            i += 1;
            continue;
        };
        let money = t.start > 0 && bytes[t.start as usize - 1] == b'$';
        let start = if money { t.start - 1 } else { t.start };
        let bound0 = bound_before(toks, i, text);
        let is_digits = word.as_bytes()[0].is_ascii_digit();
        let mut j = i + 1;
        // Compound word numbers: "twenty five", "three hundred", "1.5 million".
        while let Some(n) = toks.get(j) {
            let Some((v, false)) = token_number(n, text) else {
                break;
            };
            if n.start as usize - toks[j - 1].end as usize > 1 || n.flags & crate::text::DIGIT != 0
            {
                break;
            }
            if v >= 100.0 {
                value *= v;
            } else if value >= 20.0 && value % 10.0 == 0.0 && v < 10.0 && !is_digits {
                value += v;
            } else {
                break;
            }
            j += 1;
        }
        let mut hi = value;
        let mut end = toks[j - 1].end;
        // Ranges: "3-5", "3–5", "3 to 5", "between 3 and 15".
        if !ordinal && let Some(n) = toks.get(j) {
            let between = i > 0 && lower_eq(&toks[i - 1], text, "between");
            let (k, ok) = if dash_gap(text, &toks[j - 1], n) {
                (j, true)
            } else if lower_eq(n, text, "to") || (between && lower_eq(n, text, "and")) {
                (j + 1, true)
            } else {
                (j, false)
            };
            if ok
                && let Some(m) = toks.get(k)
                && let Some((v2, false)) = token_number(m, text)
                && v2 > value
            {
                hi = v2;
                end = m.end;
                j = k + 1;
            }
        }
        let mut bound = bound0;
        let mut unit = Unit::Bare;
        if bytes.get(end as usize) == Some(&b'%') {
            unit = Unit::Percent;
            end += 1;
        } else if money {
            unit = Unit::Money;
        } else if ordinal {
            let noun = toks
                .get(j)
                .filter(|n| n.flags & (STOP | QUANT) == 0 && n.start - end <= 2);
            let Some(n) = noun else {
                // "born first", "finished third": an adverb, compared as a word.
                i = j;
                continue;
            };
            unit = Unit::Ordinal(n.key);
            end = n.end;
            j += 1;
        } else if let Some(n) = toks.get(j) {
            let nl = Lower::new(n.text(text));
            let nw = nl.bytes();
            if let Some(u) = time_unit(nw) {
                unit = u;
                end = n.end;
                j += 1;
            } else if matches!(nw, b"business" | b"working" | b"calendar")
                && let Some(m) = toks.get(j + 1)
                && matches!(token_time_unit(m, text), Some(Unit::Day))
            {
                unit = if nw == b"calendar" {
                    Unit::Day
                } else {
                    Unit::BusinessDay
                };
                end = m.end;
                j += 2;
            } else if matches!(nw, b"percent" | b"percentage" | b"pct") {
                unit = Unit::Percent;
                end = n.end;
                j += 1;
            } else if matches!(nw, b"dollars" | b"dollar" | b"usd") {
                unit = Unit::Money;
                end = n.end;
                j += 1;
            } else if n.flags & (STOP | QUANT) == 0
                && n.start - end <= 2
                && !(is_digits && (1000.0..=2100.0).contains(&value) && value.fract() == 0.0)
            {
                // "240 annual leave hours": a time unit a few words on.
                let later = (j + 1..(j + 3).min(toks.len()))
                    .take_while(|&k| toks[k].flags & (STOP | QUANT) == 0)
                    .find_map(|k| token_time_unit(&toks[k], text).map(|u| (k, u)));
                if let Some((k, u)) = later {
                    unit = u;
                    end = toks[k].end;
                    j = k + 1;
                } else {
                    unit = Unit::Other(n.key);
                    end = n.end;
                    j += 1;
                }
            }
        }
        if unit == Unit::Bare
            && is_digits
            && (1000.0..=2100.0).contains(&value)
            && value.fract() == 0.0
            && hi == value
            && !word.contains(',')
        {
            unit = Unit::CalendarYear;
        }
        // Trailing bound: "30 days or more", "10 or fewer".
        if let (Some(a), Some(b)) = (toks.get(j), toks.get(j + 1))
            && lower_eq(a, text, "or")
        {
            let bw = b.text(text);
            if ["more", "longer", "greater", "above"]
                .iter()
                .any(|w| bw.eq_ignore_ascii_case(w))
            {
                bound = Bound::AtLeast;
            } else if ["less", "fewer", "shorter", "below"]
                .iter()
                .any(|w| bw.eq_ignore_ascii_case(w))
            {
                bound = Bound::AtMost;
            }
        }
        out.push(Quantity {
            lo: value,
            hi,
            unit,
            bound,
            start,
            end,
        });
        i = j.max(i + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize;

    fn quants(text: &str) -> Vec<(f64, f64, Unit, Bound, String)> {
        let mut toks = Vec::new();
        tokenize(text, &[], true, &mut toks);
        let mut q = Vec::new();
        extract(text, &toks, &mut q);
        q.iter()
            .map(|q| (q.lo, q.hi, q.unit, q.bound, q.text(text).to_owned()))
            .collect()
    }

    #[test]
    fn durations_money_percent_ranges() {
        let q = quants("within 5 business days, at least 80% of your time, a $35 fee, $191,900");
        assert_eq!(
            q[0],
            (
                5.0,
                5.0,
                Unit::BusinessDay,
                Bound::AtMost,
                "5 business days".into()
            )
        );
        assert_eq!(
            q[1],
            (80.0, 80.0, Unit::Percent, Bound::AtLeast, "80%".into())
        );
        assert_eq!(q[2].2, Unit::Money);
        assert_eq!(q[3].0, 191_900.0);
        let q = quants(
            "processed within 5-7 working days; between 3 and 15 hours; 3 to 5 weeks; 3–5 days",
        );
        assert_eq!((q[0].0, q[0].1, q[0].2), (5.0, 7.0, Unit::BusinessDay));
        assert_eq!((q[1].0, q[1].1, q[1].2), (3.0, 15.0, Unit::Hour));
        assert_eq!((q[2].0, q[2].1, q[2].2), (3.0, 5.0, Unit::Week));
        assert_eq!((q[3].0, q[3].1, q[3].2), (3.0, 5.0, Unit::Day));
    }

    #[test]
    fn words_weekdays_years() {
        let q = quants(
            "80 hours in a two week pay period, every Wednesday, in 2006, twenty five days, a year",
        );
        assert_eq!(q[1].0, 2.0);
        assert_eq!(q[1].2, Unit::Week);
        assert_eq!(q[2].2, Unit::Weekday);
        assert_eq!(q[3].2, Unit::CalendarYear);
        assert_eq!((q[4].0, q[4].2), (25.0, Unit::Day));
        assert_eq!((q[5].0, q[5].2), (1.0, Unit::Year));
        let q = quants("Monday - Friday");
        assert_eq!((q[0].0, q[0].1), (1.0, 5.0));
    }
}
