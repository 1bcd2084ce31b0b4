//! One password check for requests that bring the same credentials at once: the first runs
//! it (taking a place in the gate), the others wait for its answer without a place of their
//! own, so that a client's parallel requests with one correct, not yet cached credential are
//! not refused for holding more than its share of the checks.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::gate::Refused;

/// The most requests that wait for one check; more run a check of their own.
const MAX_FOLLOWERS: usize = 64;

/// The longest a request waits for another's check (the gate's wait and a slow check).
const MAX_WAIT: Duration = Duration::from_secs(30);

/// The checks running now, by the digest of their credentials.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    running: Mutex<HashMap<[u8; 32], Arc<Flight>>>,
}

#[derive(Debug, Default)]
struct Flight {
    /// The answer once the check ended, and how many wait for it.
    state: Mutex<(Option<Result<bool, Refused>>, usize)>,
    done: Condvar,
}

impl Flights {
    /// The answer of `check` for the credentials whose digest is `key`: the answer of the same
    /// check running now for another request if there is one (its refusal excepted: then
    /// `check` runs for this request too), else `check`'s own.
    pub(crate) fn once(
        &self,
        key: [u8; 32],
        check: impl FnOnce() -> Result<bool, Refused>,
    ) -> Result<bool, Refused> {
        let (flight, leads) = {
            let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            match running.get(&key) {
                Some(flight) => (flight.clone(), false),
                None => {
                    let flight = Arc::new(Flight::default());
                    running.insert(key, flight.clone());
                    (flight, true)
                }
            }
        };
        if leads {
            let mut lead = Lead {
                flights: self,
                key,
                flight,
                answer: None,
            };
            let answer = check();
            lead.answer = Some(answer);
            return answer;
        }
        match flight.follow() {
            Some(Ok(verified)) => Ok(verified),
            _ => check(),
        }
    }
}

impl Flights {
    /// How many requests wait for another's check now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running
            .values()
            .map(|f| f.state.lock().map_or(0, |s| s.1))
            .sum()
    }
}

impl Flight {
    /// Waits for the answer (`None` when too many wait already, or the wait ran out).
    fn follow(&self) -> Option<Result<bool, Refused>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.1 >= MAX_FOLLOWERS {
            return None;
        }
        state.1 += 1;
        let deadline = Instant::now() + MAX_WAIT;
        while state.0.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .done
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.1 -= 1;
        state.0
    }
}

/// Publishes the leader's answer when its check ends, even by a panic (then as a refusal:
/// each follower checks for itself).
struct Lead<'a> {
    flights: &'a Flights,
    key: [u8; 32],
    flight: Arc<Flight>,
    answer: Option<Result<bool, Refused>>,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        (self
            .flights
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
        .remove(&self.key);
        let mut state = (self.flight.state.lock()).unwrap_or_else(PoisonError::into_inner);
        state.0 = Some(self.answer.unwrap_or(Err(Refused::Full)));
        drop(state);
        self.flight.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Eight requests with the same credentials at once: one check, eight answers.
    #[test]
    fn requests_with_the_same_credentials_share_one_check() {
        let flights = Arc::new(Flights::default());
        let checks = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (flights, checks) = (flights.clone(), checks.clone());
                std::thread::spawn(move || {
                    let waiting = flights.clone();
                    flights.once([7; 32], || {
                        checks.fetch_add(1, Ordering::SeqCst);
                        // The first holds its check until the seven others wait for it.
                        while waiting.waiting() < 7 {
                            std::thread::yield_now();
                        }
                        Ok(true)
                    })
                })
            })
            .collect();
        for thread in threads {
            assert_eq!(thread.join().ok(), Some(Ok(true)));
        }
        assert_eq!(checks.load(Ordering::SeqCst), 1);
        assert_eq!(flights.waiting(), 0);
        assert!(flights.running.lock().is_ok_and(|r| r.is_empty()));
    }
}
