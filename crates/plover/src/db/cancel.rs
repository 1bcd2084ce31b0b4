//! Work that outlives its client (docs/security.md): the database work of a request is
//! cancelled when its client disconnects, and its statements are bounded by a time budget.
//!
//! A unit of work ([`Unit`]) runs on a blocking thread, which knows it as the thread's current
//! unit. While it runs, the request's task looks at the client's socket ([`PeerSocket`]) from
//! time to time; once the client has gone, it marks the unit cancelled, and on PostgreSQL asks
//! the server to cancel the statement the unit's connection runs (`pg_cancel_backend`). On
//! SQLite, whose statements cannot be interrupted from outside through diesel, the functions
//! Plover registers (the case folding that `ilike` and search run on every row) end their
//! statement once the unit is cancelled or past its budget: the statements whose cost grows
//! with the size of the text stop within one row.

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The database work of one request.
#[derive(Debug)]
pub(crate) struct Unit {
    cancelled: AtomicBool,
    /// When its statements are past the budget (`None`: no budget).
    deadline: Option<Instant>,
    /// PostgreSQL: the backend process of the connection the unit holds now, if any.
    #[cfg(feature = "postgres")]
    pub(super) pg_backend: std::sync::Mutex<Option<i32>>,
}

/// Why a statement was interrupted; the text ends the statement's error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupted {
    /// The client went away.
    ClientGone,
    /// The statement ran past the time budget.
    OverBudget,
}

use crate::error::INTERRUPTED;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interrupted::ClientGone => write!(f, "{INTERRUPTED}: the client went away"),
            Interrupted::OverBudget => write!(f, "{INTERRUPTED}: it ran past its time budget"),
        }
    }
}

impl std::error::Error for Interrupted {}

impl Unit {
    /// A unit whose statements may run for `budget` from now (zero: no budget).
    pub(crate) fn new(budget: Duration) -> Arc<Unit> {
        Arc::new(Unit {
            cancelled: AtomicBool::new(false),
            deadline: (!budget.is_zero()).then(|| Instant::now() + budget),
            #[cfg(feature = "postgres")]
            pg_backend: std::sync::Mutex::new(None),
        })
    }

    /// Marks the unit cancelled: its client went away.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    fn interrupted(&self) -> Option<Interrupted> {
        if self.cancelled.load(Ordering::Acquire) {
            return Some(Interrupted::ClientGone);
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Some(Interrupted::OverBudget),
            _ => None,
        }
    }
}

thread_local! {
    /// The unit the thread runs.
    static CURRENT: RefCell<Option<Arc<Unit>>> = const { RefCell::new(None) };
}

/// The unit this thread runs, if any.
#[cfg(feature = "postgres")]
pub(crate) fn current() -> Option<Arc<Unit>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Makes `unit` this thread's current unit until the guard is dropped.
pub(crate) fn enter(unit: Arc<Unit>) -> Entered {
    CURRENT.with(|c| *c.borrow_mut() = Some(unit));
    Entered(())
}

/// Ends a unit's time as the thread's current unit.
#[derive(Debug)]
pub(crate) struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}

/// Whether the statement running on this thread must stop. Called for every row a registered
/// function sees (an atomic load and a read of the monotonic clock, tens of nanoseconds).
pub(crate) fn interrupted() -> Option<Interrupted> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|unit| unit.interrupted()))
}

/// A duplicate of a client connection's socket, to notice that the client went away while its
/// request runs. Plover's [`Server`](crate::server::Server) attaches one to every connection.
#[derive(Debug, Clone)]
pub(crate) struct PeerSocket(Arc<socket2::Socket>);

impl PeerSocket {
    /// A duplicate of `io`'s socket (`None` where it cannot be made).
    #[cfg(unix)]
    pub(crate) fn of(io: &impl std::os::fd::AsFd) -> Option<PeerSocket> {
        let fd = io.as_fd().try_clone_to_owned().ok()?;
        Some(PeerSocket(Arc::new(socket2::Socket::from(fd))))
    }

    /// Whether the client closed its side or the connection broke: a peek at the socket finds
    /// its end (a socket with data waiting, or none yet, is open).
    pub(crate) fn closed(&self) -> bool {
        let mut byte = [MaybeUninit::<u8>::uninit(); 1];
        match self.0.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ),
        }
    }
}

/// How often a running request looks at its client's socket.
pub(crate) const WATCH_EVERY: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_is_interrupted_when_cancelled_or_past_its_budget() {
        assert_eq!(interrupted(), None, "no unit: never");
        let unit = Unit::new(Duration::from_secs(3600));
        let entered = enter(unit.clone());
        assert_eq!(interrupted(), None);
        unit.cancel();
        assert_eq!(interrupted(), Some(Interrupted::ClientGone));
        drop(entered);
        assert_eq!(interrupted(), None);
        let late = Unit::new(Duration::from_millis(50));
        let _entered = enter(late);
        assert_eq!(interrupted(), None);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(interrupted(), Some(Interrupted::OverBudget));
    }

    #[cfg(unix)]
    #[test]
    fn a_peer_socket_sees_its_client_go() -> std::io::Result<()> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let client = std::net::TcpStream::connect(listener.local_addr()?)?;
        let (server, _) = listener.accept()?;
        server.set_nonblocking(true)?;
        let peer = PeerSocket::of(&server).ok_or(std::io::ErrorKind::Other)?;
        assert!(!peer.closed());
        std::io::Write::write_all(&mut &client, b"GET / HTTP/1.1\r\n")?;
        std::thread::sleep(Duration::from_millis(20));
        assert!(!peer.closed(), "data waiting is not an end");
        // The server reads the request, as actix does, then the client goes.
        let mut buf = [0u8; 64];
        assert_eq!(std::io::Read::read(&mut &server, &mut buf)?, 16);
        assert!(!peer.closed());
        drop(client);
        std::thread::sleep(Duration::from_millis(20));
        assert!(peer.closed());
        Ok(())
    }
}
