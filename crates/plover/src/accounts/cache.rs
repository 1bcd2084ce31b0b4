//! The verified-credentials cache: spares a full bcrypt verification on repeated Basic logins.
//!
//! An entry is the HMAC-SHA256, under a random per-process key, of the username, the stored
//! password hash and the password that verified against it. A request hits the cache only if it
//! presents the same password for a user whose stored hash is still the same: a changed
//! password (new hash) or a wrong password (other input) gives another digest and goes through
//! bcrypt. Digests are compared in constant time; an entry expires when it has not been used for
//! a short lifetime (each hit renews it, so a client that keeps sending the same credentials is
//! not verified again every minute, with its concurrent requests all paying bcrypt at once), and
//! the cache holds a bounded number of them. Plain passwords are never stored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;
use subtle::ConstantTimeEq;

type Digest = [u8; 32];

/// A bounded, short-lived cache of verified credentials. See the module documentation.
#[derive(Debug)]
pub struct CredentialCache {
    key: [u8; 32],
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<String, (Digest, Instant)>>,
}

impl Default for CredentialCache {
    fn default() -> Self {
        CredentialCache::new(Duration::from_secs(60), 10_000)
    }
}

impl CredentialCache {
    /// A cache keeping up to `capacity` entries for `ttl` each.
    pub fn new(ttl: Duration, capacity: usize) -> CredentialCache {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        CredentialCache {
            key,
            ttl,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The keyed digest of a triple (never the password itself).
    pub(crate) fn digest(&self, username: &str, stored_hash: &str, password: &str) -> Digest {
        // Lengths first, so that no two different triples feed the same bytes.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return [0; 32];
        };
        for part in [username, stored_hash, password] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        mac.finalize().into_bytes().into()
    }

    /// Whether `password` matches `stored_hash`: from the cache when this exact triple was
    /// verified and last used within the lifetime (the hit renews the entry), else with
    /// `verify` (the full bcrypt check), caching a success.
    pub fn check(
        &self,
        username: &str,
        stored_hash: &str,
        password: &str,
        verify: impl FnOnce() -> bool,
    ) -> bool {
        self.check_at(Instant::now(), username, stored_hash, password, verify)
    }

    /// Whether this exact triple was verified and last used within the lifetime (the hit renews
    /// the entry), with no bcrypt check. For a check that waited for its turn: another request
    /// with the same credentials may have verified them meanwhile.
    pub fn hit(&self, username: &str, stored_hash: &str, password: &str) -> bool {
        let digest = self.digest(username, stored_hash, password);
        self.hit_at(Instant::now(), username, &digest)
    }

    fn hit_at(&self, now: Instant, username: &str, digest: &Digest) -> bool {
        let Ok(mut entries) = self.entries.lock() else {
            return false;
        };
        match entries.get_mut(username) {
            Some((cached, expires)) if *expires > now && bool::from(cached.ct_eq(digest)) => {
                *expires = now + self.ttl;
                true
            }
            _ => false,
        }
    }

    /// [`CredentialCache::check`] at the time `now`.
    fn check_at(
        &self,
        now: Instant,
        username: &str,
        stored_hash: &str,
        password: &str,
        verify: impl FnOnce() -> bool,
    ) -> bool {
        let digest = self.digest(username, stored_hash, password);
        if self.hit_at(now, username, &digest) {
            return true;
        }
        if !verify() {
            return false;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= self.capacity {
                entries.retain(|_, (_, expires)| *expires > now);
            }
            if entries.len() < self.capacity {
                entries.insert(username.to_owned(), (digest, now + self.ttl));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A stand-in for the bcrypt check that answers `ok` and counts its calls in `calls`.
    fn counting(calls: &Cell<u32>, ok: bool) -> impl Fn() -> bool + Copy + '_ {
        move || {
            calls.set(calls.get() + 1);
            ok
        }
    }

    #[test]
    fn hit_only_for_same_password_and_hash() {
        let cache = CredentialCache::default();
        let calls = Cell::new(0);
        assert!(cache.check("u", "h1", "pw", counting(&calls, true)));
        assert!(cache.check("u", "h1", "pw", counting(&calls, true)));
        assert_eq!(calls.get(), 1, "second check must come from the cache");
        assert!(!cache.check("u", "h1", "wrong", counting(&calls, false)));
        assert!(
            !cache.check("u", "h2", "pw", counting(&calls, false)),
            "changed hash must re-verify"
        );
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn hit_answers_from_the_cache_alone() {
        let cache = CredentialCache::default();
        assert!(!cache.hit("u", "h", "pw"), "nothing verified yet");
        assert!(cache.check("u", "h", "pw", || true));
        assert!(cache.hit("u", "h", "pw"));
        assert!(!cache.hit("u", "h", "wrong"));
        assert!(!cache.hit("u", "h2", "pw"), "a changed hash is not a hit");
    }

    #[test]
    fn a_hit_renews_the_entry() {
        let cache = CredentialCache::new(Duration::from_secs(60), 10);
        let calls = Cell::new(0);
        let verify = counting(&calls, true);
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        assert!(cache.check_at(at(0), "u", "h", "pw", verify));
        assert!(cache.check_at(at(50), "u", "h", "pw", verify));
        assert!(cache.check_at(at(100), "u", "h", "pw", verify));
        assert_eq!(
            calls.get(),
            1,
            "used every 50 s, the entry must not run out"
        );
        assert!(cache.check_at(at(161), "u", "h", "pw", verify));
        assert_eq!(
            calls.get(),
            2,
            "unused for 61 s, the entry must have run out"
        );
    }

    #[test]
    fn entries_expire_and_are_bounded() {
        let cache = CredentialCache::new(Duration::from_millis(0), 1);
        let calls = Cell::new(0);
        let verify = counting(&calls, true);
        assert!(cache.check("a", "h", "p", verify));
        assert!(cache.check("a", "h", "p", verify));
        assert_eq!(calls.get(), 2, "an expired entry must not be used");
        assert!(cache.check("b", "h", "p", verify));
        assert!(cache.entries.lock().map(|e| e.len() <= 1).unwrap_or(false));
    }
}
