//! The audit trail's append path: a journal beside the vault (`vault.db-audit`), one
//! JSON line per row, folded into the `audit` table in batches.
//!
//! Why: a served call appends one row before its result leaves ("no audit row, no
//! result"), and an SQLite commit per row (write lock, WAL frames, index) was most of a
//! served call's CPU. A line written with one `pwrite(2)` is as durable as a WAL commit
//! under `synchronous = NORMAL` — in the file before the result leaves, so a crash of
//! tai loses nothing, a power loss may lose the newest lines — at a fraction of the cost.
//!
//! The rows are the same rows, chained (`audit::link`) to the previous row, the
//! journal's or the table's. The chain's authenticated head lives in the journal's first
//! `HEADER_LEN` bytes, overwritten in place after each row that moves it (none moves it
//! while a sealed vault is locked, as before). Rows are only ever added after it, so
//! removing the newest lines leaves a head that covers more rows than remain: a
//! truncation `verify` reports, as when the head moved in `meta` with every row. Every
//! tai process sharing the vault appends under one exclusive `flock` on the journal,
//! reading the chain's tail — and whether the seal is on — from the journal's last line;
//! only an empty journal sends it to the table and `meta`. (The seal changes only under
//! the same lock and with the journal folded empty, so a row in the journal was appended
//! under the seal state of now.)
//!
//! A fold (when the journal passes `AUDIT_JOURNAL_FOLD_BYTES`, before anything reads the
//! trail, before the seal changes, and when a process that appended closes its vault)
//! moves the lines into the table and the head into `meta` in one transaction, under the
//! same lock, then empties the journal; lines the table already holds (a fold that
//! stopped between its commit and the truncation) are skipped, when the table's row
//! under that id has the same hash (another is an older journal put back: damage). A
//! line cut short by a crash mid-write is the row of a result that never left: it is
//! dropped. (A crash between a row's write and its head's leaves that row past the
//! head; the next head covers it.) A head that does not cover the tail (`head_admits`)
//! is a cut: the store records it in a row before the next, never covering it with a
//! new head. Any other line that does not parse, or a journal that does not continue
//! the table, stops appends and reads alike (fail closed) with what to do.
//!
//! Lock order: the journal's lock, then SQLite's write lock; nothing takes them the
//! other way round.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use super::audit::{Event, Head, Row};
use super::{Error, Result};
use crate::deadline::Deadline;
use crate::limits::{AUDIT_JOURNAL_FOLD_BYTES, AUDIT_JOURNAL_MAX_BYTES, VAULT_BUSY_TIMEOUT};

/// The head's slot at the start of a journal: `{"head":"v1:COUNT:LAST:MAC"}` (or `null`)
/// padded with spaces to a line of this many bytes. A head is at most ~170 bytes.
const HEADER_LEN: u64 = 256;

/// A row, and whether the seal was on when it was appended.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Entry {
    pub row: Row,
    pub sealed: bool,
}

/// One journal line, flat: the row's columns and the seal state. `S` is `&str` when
/// written (borrowed from the entry, no copies) and `String` when read.
#[derive(Serialize, Deserialize)]
struct Line<S> {
    id: i64,
    time: i64,
    kind: S,
    subject: S,
    arg_digest: Option<S>,
    outcome: S,
    duration: Option<i64>,
    size: Option<i64>,
    detail: Option<S>,
    hash: S,
    chain: i64,
    sealed: bool,
}

impl Entry {
    fn line(&self) -> Line<&str> {
        let (r, e) = (&self.row, &self.row.event);
        Line {
            id: r.id,
            time: r.time,
            kind: &e.kind,
            subject: &e.subject,
            arg_digest: e.arg_digest.as_deref(),
            outcome: &e.outcome,
            duration: e.duration_ms,
            size: e.size,
            detail: e.detail.as_deref(),
            hash: &r.hash,
            chain: r.chain,
            sealed: self.sealed,
        }
    }
}

impl From<Line<String>> for Entry {
    fn from(l: Line<String>) -> Entry {
        Entry {
            row: Row {
                id: l.id,
                time: l.time,
                event: Event {
                    kind: l.kind,
                    subject: l.subject,
                    arg_digest: l.arg_digest,
                    outcome: l.outcome,
                    duration_ms: l.duration,
                    size: l.size,
                    detail: l.detail,
                },
                hash: l.hash,
                chain: l.chain,
            },
            sealed: l.sealed,
        }
    }
}

/// The chain's tail as the last line states it (the rest of the line is not read).
#[derive(Deserialize)]
struct TipLine {
    id: i64,
    hash: String,
    chain: i64,
    sealed: bool,
}

/// The chain's tail: the last row's id, hash and chain, and whether the seal is on.
#[derive(Debug, PartialEq)]
pub(super) struct Tail {
    pub id: i64,
    pub hash: String,
    pub chain: i64,
    pub sealed: bool,
}

/// What a head says of the tail a new row would follow.
#[derive(Debug, PartialEq)]
pub(super) enum Admit {
    /// It covers the tail (or rows past it: a crash between a row and its head, or rows
    /// a locked vault appended, which `verify` judges).
    Covered,
    /// There is none; the caller judges (a crash before a journal's first head was
    /// written, or rows a locked vault appended).
    NoHead,
    /// It does not authenticate under the key: written without it, or the key is stale.
    Unauthentic,
    /// It does not cover the tail: the newest rows were cut (why).
    Gap(String),
}

/// Whether a row chained under `key` may follow `tail`, given the head that covers it
/// (`head`: the journal's slot, or `meta`'s when the tail is the table's). Every row
/// but one a locked vault appends moves the head, so a head that does not cover the
/// tail means the newest rows were cut, and a new head over them would hide the cut.
pub(super) fn head_admits(head: Option<&str>, tail: &Tail, key: &[u8]) -> Admit {
    let Some(text) = head else {
        return Admit::NoHead;
    };
    let Some(head) = Head::decode(text) else {
        return Admit::Gap("head is malformed".into());
    };
    if !head.authentic(key) {
        return Admit::Unauthentic;
    }
    if head.count > tail.id {
        return Admit::Gap(format!(
            "head covers row {} but its last row is {}: the newest rows were removed",
            head.count, tail.id
        ));
    }
    if head.count == tail.id && head.last != tail.hash {
        return Admit::Gap(format!(
            "last row {} is not the row its head covers: it was replaced",
            tail.id
        ));
    }
    Admit::Covered
}

/// What a journal holds: the head its slot states and its rows.
#[derive(Debug, PartialEq)]
pub(super) struct Contents {
    pub head: Option<String>,
    pub entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Header<S> {
    head: Option<S>,
}

/// The head's slot for `head`.
pub(super) fn header(head: Option<&str>) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = serde_json::to_vec(&Header { head }).map_err(|e| e.to_string())?;
    if bytes.len() as u64 >= HEADER_LEN {
        return Err(format!(
            "a head of {} bytes does not fit its slot",
            bytes.len()
        ));
    }
    bytes.resize(HEADER_LEN as usize - 1, b' ');
    bytes.push(b'\n');
    Ok(bytes)
}

/// Read a whole journal. Empty: nothing. Otherwise the head's slot (all zero bytes: the
/// first row's head was never written, so none), then the rows. Bytes after the last
/// newline are a line cut short by a crash mid-write (its result never left): not an
/// entry. Anything else that does not parse is damage: an error naming it.
pub(super) fn parse(bytes: &[u8]) -> std::result::Result<Contents, String> {
    if bytes.is_empty() {
        return Ok(Contents {
            head: None,
            entries: Vec::new(),
        });
    }
    let Some((slot, rows)) = bytes.split_at_checked(HEADER_LEN as usize) else {
        return Err("it is shorter than the head's slot".into());
    };
    let head = parse_slot(slot)?;
    let whole = rows.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let entries = rows[..whole]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_slice::<Line<String>>(l)
                .map(Entry::from)
                .map_err(|e| format!("row line {} does not parse ({e})", i + 1))
        })
        .collect::<std::result::Result<_, _>>()?;
    Ok(Contents { head, entries })
}

/// The head a slot states: all zero bytes (the first row's head never written) is none.
fn parse_slot(slot: &[u8]) -> std::result::Result<Option<String>, String> {
    if slot.iter().all(|&b| b == 0) {
        return Ok(None);
    }
    serde_json::from_slice::<Header<String>>(slot)
        .map(|h| h.head)
        .map_err(|e| format!("the head's slot does not parse ({e})"))
}

/// Where the last complete line of `bytes` starts and ends, if there is one; `None` when
/// `bytes` holds no newline.
fn last_line(bytes: &[u8]) -> Option<(usize, usize)> {
    let end = bytes.iter().rposition(|&b| b == b'\n')?;
    let start = bytes[..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Some((start, end))
}

/// The chain's tail from one row's line.
fn tip(line: &[u8]) -> std::result::Result<Tail, String> {
    serde_json::from_slice::<TipLine>(line)
        .map(|t| Tail {
            id: t.id,
            hash: t.hash,
            chain: t.chain,
            sealed: t.sealed,
        })
        .map_err(|e| format!("its last line does not parse ({e})"))
}

/// The journal file of one open vault.
pub(super) struct Journal {
    path: PathBuf,
    /// `None` only while the lock holds it (`Flock` owns the file it locks).
    file: Option<File>,
    /// This process appended since its last fold: it folds when its vault closes.
    pub appended: bool,
    /// The row whose head this process wrote last (its id and hash) and the slot's
    /// bytes it wrote: while the slot still holds them and the tail is that row, the
    /// head is known to cover it without parsing or authenticating it.
    pub headed: Option<(i64, String, Vec<u8>)>,
}

/// The journal, locked: the chain cannot move under the holder. Unlocked when dropped.
pub(super) struct Locked<'j> {
    slot: &'j mut Option<File>,
    lock: Option<Flock<File>>,
    path: &'j Path,
    /// The length read as the lock was taken, for the first `len` (nothing has been
    /// written since): one `fstat` an append, not two.
    locked_len: std::cell::Cell<Option<u64>>,
}

/// Open (creating, 0600) the journal at `path`: a symlink or anything but a regular
/// file there is refused.
fn open_file(path: &Path) -> Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(super::io(format!(
            "opening the audit journal {}",
            path.display()
        )))?;
    let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !regular {
        return Err(Error::Invalid(format!(
            "{} is not a regular file; move it aside (tai keeps the audit journal there)",
            path.display()
        )));
    }
    Ok(file)
}

impl Journal {
    /// Whether a journal of `len` bytes has grown enough to fold.
    pub fn wants_fold(len: u64) -> bool {
        len >= AUDIT_JOURNAL_FOLD_BYTES
    }

    /// Open (creating, 0600) the journal of the vault at `vault`. A symlink or anything
    /// but a regular file in its place is refused.
    pub fn open(vault: &Path) -> Result<Journal> {
        let mut name = vault.as_os_str().to_owned();
        name.push("-audit");
        let path = PathBuf::from(name);
        let file = open_file(&path)?;
        Ok(Journal {
            path,
            file: Some(file),
            appended: false,
            headed: None,
        })
    }

    /// Take the journal's exclusive lock, waiting up to the vault's busy timeout for
    /// another tai process to finish its append or fold (Ctrl-C ends the wait).
    pub fn lock(&mut self) -> Result<Locked<'_>> {
        let busy = || Error::Io {
            context: format!("locking the audit journal {}", self.path.display()),
            detail: format!(
                "another tai process held it for {}s; try again",
                VAULT_BUSY_TIMEOUT.as_secs()
            ),
        };
        let deadline = Deadline::after(VAULT_BUSY_TIMEOUT);
        // None only when reopening a removed journal failed: try again.
        let mut file = match self.file.take() {
            Some(file) => file,
            None => open_file(&self.path)?,
        };
        loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                // Removed (or replaced) since it was opened: rows written to it would
                // reach no one. The file at the path is the journal now.
                Ok(lock) => {
                    let meta = lock.metadata().ok();
                    // Removed (or replaced) since it was opened: rows written to it
                    // would reach no one. The file at the path is the journal now.
                    if meta.as_ref().is_some_and(|m| m.nlink() == 0) {
                        drop(lock);
                        if deadline.expired() {
                            return Err(busy());
                        }
                        file = open_file(&self.path)?;
                        continue;
                    }
                    return Ok(Locked {
                        slot: &mut self.file,
                        lock: Some(lock),
                        path: &self.path,
                        locked_len: std::cell::Cell::new(meta.map(|m| m.len())),
                    });
                }
                Err((f, Errno::EWOULDBLOCK | Errno::EINTR))
                    if !deadline.expired() && !crate::sigint::interrupted() =>
                {
                    file = f;
                    crate::clock::sleep(crate::limits::VAULT_LOCK_RETRY);
                }
                Err((f, e)) => {
                    self.file = Some(f);
                    return Err(match e {
                        Errno::EWOULDBLOCK | Errno::EINTR => busy(),
                        e => Error::Io {
                            context: format!("locking the audit journal {}", self.path.display()),
                            detail: e.to_string(),
                        },
                    });
                }
            }
        }
    }
}

impl Locked<'_> {
    fn file(&self) -> Result<&File> {
        self.lock
            .as_deref()
            .ok_or_else(|| Error::Invalid("the audit journal is not open".into()))
    }

    pub fn damaged(&self, why: impl std::fmt::Display) -> Error {
        Error::Invalid(format!(
            "the audit journal {} is damaged: {why}. Nothing more is appended to the trail \
             (and no audited result is returned) until it is moved aside; its rows are then \
             missing from the trail",
            self.path.display()
        ))
    }

    fn len(&self) -> Result<u64> {
        if let Some(len) = self.locked_len.take() {
            return Ok(len);
        }
        self.file()?
            .metadata()
            .map(|m| m.len())
            .map_err(super::io("reading the audit journal's length".into()))
    }

    /// The journal's length and the chain's tail as its last row states it (`None` when
    /// it holds no row). A line cut short at the end is cut off first.
    pub fn tail(&self) -> Result<(u64, Option<Tail>)> {
        let file = self.file()?;
        let len = self.len()?;
        if len == 0 {
            return Ok((0, None));
        }
        if len < HEADER_LEN {
            return Err(self.damaged("it is shorter than the head's slot"));
        }
        // Read backwards from the end, never into the head's slot, until the last
        // complete line is in hand (a row's line is a few hundred bytes).
        let mut chunk = 1024u64;
        loop {
            let from = len.saturating_sub(chunk).max(HEADER_LEN);
            let mut bytes = vec![0; (len - from) as usize];
            file.read_exact_at(&mut bytes, from)
                .map_err(super::io("reading the audit journal".into()))?;
            let at_start = from == HEADER_LEN;
            if bytes.last().is_some_and(|&b| b != b'\n') {
                // A torn last line: its result never left. Cut it off, then look again.
                let keep = match bytes.iter().rposition(|&b| b == b'\n') {
                    Some(i) => Some(from + i as u64 + 1),
                    None if at_start => Some(HEADER_LEN),
                    None => None,
                };
                if let Some(keep) = keep {
                    self.locked_len.set(None);
                    file.set_len(keep).map_err(super::io(
                        "cutting a torn line off the audit journal".into(),
                    ))?;
                    return self.tail();
                }
            }
            match last_line(&bytes) {
                _ if bytes.is_empty() => return Ok((len, None)),
                Some((start, end)) if start > 0 || at_start => {
                    return tip(&bytes[start..end])
                        .map(|t| (len, Some(t)))
                        .map_err(|e| self.damaged(e));
                }
                _ if chunk >= AUDIT_JOURNAL_MAX_BYTES => {
                    return Err(self.damaged("its last line is longer than any row"));
                }
                _ => chunk *= 4,
            }
        }
    }

    /// The head's slot, as bytes.
    pub fn slot(&self) -> Result<[u8; HEADER_LEN as usize]> {
        let mut slot = [0; HEADER_LEN as usize];
        self.file()?
            .read_exact_at(&mut slot, 0)
            .map_err(super::io("reading the audit journal's head".into()))?;
        Ok(slot)
    }

    /// The head `slot` states (`None`: never written, or written by a locked vault).
    pub fn head_in(&self, slot: &[u8]) -> Result<Option<String>> {
        parse_slot(slot).map_err(|e| self.damaged(e))
    }

    /// Write one row's line at the end (`len`, from `tail`), then `head` into its slot
    /// when the row moved it (an empty journal gets its slot either way). The new length.
    pub fn append(&self, entry: &Entry, len: u64, head: Option<&str>) -> Result<u64> {
        let mut line = serde_json::to_vec(&entry.line())
            .map_err(|e| Error::Invalid(format!("encoding an audit row: {e}")))?;
        line.push(b'\n');
        self.locked_len.set(None);
        let file = self.file()?;
        let write = |bytes: &[u8], at: u64| {
            file.write_all_at(bytes, at).map_err(super::io(format!(
                "appending to the audit journal {}",
                self.path.display()
            )))
        };
        let at = len.max(HEADER_LEN);
        // Past the most a fold reads, its rows could never be folded (only moved aside,
        // lost): refuse while they still can be.
        if at + line.len() as u64 > AUDIT_JOURNAL_MAX_BYTES {
            return Err(Error::Invalid(format!(
                "the audit journal {} is full ({at} bytes): its rows could not be folded into \
                 the vault. `tai vault audit` folds them and says what stops it",
                self.path.display()
            )));
        }
        write(&line, at)?;
        if head.is_some() || len < HEADER_LEN {
            write(&header(head).map_err(Error::Invalid)?, 0)?;
        }
        Ok(at + line.len() as u64)
    }

    /// What the journal holds (a torn last line is not a row).
    pub fn contents(&self) -> Result<Contents> {
        let len = self.len()?;
        if len > AUDIT_JOURNAL_MAX_BYTES {
            return Err(self.damaged(format!(
                "it holds {len} bytes, more than the {AUDIT_JOURNAL_MAX_BYTES} a journal reaches"
            )));
        }
        let mut bytes = vec![0; len as usize];
        self.file()?
            .read_exact_at(&mut bytes, 0)
            .map_err(super::io("reading the audit journal".into()))?;
        parse(&bytes).map_err(|e| self.damaged(e))
    }

    /// Empty the journal (its rows are in the table).
    pub fn clear(&self) -> Result<()> {
        self.locked_len.set(None);
        self.file()?
            .set_len(0)
            .map_err(super::io("emptying the audit journal".into()))
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            // Unlocking fails only on a descriptor that is not open; the lock then ends
            // with it.
            if let Ok(file) = lock.unlock() {
                *self.slot = Some(file);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, sealed: bool) -> Entry {
        Entry {
            row: Row {
                id,
                time: 1_700_000_000_000 + id,
                event: Event {
                    kind: "tool-call".into(),
                    subject: format!("list_dir {id} \"quoted\"\nnewline"),
                    arg_digest: Some("d".into()),
                    outcome: "ok".into(),
                    duration_ms: Some(1),
                    size: None,
                    detail: None,
                },
                hash: format!("h{id}"),
                chain: 1,
            },
            sealed,
        }
    }

    fn journal(head: Option<&str>, entries: &[Entry]) -> Vec<u8> {
        let mut out = header(head).unwrap();
        for e in entries {
            out.extend(serde_json::to_vec(&e.line()).unwrap());
            out.push(b'\n');
        }
        out
    }

    #[test]
    fn a_journal_round_trips_and_a_torn_tail_at_every_split_is_not_a_row() {
        let all = [entry(1, false), entry(2, true), entry(3, false)];
        let head = "v1:3:h3:6d6163";
        let bytes = journal(Some(head), &all);
        assert_eq!(
            parse(&bytes).unwrap(),
            Contents {
                head: Some(head.into()),
                entries: all.to_vec()
            }
        );
        // Cut anywhere after the slot: the complete lines before the cut are the rows.
        for cut in HEADER_LEN as usize..=bytes.len() {
            let c = parse(&bytes[..cut]).unwrap();
            let complete = bytes[HEADER_LEN as usize..cut]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            assert_eq!(c.entries[..], all[..complete], "cut at {cut}");
            assert_eq!(c.head.as_deref(), Some(head));
        }
        // Inside the slot: damage, not a shorter journal.
        for cut in 1..HEADER_LEN as usize {
            assert!(parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert_eq!(parse(b"").unwrap().entries, []);
    }

    #[test]
    fn a_slot_never_written_holds_no_head_and_an_unreadable_one_is_damage() {
        let mut bytes = journal(None, &[entry(1, false)]);
        bytes[..HEADER_LEN as usize].fill(0);
        assert_eq!(parse(&bytes).unwrap().head, None);
        assert_eq!(parse(&bytes).unwrap().entries.len(), 1);
        bytes[..8].copy_from_slice(b"{\"head\":");
        assert!(parse(&bytes).unwrap_err().starts_with("the head's slot"));
        assert!(header(Some(&"x".repeat(HEADER_LEN as usize))).is_err());
    }

    #[test]
    fn a_complete_row_line_that_does_not_parse_is_damage_naming_it() {
        for line in [&b"{\"id\":1}\n"[..], b"not json\n", b"{}\n"] {
            let mut bytes = journal(None, &[]);
            bytes.extend(line);
            let err = parse(&bytes).unwrap_err();
            assert!(err.starts_with("row line 1"), "{err}");
        }
        let mut bytes = journal(None, &[entry(1, false)]);
        bytes.extend(b"{\"id\":2}\n");
        assert!(parse(&bytes).unwrap_err().starts_with("row line 2"));
    }

    #[test]
    fn the_last_line_is_found_whatever_precedes_it() {
        for (bytes, want) in [
            (&b""[..], None),
            (b"abc", None),
            (b"abc\n", Some((0, 3))),
            (b"a\nbc\n", Some((2, 4))),
            (b"a\nbc\ntorn", Some((2, 4))),
            (b"\n", Some((0, 0))),
        ] {
            assert_eq!(
                last_line(bytes),
                want,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn appends_move_the_head_in_place_exclude_other_lockers_and_cut_a_torn_line() {
        let dir = std::env::temp_dir().join(format!("tai-journal-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let vault = dir.join("vault.db");
        let path = dir.join("vault.db-audit");
        let mut a = Journal::open(&vault).unwrap();
        let mut b = Journal::open(&vault).unwrap();
        {
            let held = a.lock().unwrap();
            assert_eq!(held.tail().unwrap(), (0, None));
            let len = held.append(&entry(1, false), 0, Some("v1:1:h1:m")).unwrap();
            let len = held
                .append(&entry(2, false), len, Some("v1:2:h2:m"))
                .unwrap();
            // A locked append (sealed, no key) leaves the head alone.
            let len = held.append(&entry(3, true), len, None).unwrap();
            let (at, tail) = held.tail().unwrap();
            assert_eq!(at, len);
            assert_eq!(
                tail,
                Some(Tail {
                    id: 3,
                    hash: "h3".into(),
                    chain: 1,
                    sealed: true,
                })
            );
            let c = held.contents().unwrap();
            assert_eq!(c.head.as_deref(), Some("v1:2:h2:m"));
            assert_eq!(c.entries.len(), 3);
            // A second open file description cannot take the lock meanwhile.
            assert!(matches!(
                Flock::lock(File::open(&path).unwrap(), FlockArg::LockExclusiveNonblock),
                Err((_, Errno::EWOULDBLOCK))
            ));
        }
        // A crash mid-write leaves a torn line: the tail is the row before it, and the
        // torn bytes are cut off so the next line starts clean.
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(b"{\"id\":4,\"time\":", len)
            .unwrap();
        let held = b.lock().unwrap();
        let (len, tail) = held.tail().unwrap();
        assert_eq!(tail.unwrap().id, 3);
        held.append(&entry(4, false), len, Some("v1:4:h4:m"))
            .unwrap();
        let c = held.contents().unwrap();
        assert_eq!((c.head.as_deref(), c.entries.len()), (Some("v1:4:h4:m"), 4));
        held.clear().unwrap();
        assert_eq!(held.tail().unwrap(), (0, None));
        // The first row of an empty journal written, its head not (a crash between):
        // the slot is a hole of zeros, the row is read, no head.
        let len = held.append(&entry(5, false), 0, None).unwrap();
        assert!(len > HEADER_LEN);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(&[0; HEADER_LEN as usize], 0)
            .unwrap();
        assert_eq!(held.contents().unwrap().head, None);
        assert_eq!(held.tail().unwrap().1.unwrap().id, 5);
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_head_admits_only_a_tail_it_covers_under_the_key() {
        let key = b"the chain's key";
        let tail = |id: i64, hash: &str| Tail {
            id,
            hash: hash.into(),
            chain: 2,
            sealed: true,
        };
        let head = |k: &[u8], count, last| Some(Head::new(k, count, last).encode());
        let gap = |why: &str| Admit::Gap(why.into());
        let cases: &[(Option<String>, Tail, Admit)] = &[
            (None, tail(3, "h3"), Admit::NoHead),
            (head(key, 3, "h3"), tail(3, "h3"), Admit::Covered),
            // Rows past the head: a crash before its write, or a locked vault's rows.
            (head(key, 2, "h2"), tail(3, "h3"), Admit::Covered),
            (
                head(key, 4, "h4"),
                tail(3, "h3"),
                gap("head covers row 4 but its last row is 3: the newest rows were removed"),
            ),
            (
                head(key, 3, "h3"),
                tail(3, "other"),
                gap("last row 3 is not the row its head covers: it was replaced"),
            ),
            (
                head(b"another key", 3, "h3"),
                tail(3, "h3"),
                Admit::Unauthentic,
            ),
            (
                Some("v1:3:h3".into()),
                tail(3, "h3"),
                gap("head is malformed"),
            ),
        ];
        for (h, t, want) in cases {
            assert_eq!(&head_admits(h.as_deref(), t, key), want, "{h:?} {t:?}");
        }
    }

    #[test]
    fn a_fifo_or_folder_in_the_journals_place_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("tai-journal-odd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let vault = dir.join("vault.db");
        nix::unistd::mkfifo(&dir.join("vault.db-audit"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = Journal::open(&vault).err().unwrap().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_file(dir.join("vault.db-audit")).unwrap();
        std::fs::create_dir(dir.join("vault.db-audit")).unwrap();
        assert!(Journal::open(&vault).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_huge_sparse_journal_is_damage_read_in_bounded_memory() {
        let dir = std::env::temp_dir().join(format!("tai-journal-huge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let vault = dir.join("vault.db");
        let mut j = Journal::open(&vault).unwrap();
        {
            let held = j.lock().unwrap();
            held.append(&entry(1, false), 0, Some("v1:1:h1:m")).unwrap();
        }
        // Grown to 64 GiB of zeros after its row (sparse: no disk), then a row at the end.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("vault.db-audit"))
            .unwrap();
        file.set_len(64 << 30).unwrap();
        let held = j.lock().unwrap();
        let err = held.tail().unwrap_err().to_string();
        assert!(err.contains("longer than any row"), "{err}");
        let err = held.contents().unwrap_err().to_string();
        assert!(err.contains("more than"), "{err}");
        drop(held);
        let mut line = serde_json::to_vec(&entry(2, false).line()).unwrap();
        line.push(b'\n');
        file.write_all_at(&line, 64 << 30).unwrap();
        let held = j.lock().unwrap();
        // A row after the zeros: still no line before it, still damage.
        assert!(held.tail().is_err());
        assert!(held.contents().is_err());
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_append_that_would_pass_what_a_fold_reads_is_refused() {
        let dir = std::env::temp_dir().join(format!("tai-journal-full-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut j = Journal::open(&dir.join("vault.db")).unwrap();
        let held = j.lock().unwrap();
        let near = AUDIT_JOURNAL_MAX_BYTES - 100;
        let err = held.append(&entry(1, false), near, None).unwrap_err();
        assert!(err.to_string().contains("is full"), "{err}");
        assert_eq!(held.len().unwrap(), 0, "nothing written");
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_in_the_journals_place_is_refused() {
        let dir = std::env::temp_dir().join(format!("tai-journal-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("/dev/null", dir.join("vault.db-audit")).unwrap();
        assert!(Journal::open(&dir.join("vault.db")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
