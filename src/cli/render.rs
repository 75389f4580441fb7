//! Plain-text output: aligned tables, times, and writes that treat a closed pipe as done.

use std::io::Write;

/// Write to stdout; a closed pipe (`tai ... | head`) is not an error.
pub fn out(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Whether a command already printed its JSON answer (so a failure adds no second one).
static JSON_PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Print one JSON answer (pretty, one object per run).
pub fn out_json(v: &serde_json::Value) -> std::io::Result<()> {
    JSON_PRINTED.store(true, std::sync::atomic::Ordering::SeqCst);
    out(&crate::sanitize::json_text(&format!("{v:#}\n")))
}

pub fn json_printed() -> bool {
    JSON_PRINTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Rows under a header, columns padded to their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Cells hold untrusted text (tool names, audit details): one escaped line each.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| crate::sanitize::line(c)).collect())
        .collect();
    let rows = rows.as_slice();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            l.push_str(cell);
            let pad = widths[i].saturating_sub(cell.chars().count());
            l.extend(std::iter::repeat_n(' ', pad));
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    s
}

/// `YYYY-MM-DDTHH:MM:SSZ` for milliseconds since the epoch (UTC, proleptic Gregorian).
pub fn iso8601(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_796_222_400_123), "2026-12-02T14:40:00Z");
        assert_eq!(iso8601(-1000), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn tables_align() {
        let t = table(
            &["NAME", "X"],
            &[
                vec!["a".into(), "1".into()],
                vec!["long-name".into(), "".into()],
            ],
        );
        assert_eq!(t, "NAME       X\na          1\nlong-name\n");
    }
}
