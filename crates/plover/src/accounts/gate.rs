//! A bound on the password checks that run at once, shared fairly between client addresses
//! (docs/security.md: a flood of wrong passwords slows only the requests that carry them, not
//! the rest of the server, and not other clients' logins).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::server::ClientKey;

/// At most `permits` checks run at once; at most `queue` more wait in each of two lanes, first
/// come first served, each for at most `wait`. One client address holds at most `share` of
/// each lane's places (running or waiting). Checks beyond that are refused at once, so that
/// waiting checks never hold more than a bounded number of the blocking threads that database
/// work needs too, and one address's flood never fills the line in front of another's login.
///
/// The reserved lane goes first: it takes the check of a known username that has no failed
/// check since its last success (within the forget time) and no other check in that lane now.
/// Every other check (an unknown username, or one whose last check failed) waits in the shared
/// lane. A flood of wrong passwords, spread over as many addresses as it likes, thus fills only
/// the shared lane after each username's first failure, and a known user's correct login waits
/// only for the checks running and the reserved checks ahead of it.
#[derive(Debug)]
pub(crate) struct Gate {
    state: Mutex<State>,
    freed: Condvar,
    permits: usize,
    queue: usize,
    share: usize,
    wait: Duration,
    /// How long a failed check keeps its username out of the reserved lane.
    forget: Duration,
}

/// The two lanes: the reserved one (index 0) and the shared one.
const RESERVED: usize = 0;
const SHARED: usize = 1;

/// The most usernames remembered with a failed check (after dropping those forgotten, new
/// failures are not remembered).
const FAILED_NAMES: usize = 100_000;

#[derive(Debug, Default)]
struct State {
    running: usize,
    /// The tickets of the waiting checks of each lane, oldest first.
    waiting: [VecDeque<u64>; 2],
    next_ticket: u64,
    /// Places (running or waiting) per address, in each lane.
    held: [HashMap<ClientKey, usize>; 2],
    /// The usernames with a check in the reserved lane now.
    reserved: HashSet<String>,
    /// The usernames whose last check failed, and when.
    failed: HashMap<String, Instant>,
}

impl State {
    fn release(&mut self, lane: usize, client: ClientKey) {
        if let Some(held) = self.held[lane].get_mut(&client) {
            *held -= 1;
            if *held == 0 {
                self.held[lane].remove(&client);
            }
        }
    }

    /// Whether a check of `name` may take the reserved lane.
    fn may_reserve(&self, name: &str, forget: Duration) -> bool {
        !self.reserved.contains(name)
            && self
                .failed
                .get(name)
                .is_none_or(|when| when.elapsed() >= forget)
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
    /// A gate for `permits` checks at once (at least one), with a queue of 16 per permit in each
    /// lane and a wait of at most 10 s; one address holds at most `share` (0 to 1) of a lane's
    /// places, at least one. A failed check keeps its username out of the reserved lane for
    /// `forget`, or until a check of it succeeds.
    pub(crate) fn new(permits: usize, share: f64, forget: Duration) -> Gate {
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
            forget,
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
        let state = self.lock();
        state.waiting[RESERVED].len() + state.waiting[SHARED].len()
    }

    /// Notes that the check of the known username `name` failed: its checks wait in the shared
    /// lane until one succeeds or the forget time passes.
    pub(crate) fn failed(&self, name: &str) {
        let mut state = self.lock();
        let forget = self.forget;
        if state.failed.len() >= FAILED_NAMES && !state.failed.contains_key(name) {
            state.failed.retain(|_, when| when.elapsed() < forget);
            if state.failed.len() >= FAILED_NAMES {
                return;
            }
        }
        state.failed.insert(name.to_owned(), Instant::now());
    }

    /// Notes that the check of `name` succeeded: it may take the reserved lane again.
    pub(crate) fn succeeded(&self, name: &str) {
        self.lock().failed.remove(name);
    }

    /// Runs `work` for `client` once a place is free and the checks that waited before it in
    /// its lane (and in the reserved lane, for a shared one) have started; refused (and `work`
    /// never runs) when `client` holds its share of the lane, the lane's queue is full, or the
    /// wait runs out. `known` is the username of a known user, which may take the reserved
    /// lane; `None` for an unknown username.
    pub(crate) fn run<T>(
        &self,
        client: ClientKey,
        known: Option<&str>,
        work: impl FnOnce() -> T,
    ) -> Result<T, Refused> {
        let mut state = self.lock();
        let reserved = known.filter(|name| state.may_reserve(name, self.forget));
        let lane = if reserved.is_some() { RESERVED } else { SHARED };
        if state.held[lane].get(&client).copied().unwrap_or(0) >= self.share {
            return Err(Refused::OverShare);
        }
        let ahead = |s: &State| {
            s.running >= self.permits
                || !s.waiting[lane].is_empty()
                || (lane == SHARED && !s.waiting[RESERVED].is_empty())
        };
        if ahead(&state) && state.waiting[lane].len() >= self.queue {
            return Err(Refused::Full);
        }
        *state.held[lane].entry(client).or_default() += 1;
        if let Some(name) = reserved {
            state.reserved.insert(name.to_owned());
        }
        let mut leave = Leave {
            gate: self,
            lane,
            client,
            name: reserved,
            ran: false,
        };
        if ahead(&state) {
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting[lane].push_back(ticket);
            let deadline = Instant::now() + self.wait;
            let turn = |s: &State| {
                s.running < self.permits
                    && s.waiting[lane].front() == Some(&ticket)
                    && (lane == RESERVED || s.waiting[RESERVED].is_empty())
            };
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
            state.waiting[lane].retain(|t| *t != ticket);
            if !ready {
                // `leave` gives the place back; the line moved: the next one may be first now.
                drop(state);
                drop(leave);
                return Err(Refused::Full);
            }
        }
        state.running += 1;
        drop(state);
        leave.ran = true;
        Ok(work())
    }
}

/// Gives the place back when the work ends (even by a panic) or its wait ran out.
struct Leave<'a> {
    gate: &'a Gate,
    lane: usize,
    client: ClientKey,
    name: Option<&'a str>,
    ran: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let mut state = self.gate.lock();
        if self.ran {
            state.running -= 1;
        }
        state.release(self.lane, self.client);
        if let Some(name) = self.name {
            state.reserved.remove(name);
        }
        drop(state);
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    const FORGET: Duration = Duration::from_secs(900);

    fn client(last: u8) -> ClientKey {
        ClientKey::of(Some(std::net::IpAddr::from([127, 0, 0, last])))
    }

    /// A check of 127.0.0.2 that holds the gate's one permit once this returns, until the
    /// barrier returned is passed: its thread and that barrier.
    fn hold_the_permit(
        gate: &Arc<Gate>,
    ) -> (std::thread::JoinHandle<Result<(), Refused>>, Arc<Barrier>) {
        let start = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let holder = {
            let (gate, start, release) = (gate.clone(), start.clone(), release.clone());
            std::thread::spawn(move || {
                gate.run(client(2), None, || {
                    start.wait();
                    release.wait();
                })
            })
        };
        start.wait();
        (holder, release)
    }

    #[test]
    fn no_more_than_the_permits_run_at_once_and_all_queued_work_runs() {
        let gate = Arc::new(Gate::new(2, 1.0, FORGET));
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, now, peak) = (gate.clone(), now.clone(), peak.clone());
                std::thread::spawn(move || {
                    gate.run(client(2), None, || {
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
        assert!(
            gate.lock().held.iter().all(HashMap::is_empty),
            "every place given back"
        );
    }

    /// 127.0.0.2 holds the one permit and one waiting place: a third check of its own is
    /// refused at once, and 127.0.0.3 waits in line and runs.
    #[test]
    fn an_address_holds_at_most_its_share_and_others_queue_behind_it() {
        // 1 permit + 16 waiting places, an eighth each: 2 places per address.
        let gate = Arc::new(Gate::new(1, 0.125, FORGET));
        assert_eq!(gate.share, 2);
        let (holder, release) = hold_the_permit(&gate); // by 127.0.0.2
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.run(client(2), None, || "second of .2"))
        };
        while gate.waiting() < 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            gate.run(client(2), None, || ()),
            Err(Refused::OverShare),
            "a third place for 127.0.0.2 is refused at once"
        );
        let other = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.run(client(3), None, || "from .3"))
        };
        while gate.waiting() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        release.wait();
        assert!(holder.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(waiter.join().ok(), Some(Ok("second of .2")));
        assert_eq!(other.join().ok(), Some(Ok("from .3")));
        assert!(gate.lock().held.iter().all(HashMap::is_empty));
    }

    #[test]
    fn a_full_queue_refuses_at_once() {
        let gate = Arc::new(Gate::new(1, 1.0, FORGET));
        let (holder, release) = hold_the_permit(&gate);
        gate.lock().waiting[SHARED] = (0..16).collect(); // as if 16 checks were queued
        assert_eq!(
            gate.run(client(3), None, || ()),
            Err(Refused::Full),
            "refused, not queued"
        );
        gate.lock().waiting[SHARED].clear();
        release.wait();
        assert!(holder.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(gate.run(client(3), None, || ()), Ok(()), "free again");
    }

    /// The one permit is taken and the shared lane's queue is full (a flood of wrong
    /// passwords): the check of a known username without failures still waits in the reserved
    /// lane, and runs next. A username whose check failed, or with a check in the reserved lane
    /// already, waits in the shared lane until a check of it succeeds.
    #[test]
    fn a_known_username_without_failures_goes_ahead_of_a_full_shared_lane() {
        let gate = Arc::new(Gate::new(1, 1.0, FORGET));
        let (holder, release) = hold_the_permit(&gate); // by the flood
        gate.lock().waiting[SHARED] = (1000..1016).collect(); // and its queue is full
        assert_eq!(gate.run(client(3), None, || ()), Err(Refused::Full));
        let known = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.run(client(4), Some("alice"), || "alice checked"))
        };
        while gate.waiting() < 17 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            !gate.lock().may_reserve("alice", FORGET),
            "one check of a name in the reserved lane at a time"
        );
        release.wait();
        assert!(holder.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(known.join().ok(), Some(Ok("alice checked")));
        gate.lock().waiting[SHARED].clear();
        assert!(gate.lock().may_reserve("alice", FORGET));
        gate.failed("alice");
        assert!(!gate.lock().may_reserve("alice", FORGET));
        assert!(
            gate.lock().may_reserve("alice", Duration::ZERO),
            "forgotten in time"
        );
        gate.succeeded("alice");
        assert!(gate.lock().may_reserve("alice", FORGET));
        assert!(gate.lock().held.iter().all(HashMap::is_empty));
        assert!(gate.lock().reserved.is_empty());
    }
}
