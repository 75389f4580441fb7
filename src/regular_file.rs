//! Regular files only: every file tai reads or writes on behalf of a model, a network
//! client or a pasted config (the file tools, a project's MCP configs, an `envFile`) is
//! opened without blocking and the OPENED descriptor checked to be a regular file, and
//! reads are bounded. A device (`/dev/zero`) never ends and a FIFO or socket waits on
//! another process: either would stall the one loop that serves every client, or the CLI.

/// Flags every file tool opens with: `O_NONBLOCK` so a FIFO or device never blocks the
/// open (a FIFO without a reader fails for a write at once with ENXIO), `O_NOCTTY` so a
/// terminal never becomes ours. On a regular file neither changes a read or a write.
fn open_flags() -> i32 {
    (nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY).bits()
}

/// Why a file tool refuses what `path` opened to: anything but a regular file. A device
/// (`/dev/zero`) never ends, a FIFO or socket waits on another process; both would stall
/// the one loop that serves every client.
fn not_regular(path: &str, meta: &std::fs::Metadata) -> Option<String> {
    if meta.is_dir() {
        return Some(format!("{path} is a directory (use list_dir)"));
    }
    (!meta.is_file()).then(|| not_a_regular_file(path))
}

fn not_a_regular_file(path: &str) -> String {
    format!(
        "{path} is not a regular file (a device, FIFO or socket); tai reads and writes regular files only"
    )
}

fn over_limit(path: &str, len: u64, max: u64) -> String {
    format!(
        "{path} is {len} bytes, over the {} MB tai reads",
        max / 1_000_000
    )
}

/// Reads `path` as UTF-8 text: opened without blocking, the OPENED descriptor checked to
/// be a regular file (no path-then-open race), at most `max` bytes read even when
/// the file grows after the check.
pub fn read_text(path: &str, max: u64) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(open_flags())
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
    if let Some(refusal) = not_regular(path, &meta) {
        return Err(refusal);
    }
    if meta.len() > max {
        return Err(over_limit(path, meta.len(), max));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(over_limit(path, bytes.len() as u64, max));
    }
    String::from_utf8(bytes).map_err(|_| format!("{path} is not UTF-8 text"))
}

/// Replaces `path`'s content with `content` (created if missing): opened without blocking
/// and without truncating, the opened descriptor checked to be a regular file BEFORE the
/// file is truncated or a byte is written.
pub fn write_text(path: &str, content: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(open_flags())
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(code) if code == nix::errno::Errno::ENXIO as i32 => not_a_regular_file(path),
            _ => format!("{path}: {e}"),
        })?;
    let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
    if let Some(refusal) = not_regular(path, &meta) {
        return Err(refusal);
    }
    file.set_len(0).map_err(|e| format!("{path}: {e}"))?;
    file.write_all(content.as_bytes())
        .map_err(|e| format!("{path}: {e}"))
}
