//! HTTP Basic credentials and the cache of verified ones, the same kind of cache as Plover's
//! (crates/plover/src/accounts/cache.rs): bcrypt at cost 12 takes a quarter of a second, so a
//! password is checked once and then recognized by a digest.
//!
//! An entry is, per username, a SHA-256 over a random per-process key, the username, the
//! stored hash and the password that verified against it, each preceded by its length. A
//! request hits only with the same password for a user whose stored hash is unchanged; the
//! password itself is never kept. Entries live a minute from their last use (a hit renews them, as
//! in Plover); the cache holds at most 10,000.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::http::header::AUTHORIZATION;
use actix_web::HttpRequest;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

const TTL: Duration = Duration::from_secs(60);
const CAPACITY: usize = 10_000;

/// A username and password from an `Authorization: Basic` header.
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl Credentials {
    /// The request's Basic credentials: base64, UTF-8, split at the first colon (as Plover
    /// does); `None` when missing or malformed.
    pub fn from_request(req: &HttpRequest) -> Option<Credentials> {
        let header = req.headers().get(AUTHORIZATION)?.to_str().ok()?;
        let (scheme, encoded) = header.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
        let (username, password) = decoded.split_once(':')?;
        Some(Credentials {
            username: username.to_owned(),
            password: password.to_owned(),
        })
    }

    /// The full bcrypt check; false for an empty password or hash, and for a password longer
    /// than the 72 bytes bcrypt reads (Plover refuses those rather than truncate them).
    pub fn verify(&self, stored_hash: &str) -> bool {
        !self.password.is_empty()
            && self.password.len() <= 72
            && !stored_hash.is_empty()
            && bcrypt::verify(&self.password, stored_hash).unwrap_or(false)
    }
}

type Sum = [u8; 32];

/// Verified credentials, keyed by username (see the module documentation).
pub struct CredentialCache {
    key: [u8; 32],
    entries: Mutex<HashMap<String, (Sum, Instant)>>,
}

impl CredentialCache {
    /// An empty cache with a fresh random key.
    pub fn new() -> std::io::Result<CredentialCache> {
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        Ok(CredentialCache {
            key,
            entries: Mutex::new(HashMap::new()),
        })
    }

    fn sum(&self, creds: &Credentials, stored_hash: &str) -> Sum {
        let mut h = Sha256::new();
        h.update(self.key);
        for part in [
            creds.username.as_str(),
            stored_hash,
            creds.password.as_str(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().into()
    }

    /// Whether these credentials verified against `stored_hash` and were last used within the
    /// last minute; a hit renews the entry, as Plover's does.
    pub fn hit(&self, creds: &Credentials, stored_hash: &str) -> bool {
        let sum = self.sum(creds, stored_hash);
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get_mut(&creds.username)
            .is_some_and(|(cached, expires)| {
                // Compared without an early exit, as Plover does; the sums are keyed anyway.
                let hit =
                    *expires > now && cached.iter().zip(&sum).fold(0, |d, (a, b)| d | (a ^ b)) == 0;
                if hit {
                    *expires = now + TTL;
                }
                hit
            })
    }

    /// Records that these credentials verified against `stored_hash`.
    pub fn insert(&self, creds: &Credentials, stored_hash: &str) {
        let sum = self.sum(creds, stored_hash);
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= CAPACITY {
            entries.retain(|_, (_, expires)| *expires > now);
        }
        if entries.len() < CAPACITY {
            entries.insert(creds.username.clone(), (sum, now + TTL));
        }
    }
}
