//! Newline-delimited framing for stdio (pure): bytes in any split, complete lines out.
//!
//! A trailing CR is trimmed (servers on Windows); a line longer than the cap is dropped
//! whole and reported, never buffered without bound.

/// One framed line, or a line that was too long to keep.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Line(Vec<u8>),
    TooLong(usize),
}

pub struct LineSplitter {
    buf: Vec<u8>,
    max: usize,
    /// Bytes of the current line dropped because it went over `max`.
    overflow: usize,
}

impl LineSplitter {
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter {
            buf: Vec::new(),
            max,
            overflow: 0,
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Frame>) {
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            self.push(&bytes[..nl]);
            bytes = &bytes[nl + 1..];
            if self.overflow > 0 {
                out.push(Frame::TooLong(self.overflow + self.buf.len()));
                self.overflow = 0;
                self.buf.clear();
                continue;
            }
            let mut line = std::mem::take(&mut self.buf);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                out.push(Frame::Line(line));
            }
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overflow > 0 || self.buf.len() + bytes.len() > self.max {
            self.overflow += self.buf.len() + bytes.len();
            self.buf.clear();
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &[u8] = b"{\"a\":1}\n\nbanner text\r\n{\"b\":\"\xC3\xA9\"}\r\n   \n0123456789ABCDEF\n{\"c\":3}\npartial";

    fn want() -> Vec<Frame> {
        vec![
            Frame::Line(b"{\"a\":1}".to_vec()),
            Frame::Line(b"banner text".to_vec()),
            Frame::Line("{\"b\":\"é\"}".as_bytes().to_vec()),
            Frame::TooLong(16),
            Frame::Line(b"{\"c\":3}".to_vec()),
        ]
    }

    #[test]
    fn every_split() {
        for cut in 0..=INPUT.len() {
            let mut s = LineSplitter::new(15);
            let mut out = Vec::new();
            s.feed(&INPUT[..cut], &mut out);
            assert_eq!(out[..], want()[..out.len()], "prefix {cut}");
            s.feed(&INPUT[cut..], &mut out);
            assert_eq!(out, want(), "split at {cut}");
        }
        let mut s = LineSplitter::new(15);
        let mut out = Vec::new();
        for b in INPUT {
            s.feed(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(out, want());
    }
}
