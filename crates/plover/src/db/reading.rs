//! The memory that the text a request reads from the database holds (docs/security.md): a
//! budget per [`Database`](super::Database), option `read_memory` (bytes, default 256 MiB).
//!
//! The guard's response-memory budget counts an answer once it is built; this one counts the
//! rows it is built from while they are read, so that a request whose rows would not fit (an
//! aggregate grouped by a long text, a page of megabyte-long values) stops at the bound instead
//! of growing the process first. The text of every cell read by a request's database work
//! ([`enter`], on the blocking thread that runs it) is counted; the first
//! [`FREE`] bytes of a request are not reserved (most requests read far less), the rest is
//! reserved from the database's budget in steps of at least [`STEP`] and given back when the
//! work ends. A read that does not fit fails the statement with [`ReadBudgetFull`](crate::error::ReadBudgetFull), which the request
//! answers 503 with `Retry-After: 1` ([`Error::Busy`](crate::Error::Busy)), as the response
//! budget sheds an answer that does not fit.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::ReadBudgetFull as Full;

/// Bytes of text a request reads before any is reserved (64 KiB).
pub(crate) const FREE: usize = 64 << 10;
/// The least a reservation takes from the budget at once (1 MiB).
pub(crate) const STEP: usize = 1 << 20;
/// The default budget (256 MiB, as the response-memory budget's).
pub(crate) const DEFAULT_BYTES: usize = 256 << 20;

/// The bytes the reads of a database's requests may hold at once.
#[derive(Debug)]
pub(crate) struct Budget {
    held: AtomicUsize,
    limit: usize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            held: AtomicUsize::new(0),
            limit,
        })
    }

    /// The bytes held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, unless they do not fit.
    fn take(&self, bytes: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }
}

thread_local! {
    /// The budget of the work running on this thread (`None`: none is counted).
    static BUDGET: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
    /// The bytes of text the work has read.
    static READ: Cell<usize> = const { Cell::new(0) };
    /// The bytes of the budget the work holds.
    static RESERVED: Cell<usize> = const { Cell::new(0) };
}

/// Counts the reads of the work that runs on this thread against `budget` until the returned
/// guard is dropped, which gives back what they held.
pub(crate) fn enter(budget: Arc<Budget>) -> Entered {
    BUDGET.set(Some(budget));
    READ.set(0);
    RESERVED.set(0);
    Entered(())
}

/// The end of a unit of work's counting: gives its reservation back.
#[derive(Debug)]
pub(crate) struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(budget) = BUDGET.take() {
            budget.give_back(RESERVED.replace(0));
        }
        READ.set(0);
    }
}

/// Counts `bytes` read by the work on this thread; [`Full`] when they do not fit its budget.
/// Costs an addition and a comparison until the work has read [`FREE`] bytes.
pub(crate) fn count(bytes: usize) -> Result<(), Full> {
    let read = READ.get().saturating_add(bytes);
    READ.set(read);
    let reserved = RESERVED.get();
    if read <= FREE.saturating_add(reserved) {
        return Ok(());
    }
    BUDGET.with_borrow(|budget| {
        let Some(budget) = budget else {
            return Ok(());
        };
        let step = (read - FREE - reserved).max(STEP);
        if budget.take(step) {
            RESERVED.set(reserved + step);
            Ok(())
        } else if budget.take(read - FREE - reserved) {
            RESERVED.set(read - FREE);
            Ok(())
        } else {
            Err(Full)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_reserved_past_the_free_bytes_and_given_back_at_the_end() {
        let budget = Budget::new(4 * STEP);
        {
            let _entered = enter(budget.clone());
            assert_eq!(count(FREE), Ok(()));
            assert_eq!(budget.held(), 0, "the first FREE bytes are not reserved");
            assert_eq!(count(1), Ok(()));
            assert_eq!(budget.held(), STEP, "a reservation takes a whole step");
            assert_eq!(count(STEP - 1), Ok(()));
            assert_eq!(budget.held(), STEP);
            assert_eq!(count(3 * STEP), Ok(()), "the rest of the budget fits");
            assert_eq!(budget.held(), 4 * STEP);
            assert_eq!(count(1), Err(Full), "one byte more does not");
        }
        assert_eq!(budget.held(), 0, "the end of the work gives it all back");
    }

    #[test]
    fn work_shares_its_databases_budget_and_nothing_is_counted_outside_work() {
        let budget = Budget::new(2 * STEP);
        let _entered = enter(budget.clone());
        assert_eq!(count(FREE + STEP), Ok(()));
        let other = {
            let budget = budget.clone();
            std::thread::spawn(move || {
                let _entered = enter(budget);
                count(FREE + 2 * STEP)
            })
        };
        assert_eq!(
            other.join().ok(),
            Some(Err(Full)),
            "two steps do not fit beside one"
        );
        assert_eq!(budget.held(), STEP);
        let outside = std::thread::spawn(|| count(usize::MAX)).join().ok();
        assert_eq!(
            outside,
            Some(Ok(())),
            "reads outside a unit of work are not counted"
        );
    }
}
