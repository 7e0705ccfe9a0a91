//! A small incremental parser for server-sent events (the `text/event-stream`
//! framing both hosted APIs stream in).
//!
//! Lines end with `\n` or `\r\n`; an empty line dispatches the event; lines
//! starting with `:` are comments; `data` lines of one event are joined with
//! `\n`; `id` and `retry` are ignored. A bare `\r` line ending is not
//! supported (no LLM server uses it).

use crate::LlmError;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Bytes in, events out: feed the body as it arrives with
/// [`SseParser::push`], then call [`SseParser::finish`] at its end.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, LlmError> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut consumed = 0;
        while let Some(newline) = self.buffer[consumed..].iter().position(|&b| b == b'\n') {
            let line_end = consumed + newline;
            let mut line = &self.buffer[consumed..line_end];
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            let line = std::str::from_utf8(line).map_err(|_| {
                LlmError::InvalidResponse("the event stream is not valid UTF-8".to_string())
            })?;
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    events.push(SseEvent {
                        event: self.event.take(),
                        data,
                    });
                }
                self.event = None;
            } else if !line.starts_with(':') {
                let (field, value) = match line.split_once(':') {
                    Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                    None => (line, ""),
                };
                match field {
                    "data" => match &mut self.data {
                        Some(data) => {
                            data.push('\n');
                            data.push_str(value);
                        }
                        None => self.data = Some(value.to_string()),
                    },
                    "event" => self.event = Some(value.to_string()),
                    _ => {}
                }
            }
            consumed = line_end + 1;
        }
        self.buffer.drain(..consumed);
        Ok(events)
    }

    /// At the end of the body: an event whose lines all arrived but whose
    /// closing blank line did not (some servers omit it). A half-received
    /// line is discarded, so a cut JSON chunk is never parsed.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.buffer.clear();
        self.data.take().map(|data| SseEvent {
            event: self.event.take(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks() {
        let mut parser = SseParser::default();
        let stream =
            "event: ping\r\ndata: {\"a\":1}\r\n\r\n: comment\ndata: x\ndata: y\n\ndata: [DONE]\n\n";
        let mut events = Vec::new();
        for chunk in stream.as_bytes().chunks(3) {
            events.extend(parser.push(chunk).unwrap());
        }
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: Some("ping".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "x\ny".into()
                },
                SseEvent {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn multibyte_characters_split_across_chunks() {
        let mut parser = SseParser::default();
        let bytes = "data: Zürich – 東京\n\n".as_bytes();
        let mut events = parser.push(&bytes[..9]).unwrap();
        events.extend(parser.push(&bytes[9..]).unwrap());
        assert_eq!(events[0].data, "Zürich – 東京");
    }

    #[test]
    fn finish_keeps_complete_lines_only() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: [DONE]\n").unwrap().is_empty());
        assert_eq!(parser.finish().unwrap().data, "[DONE]");
        let mut parser = SseParser::default();
        assert!(
            parser
                .push(b"data: {\"choices\":[{\"del")
                .unwrap()
                .is_empty()
        );
        assert_eq!(parser.finish(), None);
    }
}
