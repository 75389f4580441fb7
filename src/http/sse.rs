//! A pure, incremental Server-Sent Events parser (WHATWG framing).
//!
//! Bytes in, events out, in any split: lines end in LF, CRLF or CR (a CR at the end of
//! one chunk and an LF at the start of the next are one line end); `data:` lines join
//! with `\n`; a blank line ends an event; `:` lines are comments; `id:` and `retry:` are
//! kept; one leading BOM is dropped; unknown fields are ignored.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, `message` when absent.
    pub event: String,
    pub data: String,
    /// The last event id seen so far on the stream.
    pub id: Option<String>,
}

#[derive(Default)]
pub struct Parser {
    line: Vec<u8>,
    /// The previous chunk ended in CR: a leading LF now is part of that line end.
    after_cr: bool,
    /// Bytes seen so far, to find a BOM split across chunks.
    started: usize,
    data: String,
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// The last `retry:` value, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Bytes of the line not yet ended (for callers that cap memory).
    pub fn pending_len(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// Feed bytes; complete events are pushed onto `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Event>) {
        if bytes.is_empty() {
            return;
        }
        if std::mem::take(&mut self.after_cr) && bytes[0] == b'\n' {
            bytes = &bytes[1..];
        }
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => {
                    if !(i > 0 && bytes[i - 1] == b'\r') {
                        self.end_line(out);
                    }
                }
                b'\r' => {
                    self.end_line(out);
                    if i + 1 == bytes.len() {
                        self.after_cr = true;
                    }
                }
                _ => self.line.push(b),
            }
        }
    }

    /// End of stream: an event not closed by a blank line is dropped, as the standard says.
    pub fn finish(&mut self) {
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.event.clear();
    }

    fn end_line(&mut self, out: &mut Vec<Event>) {
        let mut line = std::mem::take(&mut self.line);
        if self.started == 0 && line.starts_with("\u{feff}".as_bytes()) {
            line.drain(..3);
        }
        self.started += 1;
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // comment, keep-alive
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(at) => {
                let v = &text[at + 1..];
                (&text[..at], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the last "\n"
        out.push(Event {
            event: if event.is_empty() {
                "message".into()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str, id: Option<&str>) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
        }
    }

    fn parse_whole(input: &[u8]) -> Vec<Event> {
        let mut p = Parser::new();
        let mut out = Vec::new();
        p.feed(input, &mut out);
        out
    }

    /// A stream with every feature: BOM, CRLF, CR, LF, comments, priming event with empty
    /// data, multi-line data, unknown fields, ids, retry, and a trailing unterminated event.
    const STREAM: &[u8] = b"\xEF\xBB\xBFid: s7-0\r\nretry: 3000\r\ndata:\r\n\r\n: keep-alive\n\
event: message\nid: s7-1\ndata: {\"a\":1}\n\n\
data: line one\rdata:line two\r\r\
event: endpoint\ndata: /x\nfoo: bar\n\n\
data\n\n\
event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"\xC3\xA9\"}}\n\n\
data: unterminated";

    fn expected() -> Vec<Event> {
        vec![
            ev("message", "", Some("s7-0")),
            ev("message", "{\"a\":1}", Some("s7-1")),
            ev("message", "line one\nline two", Some("s7-1")),
            ev("endpoint", "/x", Some("s7-1")),
            ev("message", "", Some("s7-1")),
            ev(
                "message",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"é\"}}",
                Some("s7-1"),
            ),
        ]
    }

    #[test]
    fn whole_stream() {
        assert_eq!(parse_whole(STREAM), expected());
        let mut p = Parser::new();
        p.feed(STREAM, &mut Vec::new());
        assert_eq!(p.retry_ms(), Some(3000));
    }

    #[test]
    fn every_split_and_every_prefix() {
        let want = expected();
        for cut in 0..=STREAM.len() {
            let mut p = Parser::new();
            let mut out = Vec::new();
            p.feed(&STREAM[..cut], &mut out);
            // every prefix yields a prefix of the events
            assert_eq!(out, want[..out.len()], "prefix {cut}");
            p.feed(&STREAM[cut..], &mut out);
            assert_eq!(out, want, "split at {cut}");
        }
        // three-way splits
        for a in 0..=STREAM.len() {
            for b in (a..=STREAM.len()).step_by(7) {
                let mut p = Parser::new();
                let mut out = Vec::new();
                for part in [&STREAM[..a], &STREAM[a..b], &STREAM[b..]] {
                    p.feed(part, &mut out);
                }
                assert_eq!(out, want, "split at {a},{b}");
            }
        }
        // one byte at a time
        let mut p = Parser::new();
        let mut out = Vec::new();
        for b in STREAM {
            p.feed(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(out, want);
    }

    #[test]
    fn line_end_table() {
        let table: &[(&[u8], &[&str])] = &[
            (b"data: a\n\n", &["a"]),
            (b"data: a\r\n\r\n", &["a"]),
            (b"data: a\r\r", &["a"]),
            (b"data: a\r\n\ndata: b\n\r", &["a", "b"]),
            (b"data:  two spaces\n\n", &[" two spaces"]),
            (b"data:a\ndata:\ndata:b\n\n", &["a\n\nb"]),
            (b":only a comment\n\n", &[]),
            (b"event: x\n\n", &[]), // no data: nothing dispatched
            (b"retry: soon\ndata: r\n\n", &["r"]),
            (b"data: a\r\n\n", &["a"]),
        ];
        for (input, want) in table {
            let got: Vec<String> = parse_whole(input).into_iter().map(|e| e.data).collect();
            assert_eq!(got, *want, "{:?}", String::from_utf8_lossy(input));
        }
    }
}
