//! A bound on the password checks that run at once, shared fairly between client addresses
//! (docs/security.md: a flood of wrong passwords slows only the requests that carry them, not
//! the rest of the server, and not other clients' logins).

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ClientKey;

/// At most `permits` checks run at once; at most `queue` more wait, first come first served,
/// each for at most `wait`. One client address holds at most `share` of these places (running
/// or waiting). Checks beyond that are refused at once, so that waiting checks never hold more
/// than a bounded number of the blocking threads that database work needs too, and one
/// address's flood never fills the line in front of another's login.
#[derive(Debug)]
pub(crate) struct Gate {
    state: Mutex<State>,
    freed: Condvar,
    permits: usize,
    queue: usize,
    share: usize,
    wait: Duration,
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    /// The tickets of the waiting checks, oldest first.
    waiting: VecDeque<u64>,
    next_ticket: u64,
    /// Places (running or waiting) per address.
    held: HashMap<ClientKey, usize>,
}

impl State {
    fn release(&mut self, client: ClientKey) {
        if let Some(held) = self.held.get_mut(&client) {
            *held -= 1;
            if *held == 0 {
                self.held.remove(&client);
            }
        }
    }
}

/// Why a check did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The address holds its share of the places.
    OverShare,
    /// Every place is taken, or the wait ran out.
    Full,
}

impl Gate {
    /// A gate for `permits` checks at once (at least one), with a queue of 16 per permit and a
    /// wait of at most 10 s; one address holds at most `share` (0 to 1) of the places, at least
    /// one.
    pub(crate) fn new(permits: usize, share: f64) -> Gate {
        let permits = permits.max(1);
        let queue = permits * 16;
        let places = (permits + queue) as f64 * share.clamp(0.0, 1.0);
        Gate {
            state: Mutex::default(),
            freed: Condvar::new(),
            permits,
            queue,
            share: (places as usize).max(1),
            wait: Duration::from_secs(10),
        }
    }

    /// Half the machine's cores (at least one): the other half stays free for requests that
    /// carry no password.
    pub(crate) fn default_permits() -> usize {
        std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many checks wait for a place now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    /// Runs `work` for `client` once a place is free and the checks that waited before it have
    /// started; refused (and `work` never runs) when `client` holds its share, the queue is
    /// full, or the wait runs out.
    pub(crate) fn run<T>(&self, client: ClientKey, work: impl FnOnce() -> T) -> Result<T, Refused> {
        let mut state = self.lock();
        if state.held.get(&client).copied().unwrap_or(0) >= self.share {
            return Err(Refused::OverShare);
        }
        if state.running >= self.permits || !state.waiting.is_empty() {
            if state.waiting.len() >= self.queue {
                return Err(Refused::Full);
            }
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting.push_back(ticket);
            *state.held.entry(client).or_default() += 1;
            let deadline = Instant::now() + self.wait;
            let turn = |s: &State| s.running < self.permits && s.waiting.front() == Some(&ticket);
            while !turn(&state) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                state = self
                    .freed
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            let ready = turn(&state);
            state.waiting.retain(|t| *t != ticket);
            if !ready {
                state.release(client);
                drop(state);
                // The line moved: the next one may be first now.
                self.freed.notify_all();
                return Err(Refused::Full);
            }
        } else {
            *state.held.entry(client).or_default() += 1;
        }
        state.running += 1;
        drop(state);
        let _leave = Leave(self, client);
        Ok(work())
    }
}

/// Gives the place back when the work ends, even by a panic.
struct Leave<'a>(&'a Gate, ClientKey);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.running -= 1;
        state.release(self.1);
        drop(state);
        self.0.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    fn client(last: u8) -> ClientKey {
        ClientKey::of(Some(std::net::IpAddr::from([127, 0, 0, last])))
    }

    #[test]
    fn no_more_than_the_permits_run_at_once_and_all_queued_work_runs() {
        let gate = Arc::new(Gate::new(2, 1.0));
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, now, peak) = (gate.clone(), now.clone(), peak.clone());
                std::thread::spawn(move || {
                    gate.run(client(2), || {
                        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(n, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        now.fetch_sub(1, Ordering::SeqCst);
                    })
                })
            })
            .collect();
        let ran = threads
            .into_iter()
            .map(|t| t.join().map(|r| r.is_ok()).unwrap_or(false))
            .filter(|ran| *ran)
            .count();
        assert_eq!(ran, 8, "8 checks fit the queue of 32");
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert!(gate.lock().held.is_empty(), "every place given back");
    }

    /// 127.0.0.2 holds the one permit and one waiting place: a third check of its own is
    /// refused at once, and 127.0.0.3 waits in line and runs.
    #[test]
    fn an_address_holds_at_most_its_share_and_others_queue_behind_it() {
        // 1 permit + 16 waiting places, an eighth each: 2 places per address.
        let gate = Arc::new(Gate::new(1, 0.125));
        assert_eq!(gate.share, 2);
        let start = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let holder = {
            let (gate, start, release) = (gate.clone(), start.clone(), release.clone());
            std::thread::spawn(move || {
                gate.run(client(2), || {
                    start.wait();
                    release.wait();
                })
            })
        };
        start.wait(); // the one permit is taken by 127.0.0.2
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.run(client(2), || "second of .2"))
        };
        while gate.waiting() < 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            gate.run(client(2), || ()),
            Err(Refused::OverShare),
            "a third place for 127.0.0.2 is refused at once"
        );
        let other = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.run(client(3), || "from .3"))
        };
        while gate.waiting() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        release.wait();
        assert!(holder.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(waiter.join().ok(), Some(Ok("second of .2")));
        assert_eq!(other.join().ok(), Some(Ok("from .3")));
        assert!(gate.lock().held.is_empty());
    }

    #[test]
    fn a_full_queue_refuses_at_once() {
        let gate = Arc::new(Gate::new(1, 1.0));
        let start = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let holder = {
            let (gate, start, release) = (gate.clone(), start.clone(), release.clone());
            std::thread::spawn(move || {
                gate.run(client(2), || {
                    start.wait();
                    release.wait();
                })
            })
        };
        start.wait(); // the one permit is taken
        gate.lock().waiting = (0..16).collect(); // as if 16 checks were queued
        assert_eq!(
            gate.run(client(3), || ()),
            Err(Refused::Full),
            "refused, not queued"
        );
        gate.lock().waiting.clear();
        release.wait();
        assert!(holder.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(gate.run(client(3), || ()), Ok(()), "free again");
    }
}
