//! The audit trail's rows, their keyed chain and its authenticated head (pure; the store
//! appends and reads).
//!
//! Each row's hash is an HMAC-SHA256 over the previous row's hash and every field. While
//! the seal is on, the key is derived from the sealed key (`SealKey::audit_key`), so
//! nobody holding only the file can recompute the chain. Without the seal the key is a
//! public constant: the chain then detects edits, not a forger who has the file. The
//! chain's head (the last row's id and hash) is kept in `meta`, MACed with the same key,
//! so removing the newest rows is detected too (and an append that finds them removed
//! records it in a `GAP_KIND` row, which `verify` names). Rows appended while a sealed
//! vault was locked are chained with the public key and leave the head alone; `verify`
//! reports them. Rows from before the keyed chain (v1: plain SHA-256) verify as such,
//! and only before every keyed row.

use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The key of an unsealed vault's chain: public, so it detects edits, not forgers.
pub const PUBLIC_KEY: &[u8] = b"tai audit chain: public key (the vault is not sealed)";

/// How a row was chained (the `chain` column).
pub const CHAIN_LEGACY: i64 = 0;
pub const CHAIN_PUBLIC: i64 = 1;
pub const CHAIN_SEALED: i64 = 2;

/// The kind of the row tai appends when it finds the newest rows cut away (the head
/// covering more than remains): the cut is recorded, never covered by a new head, and
/// `verify` names the row.
pub const GAP_KIND: &str = "audit-gap";

/// The longest subject or detail a row keeps, in bytes (a tool name or reason longer
/// than this is a hostile peer's: kept whole, one row would outgrow the journal).
pub const FIELD_MAX: usize = 4096;

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
    pub fn new(kind: &str, subject: &str, outcome: Outcome) -> Event {
        Event {
            kind: kind.into(),
            subject: subject.into(),
            outcome: outcome.as_str().into(),
            ..Event::default()
        }
    }
}

/// How an audited event ended. Every row tai writes names one of these; the strings
/// ([`Outcome::as_str`]) are the audit trail's wording, which rows, `tai vault audit`
/// and the docs share, so they never change. (A row read back keeps its text: older
/// versions wrote the same strings, and a row is evidence, not input.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    // A tool call through the gate: it ran…
    /// It ran and succeeded.
    Ok,
    /// It ran and the tool reported an error.
    ToolError,
    /// It failed on the wire (or the vault failed around it).
    ProtocolError,
    /// It outlived its deadline.
    Timeout,
    /// Ctrl-C (or a served turn's deadline) stopped it.
    Interrupted,
    // …or the gate refused it.
    /// A person (or the approval policy) said no; also a consent refused.
    Denied,
    /// The server is not enabled for the profile.
    NotEnabled,
    /// The tool is not in the server's stored list.
    NotListed,
    /// An allow/deny list, or a protected path, refuses it.
    NotAllowed,
    /// The tool changed since it was pinned (or its result could not be redacted).
    Withheld,
    /// The server could not list its tools for the pin check.
    Unverified,
    /// Not on the served surface.
    NotServed,
    UnknownTool,
    UnknownServer,
    /// The arguments do not match the tool's schema.
    BadArguments,
    /// The row could not be written, so the result was not returned.
    AuditFailed,
    // Registration, consent and lasting trust.
    Approved,
    Stored,
    VerifyFailed,
    Trusted,
    Untrusted,
    Enabled,
    Disabled,
    Reconnecting,
    // A tool in a fresh listing, against its pin.
    Added,
    Changed,
    // OAuth.
    TokensStored,
    TokensDropped,
    Login,
    Logout,
    // Secrets, the seal and profiles.
    Set,
    Removed,
    Sealed,
    Unsealed,
    Used,
}

impl Outcome {
    /// The audit trail's word for it (exactly what rows have always said).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool-error",
            Outcome::ProtocolError => "protocol-error",
            Outcome::Timeout => "timeout",
            Outcome::Interrupted => "interrupted",
            Outcome::Denied => "denied",
            Outcome::NotEnabled => "not-enabled",
            Outcome::NotListed => "not-listed",
            Outcome::NotAllowed => "not-allowed",
            Outcome::Withheld => "withheld",
            Outcome::Unverified => "unverified",
            Outcome::NotServed => "not-served",
            Outcome::UnknownTool => "unknown-tool",
            Outcome::UnknownServer => "unknown-server",
            Outcome::BadArguments => "bad-arguments",
            Outcome::AuditFailed => "audit-failed",
            Outcome::Approved => "approved",
            Outcome::Stored => "stored",
            Outcome::VerifyFailed => "verify-failed",
            Outcome::Trusted => "trusted",
            Outcome::Untrusted => "untrusted",
            Outcome::Enabled => "enabled",
            Outcome::Disabled => "disabled",
            Outcome::Reconnecting => "reconnecting",
            Outcome::Added => "added",
            Outcome::Changed => "changed",
            Outcome::TokensStored => "tokens-stored",
            Outcome::TokensDropped => "tokens-dropped",
            Outcome::Login => "login",
            Outcome::Logout => "logout",
            Outcome::Set => "set",
            Outcome::Removed => "removed",
            Outcome::Sealed => "sealed",
            Outcome::Unsealed => "unsealed",
            Outcome::Used => "used",
        }
    }

    /// A tool call that ran and answered (succeeded or reported its own error): its
    /// result is redacted, spilled and returned, rather than replaced by a refusal.
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Ok | Outcome::ToolError)
    }

    /// A tool call's outcome from its output: the tool reported an error or not.
    pub fn of_call(is_error: bool) -> Outcome {
        if is_error {
            Outcome::ToolError
        } else {
            Outcome::Ok
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Compared by the trail's word, as a row read back would be.
impl PartialEq<&str> for Outcome {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
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
    /// `CHAIN_LEGACY`, `CHAIN_PUBLIC` or `CHAIN_SEALED`.
    pub chain: i64,
}

/// `text` cut to at most `FIELD_MAX` bytes (on a character's boundary), saying how
/// long it was; shorter text unchanged.
pub fn clip(text: String) -> String {
    if text.len() <= FIELD_MAX {
        return text;
    }
    let note = format!("… (clipped: {} bytes)", text.len());
    let mut end = FIELD_MAX - note.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &text[..end])
}

/// HMAC-SHA256 of `parts` under `key`.
pub fn mac_bytes(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC takes a key of any length, so this never fails; were it to, the key still
    // decides the result.
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        let mut h = Sha256::new();
        h.update(key);
        parts.iter().for_each(|p| h.update(p));
        return h.finalize().into();
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// Every field of a row, tagged and length-prefixed so no two different rows encode alike.
fn encode(prev: &str, id: i64, time: i64, e: &Event) -> Vec<u8> {
    let mut h = Vec::new();
    let mut field = |bytes: Option<&[u8]>| match bytes {
        None => h.push(0u8),
        Some(b) => {
            h.push(1u8);
            h.extend_from_slice(&(b.len() as u64).to_le_bytes());
            h.extend_from_slice(b);
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
    h
}

/// The v1 (unkeyed) hash of a row: sha256 over the previous hash and every field.
pub fn chain_hash(prev: &str, id: i64, time: i64, e: &Event) -> String {
    crate::entropy::hex(&Sha256::digest(encode(prev, id, time, e)))
}

/// The keyed hash of a row chained with `chain` under `key`.
pub fn link(key: &[u8], chain: i64, prev: &str, id: i64, time: i64, e: &Event) -> String {
    let body = encode(prev, id, time, e);
    crate::entropy::hex(&mac_bytes(key, &[&chain.to_le_bytes(), &body]))
}

/// The chain's head: the last covered row's id and hash, MACed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub count: i64,
    pub last: String,
    pub mac: String,
}

impl Head {
    pub fn new(key: &[u8], count: i64, last: &str) -> Head {
        Head {
            count,
            last: last.into(),
            mac: head_mac(key, count, last),
        }
    }

    pub fn encode(&self) -> String {
        format!("v1:{}:{}:{}", self.count, self.last, self.mac)
    }

    pub fn decode(text: &str) -> Option<Head> {
        let mut parts = text.split(':');
        let (Some("v1"), Some(count), Some(last), Some(mac), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        Some(Head {
            count: count.parse().ok()?,
            last: last.into(),
            mac: mac.into(),
        })
    }

    pub fn authentic(&self, key: &[u8]) -> bool {
        head_mac(key, self.count, &self.last) == self.mac
    }
}

fn head_mac(key: &[u8], count: i64, last: &str) -> String {
    crate::entropy::hex(&mac_bytes(
        key,
        &[b"head", &count.to_le_bytes(), last.as_bytes()],
    ))
}

/// What `verify` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every row follows; `unkeyed_tail` rows at the end were appended while the sealed
    /// vault was locked (chained, not keyed).
    Intact {
        rows: usize,
        keyed: bool,
        unkeyed_tail: usize,
        /// No head yet: a trail written only by an older tai.
        headless: bool,
        /// Rows keyed with a former seal's key (kept in the clear when the seal came
        /// off): they verify against edits, as public rows do, not against a forger.
        former_keyed: usize,
        /// Rows a locked sealed vault appended that keyed rows followed: chained, not
        /// keyed, before the tail.
        unkeyed_inner: usize,
    },
    /// The first row that does not follow (edited, inserted, or after a removed row).
    BrokenAt(i64),
    /// The head names more rows than there are: the newest rows were removed.
    Truncated { head: i64, found: i64 },
    /// The head is missing, forged, or the chain does not end where it says.
    BadHead(String),
}

/// Check a trail read in id order against its head. `sealed_key` is the sealed audit key
/// when the seal is on (the caller has unlocked), `None` when the vault is not sealed.
pub fn verify(rows: &[Row], head: Option<&Head>, sealed_key: Option<&[u8]>) -> Verdict {
    verify_with(rows, head, sealed_key, &[])
}

/// `verify`, with the keys of former seals (`former`): a row keyed with one of them
/// verifies (and is counted), as the trail of a vault unsealed since.
pub fn verify_with(
    rows: &[Row],
    head: Option<&Head>,
    sealed_key: Option<&[u8]>,
    former: &[Vec<u8>],
) -> Verdict {
    let mut prev = String::new();
    let mut seen_keyed = false;
    let mut seen_sealed = false;
    let (mut former_keyed, mut public_after_sealed) = (0, Vec::new());
    for (i, r) in rows.iter().enumerate() {
        let follows = match r.chain {
            CHAIN_LEGACY if !seen_keyed => chain_hash(&prev, r.id, r.time, &r.event) == r.hash,
            CHAIN_PUBLIC => link(PUBLIC_KEY, r.chain, &prev, r.id, r.time, &r.event) == r.hash,
            CHAIN_SEALED => {
                let keyed = |k: &[u8]| link(k, r.chain, &prev, r.id, r.time, &r.event) == r.hash;
                if sealed_key.is_some_and(keyed) {
                    true
                } else if former.iter().any(|k| keyed(k)) {
                    former_keyed += 1;
                    true
                } else {
                    false // keyed with no key at hand: edited, or a seal's key lost
                }
            }
            _ => false,
        };
        if r.id != i as i64 + 1 || !follows {
            return Verdict::BrokenAt(r.id);
        }
        if r.chain == CHAIN_PUBLIC && seen_sealed {
            public_after_sealed.push(r.id);
        }
        seen_sealed |= r.chain == CHAIN_SEALED;
        // Rows before it were removed (the row says which): what the trail holds after
        // it follows, but it is not whole.
        if r.event.kind == GAP_KIND {
            return Verdict::BrokenAt(r.id);
        }
        seen_keyed |= r.chain != CHAIN_LEGACY;
        prev.clone_from(&r.hash);
    }
    let found = rows.len() as i64;
    let Some(head) = head else {
        // No head yet: a trail from before v3, perhaps followed by rows a locked sealed
        // vault appended. A row keyed with the sealed key, or an unsealed row past the
        // legacy ones, always moved the head: its absence is then a removal.
        let tail = rows.iter().filter(|r| r.chain != CHAIN_LEGACY).count();
        let ok =
            !rows.iter().any(|r| r.chain == CHAIN_SEALED) && (tail == 0 || sealed_key.is_some());
        return if ok {
            Verdict::Intact {
                rows: rows.len(),
                keyed: false,
                unkeyed_tail: tail,
                headless: true,
                former_keyed,
                unkeyed_inner: 0,
            }
        } else {
            Verdict::BadHead("the chain's head is missing from the vault".into())
        };
    };
    if !head.authentic(sealed_key.unwrap_or(PUBLIC_KEY)) {
        return Verdict::BadHead(
            "the chain's head does not authenticate: it was written without the key".into(),
        );
    }
    if head.count > found {
        return Verdict::Truncated {
            head: head.count,
            found,
        };
    }
    let at_head = if head.count == 0 {
        ""
    } else {
        rows[head.count as usize - 1].hash.as_str()
    };
    if at_head != head.last {
        return Verdict::BadHead(format!(
            "row {} is not the row the head authenticated: rows were rewritten and the chain recomputed",
            head.count
        ));
    }
    let tail = &rows[head.count as usize..];
    // Past the head only rows a locked sealed vault appended may follow.
    if let Some(r) = tail
        .iter()
        .find(|r| sealed_key.is_none() || r.chain != CHAIN_PUBLIC)
    {
        return Verdict::BrokenAt(r.id);
    }
    Verdict::Intact {
        rows: rows.len(),
        keyed: sealed_key.is_some(),
        unkeyed_tail: tail.len(),
        headless: false,
        former_keyed,
        unkeyed_inner: public_after_sealed
            .iter()
            .filter(|&&id| id <= head.count)
            .count(),
    }
}

/// A short digest of tool arguments for the trail (never the arguments themselves).
pub fn digest(args: &[u8]) -> String {
    crate::entropy::hex(&Sha256::digest(args)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_short_fields_and_cuts_long_ones_on_a_character() {
        let long = "é".repeat(FIELD_MAX);
        for (text, want_len, whole) in [
            (String::new(), 0, true),
            ("a".repeat(FIELD_MAX), FIELD_MAX, true),
            ("a".repeat(FIELD_MAX + 1), FIELD_MAX, false),
            (long.clone(), FIELD_MAX - 1, false),
        ] {
            let got = clip(text.clone());
            assert!(got.len() <= FIELD_MAX);
            if whole {
                assert_eq!(got, text);
            } else {
                assert!(
                    got.ends_with(&format!("(clipped: {} bytes)", text.len())),
                    "{got}"
                );
                assert_eq!(got.len(), want_len, "{got}");
            }
        }
    }

    #[test]
    fn outcomes_keep_the_trails_words() {
        let table = [
            (Outcome::Ok, "ok"),
            (Outcome::ToolError, "tool-error"),
            (Outcome::ProtocolError, "protocol-error"),
            (Outcome::Timeout, "timeout"),
            (Outcome::Interrupted, "interrupted"),
            (Outcome::Denied, "denied"),
            (Outcome::NotEnabled, "not-enabled"),
            (Outcome::NotListed, "not-listed"),
            (Outcome::NotAllowed, "not-allowed"),
            (Outcome::Withheld, "withheld"),
            (Outcome::Unverified, "unverified"),
            (Outcome::NotServed, "not-served"),
            (Outcome::UnknownTool, "unknown-tool"),
            (Outcome::UnknownServer, "unknown-server"),
            (Outcome::BadArguments, "bad-arguments"),
            (Outcome::AuditFailed, "audit-failed"),
            (Outcome::Approved, "approved"),
            (Outcome::Stored, "stored"),
            (Outcome::VerifyFailed, "verify-failed"),
            (Outcome::Trusted, "trusted"),
            (Outcome::Untrusted, "untrusted"),
            (Outcome::Enabled, "enabled"),
            (Outcome::Disabled, "disabled"),
            (Outcome::Reconnecting, "reconnecting"),
            (Outcome::Added, "added"),
            (Outcome::Changed, "changed"),
            (Outcome::TokensStored, "tokens-stored"),
            (Outcome::TokensDropped, "tokens-dropped"),
            (Outcome::Login, "login"),
            (Outcome::Logout, "logout"),
            (Outcome::Set, "set"),
            (Outcome::Removed, "removed"),
            (Outcome::Sealed, "sealed"),
            (Outcome::Unsealed, "unsealed"),
            (Outcome::Used, "used"),
        ];
        let mut seen = std::collections::HashSet::new();
        for (outcome, word) in table {
            assert_eq!(outcome.as_str(), word);
            assert_eq!(outcome.to_string(), word);
            assert_eq!(serde_json::to_value(outcome).unwrap(), word);
            assert!(outcome == word);
            assert!(seen.insert(word), "{word} twice");
            assert_eq!(Event::new("k", "s", outcome).outcome, word);
            assert_eq!(outcome.answered(), matches!(word, "ok" | "tool-error"));
        }
        assert_eq!(Outcome::of_call(true), Outcome::ToolError);
        assert_eq!(Outcome::of_call(false), Outcome::Ok);
    }

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    /// A trail of `n` rows chained as `chain` under `key`, and its head.
    fn trail(n: i64, chain: i64, key: &[u8]) -> (Vec<Row>, Head) {
        let mut rows = Vec::new();
        let mut prev = String::new();
        for id in 1..=n {
            let event = Event::new("test", &format!("s{id}"), Outcome::Ok);
            let hash = link(key, chain, &prev, id, 1000 + id, &event);
            prev.clone_from(&hash);
            rows.push(Row {
                id,
                time: 1000 + id,
                event,
                hash,
                chain,
            });
        }
        let head = Head::new(key, n, &prev);
        (rows, head)
    }

    fn rechain(rows: &mut [Row], key: &[u8], chain: i64) -> Head {
        let mut prev = String::new();
        for r in rows.iter_mut() {
            r.chain = chain;
            r.hash = if chain == CHAIN_LEGACY {
                chain_hash(&prev, r.id, r.time, &r.event)
            } else {
                link(key, chain, &prev, r.id, r.time, &r.event)
            };
            prev.clone_from(&r.hash);
        }
        Head::new(key, rows.len() as i64, &prev)
    }

    #[test]
    fn intact_trails_verify() {
        let (rows, head) = trail(5, CHAIN_SEALED, KEY);
        assert!(matches!(
            verify(&rows, Some(&head), Some(KEY)),
            Verdict::Intact {
                rows: 5,
                keyed: true,
                unkeyed_tail: 0,
                ..
            }
        ));
        let (rows, head) = trail(3, CHAIN_PUBLIC, PUBLIC_KEY);
        assert!(matches!(
            verify(&rows, Some(&head), None),
            Verdict::Intact {
                rows: 3,
                keyed: false,
                ..
            }
        ));
        assert!(matches!(
            verify(&[], None, None),
            Verdict::Intact { headless: true, .. }
        ));
        assert_eq!(Head::decode(&head.encode()), Some(head));
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
            |r| r.chain = CHAIN_PUBLIC,
        ];
        for (i, edit) in edits.iter().enumerate() {
            let (mut rows, head) = trail(4, CHAIN_SEALED, KEY);
            edit(&mut rows[2]);
            assert_eq!(
                verify(&rows, Some(&head), Some(KEY)),
                Verdict::BrokenAt(3),
                "edit {i}"
            );
        }
        // a deleted row breaks at the row after it
        let (mut rows, head) = trail(4, CHAIN_SEALED, KEY);
        rows.remove(1);
        assert_eq!(verify(&rows, Some(&head), Some(KEY)), Verdict::BrokenAt(3));
        // the oldest row removed
        let (mut rows, head) = trail(4, CHAIN_PUBLIC, PUBLIC_KEY);
        rows.remove(0);
        assert_eq!(verify(&rows, Some(&head), None), Verdict::BrokenAt(2));
    }

    #[test]
    fn removing_the_newest_rows_is_truncation() {
        for keyed in [true, false] {
            let (chain, key, sealed) = if keyed {
                (CHAIN_SEALED, KEY, Some(KEY))
            } else {
                (CHAIN_PUBLIC, PUBLIC_KEY, None)
            };
            let (mut rows, head) = trail(5, chain, key);
            rows.truncate(3);
            assert_eq!(
                verify(&rows, Some(&head), sealed),
                Verdict::Truncated { head: 5, found: 3 }
            );
            assert!(matches!(verify(&rows, None, sealed), Verdict::BadHead(_)));
        }
    }

    #[test]
    fn a_recomputed_chain_fails_when_sealed() {
        // The forger edits row 2 and recomputes every hash without the key: publicly
        // keyed, or as v1 rows; with and without writing a new head.
        for chain in [CHAIN_PUBLIC, CHAIN_LEGACY] {
            let (mut rows, head) = trail(4, CHAIN_SEALED, KEY);
            rows[1].event.outcome = "denied".into();
            let forged_head = rechain(&mut rows, PUBLIC_KEY, chain);
            assert!(
                !matches!(
                    verify(&rows, Some(&head), Some(KEY)),
                    Verdict::Intact { .. }
                ),
                "chain {chain}, old head"
            );
            assert!(
                !matches!(
                    verify(&rows, Some(&forged_head), Some(KEY)),
                    Verdict::Intact { .. }
                ),
                "chain {chain}, forged head"
            );
        }
        // Unsealed, the same recomputation passes: the public key detects edits, not forgers.
        let (mut rows, _) = trail(4, CHAIN_PUBLIC, PUBLIC_KEY);
        rows[1].event.outcome = "denied".into();
        let head = rechain(&mut rows, PUBLIC_KEY, CHAIN_PUBLIC);
        assert!(matches!(
            verify(&rows, Some(&head), None),
            Verdict::Intact { .. }
        ));
    }

    /// Appends `chains` (chain, key) rows to `rows`, each linked to the last.
    fn extend(rows: &mut Vec<Row>, chains: &[(i64, &[u8])]) -> String {
        let mut prev = rows.last().map(|r| r.hash.clone()).unwrap_or_default();
        for (chain, key) in chains {
            let id = rows.len() as i64 + 1;
            let event = Event::new("test", &format!("s{id}"), Outcome::Ok);
            let hash = link(key, *chain, &prev, id, 3000 + id, &event);
            prev.clone_from(&hash);
            rows.push(Row {
                id,
                time: 3000 + id,
                event,
                hash,
                chain: *chain,
            });
        }
        prev
    }

    #[test]
    fn a_former_seals_rows_verify_with_its_kept_key_and_are_counted() {
        const OTHER: &[u8] = b"another seal's key, since removed";
        // Sealed (KEY), unsealed (public), sealed again (OTHER), unsealed again.
        let (mut rows, _) = trail(2, CHAIN_SEALED, KEY);
        extend(&mut rows, &[(CHAIN_PUBLIC, PUBLIC_KEY)]);
        extend(&mut rows, &[(CHAIN_SEALED, OTHER), (CHAIN_SEALED, OTHER)]);
        let last = extend(&mut rows, &[(CHAIN_PUBLIC, PUBLIC_KEY)]);
        let head = Head::new(PUBLIC_KEY, 6, &last);
        let former = [KEY.to_vec(), OTHER.to_vec()];
        assert!(matches!(
            verify_with(&rows, Some(&head), None, &former),
            Verdict::Intact {
                rows: 6,
                keyed: false,
                former_keyed: 4,
                ..
            }
        ));
        // Without the kept keys the first sealed row cannot be checked: broken there.
        assert_eq!(verify(&rows, Some(&head), None), Verdict::BrokenAt(1));
        assert_eq!(
            verify_with(&rows, Some(&head), None, &former[1..]),
            Verdict::BrokenAt(1)
        );
        // A kept key does not make an edited row pass.
        rows[3].event.subject = "edited".into();
        assert_eq!(
            verify_with(&rows, Some(&head), None, &former),
            Verdict::BrokenAt(4)
        );
        // Sealed again, a former seal's rows verify beside the current key's.
        let (mut rows, _) = trail(1, CHAIN_SEALED, OTHER);
        let last = extend(&mut rows, &[(CHAIN_SEALED, KEY)]);
        let head = Head::new(KEY, 2, &last);
        assert!(matches!(
            verify_with(&rows, Some(&head), Some(KEY), &[OTHER.to_vec()]),
            Verdict::Intact {
                keyed: true,
                former_keyed: 1,
                ..
            }
        ));
    }

    #[test]
    fn rows_a_locked_vault_appended_before_keyed_ones_are_counted() {
        let (mut rows, _) = trail(1, CHAIN_SEALED, KEY);
        extend(
            &mut rows,
            &[(CHAIN_PUBLIC, PUBLIC_KEY), (CHAIN_PUBLIC, PUBLIC_KEY)],
        );
        let last = extend(&mut rows, &[(CHAIN_SEALED, KEY)]);
        let head = Head::new(KEY, 4, &last);
        assert!(matches!(
            verify(&rows, Some(&head), Some(KEY)),
            Verdict::Intact {
                rows: 4,
                unkeyed_inner: 2,
                unkeyed_tail: 0,
                ..
            }
        ));
        // Public rows before the first sealed one (the vault not sealed yet) are not.
        let (mut rows, _) = trail(2, CHAIN_PUBLIC, PUBLIC_KEY);
        let last = extend(&mut rows, &[(CHAIN_SEALED, KEY)]);
        let head = Head::new(KEY, 3, &last);
        assert!(matches!(
            verify(&rows, Some(&head), Some(KEY)),
            Verdict::Intact {
                unkeyed_inner: 0,
                ..
            }
        ));
    }

    #[test]
    fn a_locked_tail_is_reported_not_failed() {
        let (mut rows, head) = trail(3, CHAIN_SEALED, KEY);
        let mut prev = rows[2].hash.clone();
        for id in 4..=5 {
            let event = Event::new("mcp-enable", "s", Outcome::Enabled);
            let hash = link(PUBLIC_KEY, CHAIN_PUBLIC, &prev, id, 2000, &event);
            prev.clone_from(&hash);
            rows.push(Row {
                id,
                time: 2000,
                event,
                hash,
                chain: CHAIN_PUBLIC,
            });
        }
        assert!(matches!(
            verify(&rows, Some(&head), Some(KEY)),
            Verdict::Intact {
                rows: 5,
                unkeyed_tail: 2,
                ..
            }
        ));
        // but a keyed-looking row past the head is not something tai writes
        rows[4].chain = CHAIN_SEALED;
        let prev = rows[3].hash.clone();
        rows[4].hash = link(KEY, CHAIN_SEALED, &prev, 5, 2000, &rows[4].event);
        assert_eq!(verify(&rows, Some(&head), Some(KEY)), Verdict::BrokenAt(5));
    }

    #[test]
    fn legacy_rows_verify_only_before_keyed_ones() {
        let mut rows = Vec::new();
        let mut prev = String::new();
        for id in 1..=2 {
            let event = Event::new("old", "s", Outcome::Ok);
            let hash = chain_hash(&prev, id, id, &event);
            prev.clone_from(&hash);
            rows.push(Row {
                id,
                time: id,
                event,
                hash,
                chain: CHAIN_LEGACY,
            });
        }
        assert!(matches!(
            verify(&rows, None, None),
            Verdict::Intact { headless: true, .. }
        ));
        let event = Event::new("new", "s", Outcome::Ok);
        let hash = link(PUBLIC_KEY, CHAIN_PUBLIC, &prev, 3, 3, &event);
        rows.push(Row {
            id: 3,
            time: 3,
            event,
            hash: hash.clone(),
            chain: CHAIN_PUBLIC,
        });
        let head = Head::new(PUBLIC_KEY, 3, &hash);
        assert!(matches!(
            verify(&rows, Some(&head), None),
            Verdict::Intact { .. }
        ));
        let event = Event::new("late", "s", Outcome::Ok);
        let hash = chain_hash(&hash, 4, 4, &event);
        rows.push(Row {
            id: 4,
            time: 4,
            event,
            hash,
            chain: CHAIN_LEGACY,
        });
        assert_eq!(verify(&rows, Some(&head), None), Verdict::BrokenAt(4));
    }
}
