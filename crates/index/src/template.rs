//! Liquid/Jekyll-style template tags, blanked in place.
//!
//! The handbook pages are Liquid templates: `{% page "..." %}` inside link
//! targets, `{% alert %}...{% endalert %}` around text, `{% comment %}` blocks,
//! `{{ site.x }}` expressions. [`blank_template_tags`] removes them *without
//! moving any byte*: every removed byte becomes a space (newlines are kept), so
//! byte offsets and line numbers of the result are those of the source file.
//! A few tags that render visible text are replaced by that text, padded:
//! `{% slack_channel "x" %}` → `#x`, `{% slack_channel "x" "label" %}` → `label`.
//! `{% raw %}...{% endraw %}` keeps its content verbatim (that is what Liquid
//! renders); `{% comment %}...{% endcomment %}` is dropped whole.

/// Returns `src` with template tags replaced by spaces (same length, same
/// newlines, so the same byte offsets and line numbers).
pub fn blank_template_tags(src: &str) -> String {
    let bytes = src.as_bytes();
    let mut out: Vec<u8> = bytes.to_vec();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'{' && bytes[i + 1] == b'{' {
            if let Some(close) = find(bytes, i + 2, b"}}") {
                blank(&mut out, i, close + 2);
                i = close + 2;
                continue;
            }
        } else if bytes[i] == b'{' && bytes[i + 1] == b'%' {
            let Some(close) = find(bytes, i + 2, b"%}") else {
                i += 2;
                continue;
            };
            let tag_end = close + 2;
            let inner = &src[i + 2..close];
            let name = tag_name(inner);
            match name {
                "comment" => {
                    let end = find_tag(src, tag_end, "endcomment").map_or(bytes.len(), |(_, e)| e);
                    blank(&mut out, i, end);
                    i = end;
                }
                "raw" => {
                    blank(&mut out, i, tag_end);
                    match find_tag(src, tag_end, "endraw") {
                        Some((s, e)) => {
                            blank(&mut out, s, e);
                            i = e;
                        }
                        None => i = bytes.len(),
                    }
                }
                "slack_channel" => {
                    let args = quoted_args(inner);
                    let text = match args.as_slice() {
                        [_, label, ..] => label.to_string(),
                        [channel] => format!("#{}", channel.trim_start_matches('#')),
                        [] => String::new(),
                    };
                    blank(&mut out, i, tag_end);
                    write_over(&mut out, i, tag_end, &text);
                    i = tag_end;
                }
                _ => {
                    blank(&mut out, i, tag_end);
                    i = tag_end;
                }
            }
            continue;
        }
        i += 1;
    }
    // Only ASCII bytes were written over whole tags (which start and end on
    // ASCII delimiters) or valid UTF-8 replacement text, so this cannot fail.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn tag_name(inner: &str) -> &str {
    let t = inner.trim_start_matches('-').trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    &t[..end]
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Finds the next `{% name %}` tag at or after `from`; returns its byte range.
fn find_tag(src: &str, from: usize, name: &str) -> Option<(usize, usize)> {
    let bytes = src.as_bytes();
    let mut i = from;
    while let Some(open) = find(bytes, i, b"{%") {
        let close = find(bytes, open + 2, b"%}")?;
        if tag_name(&src[open + 2..close]) == name {
            return Some((open, close + 2));
        }
        i = open + 2;
    }
    None
}

fn quoted_args(inner: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let mut rest = inner;
    while let Some(q) = rest.find(['"', '\'']) {
        let quote = rest.as_bytes()[q] as char;
        let after = &rest[q + 1..];
        match after.find(quote) {
            Some(end) => {
                args.push(&after[..end]);
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    args
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// Writes `text` at the start of a blanked region if it fits before the first
/// newline of the region.
fn write_over(out: &mut [u8], start: usize, end: usize, text: &str) {
    let room = out[start..end]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .unwrap_or(end - start);
    if text.len() <= room && !text.contains(['\n', '\r']) {
        out[start..start + text.len()].copy_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_length_and_lines() {
        let src =
            "a {% page \"x/\" %} b\n{% comment %}\nhidden\n{% endcomment %}\nc {{ site.x }} d";
        let out = blank_template_tags(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        assert!(!out.contains("hidden") && !out.contains("page") && !out.contains("site"));
        assert!(
            out.starts_with("a ")
                && out.contains(" b\n")
                && out.contains("c ")
                && out.ends_with(" d")
        );
    }

    #[test]
    fn raw_keeps_content_and_slack_channel_renders() {
        let out =
            blank_template_tags("{% raw %}{{ x }}{% endraw %} ask {% slack_channel \"#ux\" %}.");
        assert!(out.contains("{{ x }}"), "{out}");
        assert!(out.contains("#ux"), "{out}");
        assert!(!out.contains("raw"));
        let out = blank_template_tags("in {% slack_channel \"talent\" \"the Talent team\" %}");
        assert!(out.contains("the Talent team"));
    }

    #[test]
    fn unterminated_tags_are_left_alone() {
        assert_eq!(blank_template_tags("50% {% off"), "50% {% off");
    }
}
