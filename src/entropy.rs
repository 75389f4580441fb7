//! Random bytes from the kernel (`/dev/urandom`), for nonces, salts and ids.

use std::io::Read;

/// `N` random bytes. The kernel's CSPRNG never blocks once seeded; failing to read it
/// means the system is unusable for cryptography, which is reported, not ignored.
pub fn bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut out = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut out)?;
    Ok(out)
}

/// Lower-case hex of `data`.
pub fn hex(data: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The bytes `hex` wrote: `None` for an odd length or a character that is not hex.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A random id of 16 bytes as 32 hex characters.
pub fn id() -> std::io::Result<String> {
    Ok(hex(&bytes::<16>()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_and_ids() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::unhex("000fa5FF"), Some(vec![0x00, 0x0f, 0xa5, 0xff]));
        assert_eq!(super::unhex(""), Some(vec![]));
        for bad in ["0", "0g", "+1", "éé", "abc"] {
            assert_eq!(super::unhex(bad), None, "{bad}");
        }
        let a = super::id().unwrap();
        let b = super::id().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
