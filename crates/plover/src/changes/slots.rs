//! The bounds on open streams (docs/changes.md#bounds): per client address, per user and per
//! process. A stream holds a [`Slot`] while it is open; dropping it frees the place.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;

use crate::error::Error;

/// The longest a stream stays silent: a comment line then keeps proxies from closing it, and
/// tells the stream whether its subscriber is still there (a closed stream's place is free
/// again within it).
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(15);

/// How many streams may be open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Per client address (default 16).
    pub per_client: usize,
    /// Per authenticated user (default 16).
    pub per_user: usize,
    /// In the whole process, all feeds together (default 10,000).
    pub per_process: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            per_client: 16,
            per_user: 16,
            per_process: 10_000,
        }
    }
}

/// Who holds a stream, for the per-address and per-user counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Holder {
    Client(IpAddr),
    User(String),
}

/// The open streams of the process, by holder, and in all.
#[derive(Default)]
struct Open {
    by: HashMap<Holder, usize>,
    all: usize,
}

fn open() -> &'static Arc<Mutex<Open>> {
    static OPEN: OnceLock<Arc<Mutex<Open>>> = OnceLock::new();
    OPEN.get_or_init(Arc::default)
}

/// A stream's place among the open ones; freed when dropped.
pub(crate) struct Slot {
    holders: Vec<Holder>,
}

impl Slot {
    /// A place for a stream of `client` (when known) and `user` (when authenticated), or a 429
    /// whose `Retry-After` is the heartbeat's interval (a closed stream's place is free again
    /// within it).
    pub(crate) fn take(
        limits: &StreamLimits,
        client: Option<IpAddr>,
        user: Option<String>,
    ) -> Result<Slot, Error> {
        let mut wanted = Vec::with_capacity(2);
        wanted.extend(client.map(|ip| (Holder::Client(ip), limits.per_client)));
        wanted.extend(user.map(|user| (Holder::User(user), limits.per_user)));
        let mut open = open().lock();
        let full = open.all >= limits.per_process
            || (wanted.iter()).any(|(h, max)| open.by.get(h).copied().unwrap_or(0) >= *max);
        if full {
            return Err(Error::TooManyRequests(Duration::from_secs(
                HEARTBEAT.as_secs(),
            )));
        }
        open.all += 1;
        for (holder, _) in &wanted {
            *open.by.entry(holder.clone()).or_default() += 1;
        }
        Ok(Slot {
            holders: wanted.into_iter().map(|(h, _)| h).collect(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = open().lock();
        open.all = open.all.saturating_sub(1);
        for holder in &self.holders {
            if let Some(n) = open.by.get_mut(holder) {
                *n -= 1;
                if *n == 0 {
                    open.by.remove(holder);
                }
            }
        }
    }
}
