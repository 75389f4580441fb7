//! Base64 (RFC 4648) encoding, pure: the standard alphabet with padding (HTTP Basic
//! credentials, MCP header values), base64url without padding (PKCE), and the forms the
//! redactor looks for. One encoder for every use; tai never needs to decode.

/// The two alphabets of RFC 4648.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alphabet {
    /// `+` and `/` (§4).
    Standard,
    /// `-` and `_` (§5, URL- and file-name-safe).
    Url,
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `data` in `alphabet`, with `=` padding when `pad`.
pub fn encode(data: &[u8], alphabet: Alphabet, pad: bool) -> String {
    let table = match alphabet {
        Alphabet::Standard => STANDARD,
        Alphabet::Url => URL,
    };
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(table[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                s.push('=');
            }
        }
    }
    s
}

/// The standard alphabet, padded.
pub fn standard(data: &[u8]) -> String {
    encode(data, Alphabet::Standard, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 §10's vectors, and the URL alphabet's two characters.
    #[test]
    fn rfc_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(standard(plain.as_bytes()), coded);
            assert_eq!(
                encode(plain.as_bytes(), Alphabet::Url, false),
                coded.trim_end_matches('=')
            );
        }
        assert_eq!(encode(&[0xfb, 0xff], Alphabet::Standard, true), "+/8=");
        assert_eq!(encode(&[0xfb, 0xff], Alphabet::Url, false), "-_8");
    }
}
