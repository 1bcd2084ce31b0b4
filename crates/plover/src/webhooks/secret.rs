//! Secrets and signatures as Standard Webhooks 1.0 writes them.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::Error;

/// The prefix of a secret's text.
const PREFIX: &str = "whsec_";

/// An endpoint's signing key, written `whsec_<base64 of the key>` (as the standard's receiver
/// libraries take it). Its `Debug` shows no key.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(whsec_***)")
    }
}

impl Secret {
    /// Reads a secret written `whsec_<base64>` (a key of 16 to 64 bytes; the standard
    /// recommends 24 or more, which [`Secret::generate`] makes).
    ///
    /// # Errors
    /// [`Error::Validation`] on the field `secret` when the text is not such a secret.
    pub fn parse(text: &str) -> Result<Secret, Error> {
        let bad = |why: &str| Error::field("secret", format!("{why}: write whsec_<base64 key>"));
        let encoded = text
            .trim()
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("no whsec_ prefix"))?;
        let key = STANDARD.decode(encoded).map_err(|_| bad("not base64"))?;
        if !(16..=64).contains(&key.len()) {
            return Err(bad("the key has 16 to 64 bytes"));
        }
        Ok(Secret(key))
    }

    /// A new random secret of 32 bytes.
    pub fn generate() -> Secret {
        use rand::Rng;
        let mut key = vec![0; 32];
        rand::rng().fill_bytes(&mut key);
        Secret(key)
    }

    /// The secret's text, `whsec_<base64>`: what the receiver is given.
    pub fn expose(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// The signature `v1,<base64 of HMAC-SHA256 over "<id>.<timestamp>.<body>">`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            return String::new(); // HMAC takes keys of any length
        };
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_standards_example_signature_is_reproduced() {
        // The test vector of the Standard Webhooks specification's reference libraries.
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_reads_back_from_its_text_and_bad_texts_are_refused() {
        let secret = Secret::generate();
        assert_eq!(Secret::parse(&secret.expose()).unwrap(), secret);
        // 22 bytes ("conformance-secret-key"): shorter than recommended, accepted.
        assert!(Secret::parse("whsec_Y29uZm9ybWFuY2Utc2VjcmV0LWtleQ==").is_ok());
        for bad in [
            "",
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_!!",
            "whsec_c2hvcnQ=",
        ] {
            assert!(Secret::parse(bad).is_err(), "{bad}");
        }
        assert!(!format!("{secret:?}").contains(&secret.expose()[6..]));
    }
}
