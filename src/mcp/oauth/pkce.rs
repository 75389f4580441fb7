//! Pure: PKCE (RFC 7636, S256 only) and the Basic credentials header.

use sha2::{Digest, Sha256};

use crate::base64::{Alphabet, encode};

/// Base64url without padding (RFC 4648 §5), as PKCE and random strings use it.
pub fn base64url(data: &[u8]) -> String {
    encode(data, Alphabet::Url, false)
}

/// The S256 challenge of a verifier: base64url(sha256(verifier)).
pub fn challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// A verifier (43 characters) from 32 random bytes.
pub fn verifier(random: &[u8; 32]) -> String {
    base64url(random)
}

/// `Authorization: Basic …` for client_secret_basic (RFC 6749 §2.3.1: each part
/// form-encoded first).
pub fn basic(client_id: &str, secret: &str) -> String {
    let user = super::discovery::form(&[("", client_id)]);
    let pass = super::discovery::form(&[("", secret)]);
    let pair = format!("{}:{}", &user[1..], &pass[1..]);
    format!("Basic {}", crate::base64::standard(pair.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_challenges() {
        // Expected values computed independently (Python: hashlib.sha256 + urlsafe_b64encode).
        let v = "dBjftJeZ4CVP-1B0r5gXWkL2oOBc3aUbJ2Hk4G0e4k0";
        assert_eq!(challenge(v), "1Qpw3MTPM66Z4VIU3dHxdgMjaAhqQmM3fRgLU2oUmjw");
        assert_eq!(challenge(""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
        let bytes = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212,
            37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        assert_eq!(
            verifier(&bytes),
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        );
        assert_eq!(verifier(&bytes).len(), 43);
    }

    #[test]
    fn codecs() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(basic("client", "s3cret"), "Basic Y2xpZW50OnMzY3JldA==");
        // A colon in the id is encoded, so the pair still splits in the right place.
        assert_eq!(
            basic("a:b", "c"),
            format!("Basic {}", crate::base64::standard(b"a%3Ab:c"))
        );
    }
}
