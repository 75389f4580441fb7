//! The audit trail's rows and their hash chain (pure; the store appends and reads).

use serde::Serialize;
use sha2::{Digest, Sha256};

/// One audit event as the caller describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Event {
    pub kind: String,
    pub subject: String,
    pub arg_digest: Option<String>,
    pub outcome: String,
    pub duration_ms: Option<i64>,
    pub size: Option<i64>,
    pub detail: Option<String>,
}

impl Event {
    pub fn new(kind: &str, subject: &str, outcome: &str) -> Event {
        Event {
            kind: kind.into(),
            subject: subject.into(),
            outcome: outcome.into(),
            ..Event::default()
        }
    }
}

/// A stored audit row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    pub id: i64,
    /// Milliseconds since the Unix epoch.
    pub time: i64,
    #[serde(flatten)]
    pub event: Event,
    pub hash: String,
}

/// The hash of a row: sha256 over the previous row's hash and every field, each field
/// tagged and length-prefixed so no two different rows encode alike.
pub fn chain_hash(prev: &str, id: i64, time: i64, e: &Event) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: Option<&[u8]>| match bytes {
        None => h.update([0u8]),
        Some(b) => {
            h.update([1u8]);
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        }
    };
    let num = |v: Option<i64>| v.map(i64::to_le_bytes);
    field(Some(prev.as_bytes()));
    field(Some(&id.to_le_bytes()));
    field(Some(&time.to_le_bytes()));
    field(Some(e.kind.as_bytes()));
    field(Some(e.subject.as_bytes()));
    field(e.arg_digest.as_deref().map(str::as_bytes));
    field(Some(e.outcome.as_bytes()));
    field(num(e.duration_ms).as_ref().map(|b| &b[..]));
    field(num(e.size).as_ref().map(|b| &b[..]));
    field(e.detail.as_deref().map(str::as_bytes));
    crate::entropy::hex(&h.finalize())
}

/// Check a chain read in id order: the id of the first row whose hash does not follow.
pub fn first_break(rows: &[Row]) -> Option<i64> {
    let mut prev = String::new();
    for r in rows {
        if chain_hash(&prev, r.id, r.time, &r.event) != r.hash {
            return Some(r.id);
        }
        prev.clone_from(&r.hash);
    }
    None
}

/// A short digest of tool arguments for the trail (never the arguments themselves).
pub fn digest(args: &[u8]) -> String {
    crate::entropy::hex(&Sha256::digest(args)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut prev = String::new();
        for id in 1..=n {
            let event = Event::new("test", &format!("s{id}"), "ok");
            let hash = chain_hash(&prev, id, 1000 + id, &event);
            prev.clone_from(&hash);
            rows.push(Row {
                id,
                time: 1000 + id,
                event,
                hash,
            });
        }
        rows
    }

    #[test]
    fn intact_chain_verifies() {
        assert_eq!(first_break(&chain(5)), None);
        assert_eq!(first_break(&[]), None);
    }

    #[test]
    fn any_edit_breaks_the_chain() {
        let edits: &[fn(&mut Row)] = &[
            |r| r.event.outcome = "denied".into(),
            |r| r.event.subject.push('x'),
            |r| r.time += 1,
            |r| r.event.size = Some(1),
            |r| r.event.detail = Some(String::new()),
            |r| r.event.arg_digest = Some("-".into()),
        ];
        for (i, edit) in edits.iter().enumerate() {
            let mut rows = chain(4);
            edit(&mut rows[2]);
            assert_eq!(first_break(&rows), Some(3), "edit {i}");
        }
        // a deleted row breaks at the row after it
        let mut rows = chain(4);
        rows.remove(1);
        assert_eq!(first_break(&rows), Some(3));
    }
}
