//! Front matter: YAML between `---` lines or TOML between `+++` lines.

use serde_json::{Map, Value};

/// The parsed front matter of a page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    /// The `title` key, its markup stripped to the visible text; `None` when absent.
    pub title: Option<String>,
    /// The `permalink` key, as written; `None` when absent.
    pub permalink: Option<String>,
    /// Every other key, as JSON.
    pub metadata: Value,
    /// Byte offset where the body starts (0 when there is no front matter).
    pub body_start: usize,
}

/// Splits and parses front matter. A file that opens a front-matter block
/// but never closes it, or whose block does not parse, is an error (the
/// caller reports the file and skips it).
pub fn parse(src: &str) -> Result<FrontMatter, String> {
    let src_no_bom = src.strip_prefix('\u{feff}').unwrap_or(src);
    let bom = src.len() - src_no_bom.len();
    let fence = if first_line(src_no_bom) == "---" {
        "---"
    } else if first_line(src_no_bom) == "+++" {
        "+++"
    } else {
        return Ok(FrontMatter {
            metadata: Value::Object(Map::new()),
            ..Default::default()
        });
    };
    let open_len = src_no_bom.find('\n').map_or(src_no_bom.len(), |n| n + 1);
    let mut pos = open_len;
    let mut close = None;
    for line in src_no_bom[open_len..].split_inclusive('\n') {
        let trimmed = line.trim_end();
        if trimmed == fence || (fence == "---" && trimmed == "...") {
            close = Some((pos, pos + line.len()));
            break;
        }
        pos += line.len();
    }
    let (block_end, body_start) =
        close.ok_or_else(|| format!("front matter opened with `{fence}` is never closed"))?;
    let block = &src_no_bom[open_len..block_end];
    let value: Value = if fence == "---" {
        if block.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_yaml_ng::from_str::<Value>(block)
                .map_err(|e| format!("invalid YAML front matter: {e}"))?
        }
    } else {
        let table: toml::Table =
            toml::from_str(block).map_err(|e| format!("invalid TOML front matter: {e}"))?;
        serde_json::to_value(table).map_err(|e| format!("invalid TOML front matter: {e}"))?
    };
    let mut map = match value {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            return Err(format!(
                "front matter is not a mapping but {}",
                kind(&other)
            ));
        }
    };
    // A title is markup (a static site renders it as HTML): its label is
    // the visible text, `<em>before</em>` read as `before`.
    let title = take_string(&mut map, "title").map(|t| crate::html::strip_tags(&t));
    let permalink = take_string(&mut map, "permalink");
    Ok(FrontMatter {
        title,
        permalink,
        metadata: Value::Object(map),
        body_start: bom + body_start,
    })
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim_end()
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.remove(key)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        _ => "something else",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml() {
        let fm =
            parse("---\ntitle: Leave\npermalink: /leave/\nkeywords: a, b\n---\n\nBody").unwrap();
        assert_eq!(fm.title.as_deref(), Some("Leave"));
        assert_eq!(fm.permalink.as_deref(), Some("/leave/"));
        assert_eq!(fm.metadata["keywords"], "a, b");
        assert_eq!(
            fm.body_start,
            "---\ntitle: Leave\npermalink: /leave/\nkeywords: a, b\n---\n".len()
        );
    }

    #[test]
    fn toml_front_matter() {
        let fm = parse("---\ntitle: Travel <em>before</em> onboarding\n---\nBody").unwrap();
        assert_eq!(fm.title.as_deref(), Some("Travel before onboarding"));
        let fm = parse("+++\ntitle = \"T\"\ntags = [\"x\"]\n+++\nBody").unwrap();
        assert_eq!(fm.title.as_deref(), Some("T"));
        assert_eq!(fm.metadata["tags"][0], "x");
    }

    #[test]
    fn none_and_broken() {
        assert_eq!(parse("# Hi\n").unwrap().body_start, 0);
        assert!(parse("---\ntitle: x\nno end").is_err());
        assert!(parse("---\ntitle: [unclosed\n---\n").is_err());
        assert!(parse("+++\ntitle = \n+++\n").is_err());
    }
}
