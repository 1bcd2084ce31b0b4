//! A bound on the password checks that run at once (SPEC.md section 15: a flood of wrong
//! passwords slows only the requests that carry them, not the rest of the server).

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// At most `permits` checks run at once; at most `queue` more wait, each for at most `wait`.
/// Checks beyond that are refused at once, so that waiting checks never hold more than a
/// bounded number of the blocking threads that database work needs too.
#[derive(Debug)]
pub(crate) struct Gate {
    state: Mutex<State>,
    freed: Condvar,
    permits: usize,
    queue: usize,
    wait: Duration,
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    waiting: usize,
}

impl Gate {
    /// A gate for `permits` checks at once (at least one), with a queue of 16 per permit and a
    /// wait of at most 10 s.
    pub(crate) fn new(permits: usize) -> Gate {
        let permits = permits.max(1);
        Gate {
            state: Mutex::default(),
            freed: Condvar::new(),
            permits,
            queue: permits * 16,
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
        self.lock().waiting
    }

    /// Runs `work` once a place is free; `None` (and `work` never runs) when the queue is full
    /// or the wait runs out.
    pub(crate) fn run<T>(&self, work: impl FnOnce() -> T) -> Option<T> {
        let mut state = self.lock();
        if state.running >= self.permits {
            if state.waiting >= self.queue {
                return None;
            }
            state.waiting += 1;
            state = self
                .freed
                .wait_timeout_while(state, self.wait, |s| s.running >= self.permits)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            state.waiting -= 1;
            if state.running >= self.permits {
                return None;
            }
        }
        state.running += 1;
        drop(state);
        let _leave = Leave(self);
        Some(work())
    }
}

/// Gives the place back when the work ends, even by a panic.
struct Leave<'a>(&'a Gate);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.lock().running -= 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn no_more_than_the_permits_run_at_once_and_all_queued_work_runs() {
        let gate = Arc::new(Gate::new(2));
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, now, peak) = (gate.clone(), now.clone(), peak.clone());
                std::thread::spawn(move || {
                    gate.run(|| {
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
            .map(|t| t.join().ok().flatten().is_some())
            .filter(|ran| *ran)
            .count();
        assert_eq!(ran, 8, "8 checks fit the queue of 32");
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_full_queue_refuses_at_once() {
        let gate = Arc::new(Gate::new(1));
        let start = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let holder = {
            let (gate, start, release) = (gate.clone(), start.clone(), release.clone());
            std::thread::spawn(move || {
                gate.run(|| {
                    start.wait();
                    release.wait();
                })
            })
        };
        start.wait(); // the one permit is taken
        gate.lock().waiting = gate.queue; // as if 16 checks were queued
        assert!(gate.run(|| ()).is_none(), "refused, not queued");
        gate.lock().waiting = 0;
        release.wait();
        assert!(holder.join().ok().flatten().is_some());
        assert!(gate.run(|| ()).is_some(), "free again");
    }
}
