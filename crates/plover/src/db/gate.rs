//! The share of a PostgreSQL pool that units which only read may hold at once, so that the
//! rest stays free for writes (`reserved_for_writes`, docs/deployment.md#connections-for-writes):
//! without it, a bulk import waits for each connection among as many readers as the server
//! has requests, and a read-heavy load starves it.
//!
//! A reading unit takes a [`Pass`] before its connection from the primary and gives it back
//! with the connection; a writing unit takes its connection directly. Readers therefore hold
//! at most `max_connections - reserved_for_writes` connections, and a write finds one of the
//! others free unless writes themselves hold them all.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::Error;

/// The passes of the reading units: at most `readers` held at once.
#[derive(Debug)]
pub(crate) struct Gate {
    /// Passes not held.
    free: Mutex<u32>,
    /// Signalled when a pass is given back.
    freed: Condvar,
    /// How long a reader waits for a pass (the pool's `connection_timeout`).
    wait: Duration,
}

/// A reading unit's pass, given back when dropped.
#[derive(Debug)]
pub(crate) struct Pass<'a>(&'a Gate);

/// The connections a pool of `max` keeps for writes when the configuration does not say: a
/// quarter, at least one when the pool has two or more.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn default_reserved(max: u32) -> u32 {
    if max < 2 {
        0
    } else {
        (max / 4).max(1)
    }
}

impl Gate {
    /// The gate of a pool of `max` connections of which `reserved` are kept for writes;
    /// `None` when none are (every connection serves readers as well). At least one
    /// connection always serves readers.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn new(max: u32, reserved: u32, wait: Duration) -> Option<Gate> {
        let readers = max.max(1).saturating_sub(reserved).max(1);
        (readers < max).then(|| Gate {
            free: Mutex::new(readers),
            freed: Condvar::new(),
            wait,
        })
    }

    fn lock(&self) -> MutexGuard<'_, u32> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A pass, once one is free; [`Error::Busy`] (503) when none is within the wait.
    pub(crate) fn enter(&self) -> Result<Pass<'_>, Error> {
        let deadline = Instant::now() + self.wait;
        let mut free = self.lock();
        while *free == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!("every connection that reads may hold stayed in use");
                return Err(Error::Busy);
            }
            free = (self.freed.wait_timeout(free, left))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *free -= 1;
        Ok(Pass(self))
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        *self.0.lock() += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn reserves_a_quarter_and_keeps_one_for_readers() {
        assert_eq!(default_reserved(1), 0);
        assert_eq!(default_reserved(2), 1);
        assert_eq!(default_reserved(8), 2);
        assert_eq!(default_reserved(32), 8);
        assert!(Gate::new(8, 0, Duration::ZERO).is_none());
        assert!(Gate::new(1, 1, Duration::ZERO).is_none());
        let gate = Gate::new(2, 5, Duration::from_millis(20)).expect("a gate");
        let pass = gate.enter().expect("the one pass of readers");
        assert!(matches!(gate.enter(), Err(Error::Busy)));
        drop(pass);
        assert!(gate.enter().is_ok());
    }
}
