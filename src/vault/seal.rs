//! The seal: secret values, stored env and header values, conversations and spilled
//! records encrypted at rest; and the key that keys the audit chain.
//!
//! XChaCha20-Poly1305 under a key derived from the passphrase with Argon2id (RustCrypto
//! crates, nothing hand-rolled). A sealed value is `[FORMAT] || nonce(24) || ciphertext`;
//! the associated data names the row it belongs to, so a ciphertext moved to another row
//! fails authentication just like an edited one.

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

const FORMAT: u8 = 1;
const NONCE_LEN: usize = 24;
/// The known text whose ciphertext in `meta` tells a right passphrase from a wrong one.
pub const CHECK_PLAINTEXT: &[u8] = b"tai vault seal check v1";

/// The KDF settings, stored in `meta` so a later tai can change defaults safely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfParams {
    pub m_cost_kib: u32,
    pub t_cost: u32,
    pub p_cost: u32,
}

impl KdfParams {
    /// Argon2id with the RFC 9106 / OWASP second recommendation (19 MiB, 2 passes).
    pub const DEFAULT: KdfParams = KdfParams {
        m_cost_kib: 19 * 1024,
        t_cost: 2,
        p_cost: 1,
    };

    pub fn encode(&self) -> String {
        format!(
            "argon2id:m={},t={},p={}",
            self.m_cost_kib, self.t_cost, self.p_cost
        )
    }

    pub fn decode(text: &str) -> Option<KdfParams> {
        let rest = text.strip_prefix("argon2id:")?;
        let mut p = KdfParams {
            m_cost_kib: 0,
            t_cost: 0,
            p_cost: 0,
        };
        for part in rest.split(',') {
            let (k, v) = part.split_once('=')?;
            let v: u32 = v.parse().ok()?;
            match k {
                "m" => p.m_cost_kib = v,
                "t" => p.t_cost = v,
                "p" => p.p_cost = v,
                _ => return None,
            }
        }
        (p.m_cost_kib > 0 && p.t_cost > 0 && p.p_cost > 0).then_some(p)
    }
}

/// Why a sealed value could not be opened.
#[derive(Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Too short or an unknown format byte: not something tai sealed.
    Malformed,
    /// Authentication failed: wrong key, edited bytes, or a value moved between rows.
    Unauthentic,
}

/// A derived key, ready to seal and open values.
pub struct SealKey {
    cipher: XChaCha20Poly1305,
    /// The audit chain's key: HMAC-SHA256 of the derived key and a fixed label, so it is
    /// never in the file and cannot be confused with the cipher's key.
    audit: [u8; 32],
}

impl SealKey {
    /// Derive the key from a passphrase and the vault's salt.
    pub fn derive(passphrase: &str, salt: &[u8], params: KdfParams) -> Result<SealKey, String> {
        let params = Params::new(params.m_cost_kib, params.t_cost, params.p_cost, Some(32))
            .map_err(|e| format!("bad key-derivation settings: {e}"))?;
        let mut key = [0u8; 32];
        Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
            .hash_password_into(passphrase.as_bytes(), salt, &mut key)
            .map_err(|e| format!("key derivation failed: {e}"))?;
        let cipher = XChaCha20Poly1305::new((&key).into());
        let audit = super::audit::mac_bytes(&key, &[b"tai audit chain key v1"]);
        key.fill(0);
        Ok(SealKey { cipher, audit })
    }

    /// The key that keys the audit chain while the seal is on.
    pub fn audit_key(&self) -> &[u8; 32] {
        &self.audit
    }

    /// Encrypt `plain` for the row named by `aad`, with a fresh random nonce.
    pub fn seal(&self, plain: &[u8], aad: &str) -> std::io::Result<Vec<u8>> {
        let nonce_bytes = crate::entropy::bytes::<NONCE_LEN>()?;
        let nonce = XNonce::from(nonce_bytes);
        let ct = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plain,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| std::io::Error::other("encryption failed"))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + ct.len());
        out.push(FORMAT);
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&ct);
        Ok(out)
    }

    /// Decrypt a value sealed for the row named by `aad`.
    pub fn open(&self, sealed: &[u8], aad: &str) -> Result<Vec<u8>, OpenError> {
        if sealed.len() < 1 + NONCE_LEN + 16 || sealed[0] != FORMAT {
            return Err(OpenError::Malformed);
        }
        let nonce =
            XNonce::try_from(&sealed[1..1 + NONCE_LEN]).map_err(|_| OpenError::Malformed)?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: &sealed[1 + NONCE_LEN..],
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| OpenError::Unauthentic)
    }
}

/// Cheap key-derivation parameters for tests (a real seal's derivation is slow by design).
#[cfg(test)]
pub(crate) const TEST_KDF: KdfParams = KdfParams {
    m_cost_kib: 64,
    t_cost: 1,
    p_cost: 1,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_failures() {
        let key = SealKey::derive("pass", b"0123456789abcdef", TEST_KDF).unwrap();
        let sealed = key.seal(b"hunter2", "secret:pw").unwrap();
        assert!(!sealed.windows(7).any(|w| w == b"hunter2"));
        assert_eq!(key.open(&sealed, "secret:pw").unwrap(), b"hunter2");
        // another row's associated data
        assert_eq!(
            key.open(&sealed, "secret:other"),
            Err(OpenError::Unauthentic)
        );
        // a flipped bit anywhere after the format byte
        for i in 1..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert_eq!(
                key.open(&bad, "secret:pw"),
                Err(OpenError::Unauthentic),
                "byte {i}"
            );
        }
        assert_eq!(
            key.open(&sealed[..10], "secret:pw"),
            Err(OpenError::Malformed)
        );
        let wrong = SealKey::derive("Pass", b"0123456789abcdef", TEST_KDF).unwrap();
        assert_eq!(
            wrong.open(&sealed, "secret:pw"),
            Err(OpenError::Unauthentic)
        );
        // two seals of one value differ (fresh nonces)
        assert_ne!(key.seal(b"x", "a").unwrap(), key.seal(b"x", "a").unwrap());
    }

    #[test]
    fn kdf_params_round_trip() {
        assert_eq!(
            KdfParams::decode(&KdfParams::DEFAULT.encode()),
            Some(KdfParams::DEFAULT)
        );
        for bad in [
            "",
            "argon2id:",
            "argon2id:m=1,t=0,p=1",
            "scrypt:m=1,t=1,p=1",
            "argon2id:m=x,t=1,p=1",
        ] {
            assert_eq!(KdfParams::decode(bad), None, "{bad}");
        }
    }
}
