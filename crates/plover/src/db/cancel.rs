//! Work that outlives its client (docs/security.md): the database work of a request is
//! cancelled when its client disconnects, and its statements are bounded by a time budget.
//!
//! A unit of work ([`Unit`]) runs on a blocking thread, which knows it as the thread's current
//! unit. While it runs, it is on the watch list ([`watch`]), for as long as the work runs
//! rather than as long as the request's future: one watcher thread per process looks, every
//! [`WATCH_EVERY`], at the client's socket ([`PeerSocket`]) of each unit that has been on the
//! list for a tick or more. Once the client has gone (or actix has closed its connection), it
//! marks the unit cancelled, and on PostgreSQL asks the server to cancel the statement the
//! unit's connection runs (`pg_cancel_backend`). A request pays a push onto the list and a
//! removal from it, each under a short lock, and no timer of its own; the watcher sleeps while
//! the process has had no unit to watch for a while. On SQLite, whose statements cannot be
//! interrupted from outside through diesel, the functions Plover registers (the case folding
//! that `ilike` and search run on every row) end their statement once the unit is cancelled
//! or past its budget: the statements whose cost grows with the size of the text stop within
//! one row.

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, PoisonError, Weak};
use std::time::{Duration, Instant};

#[cfg(feature = "postgres")]
use super::pg_pool::Canceller;

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

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
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

/// Stops work that runs between statements (a loop over rows, computing in Rust) once the
/// client of this thread's unit has gone: the error of a statement interrupted for that reason
/// (503 "The query took too long; try again", which no one reads), so that the write rolls
/// back as one interrupted statement would make it. The time budget is left to the
/// statements.
pub(crate) fn stop_if_client_gone() -> Result<(), crate::error::Error> {
    let gone = CURRENT.with(|c| c.borrow().as_ref().is_some_and(|unit| unit.is_cancelled()));
    if !gone {
        return Ok(());
    }
    let message = Box::new(Interrupted::ClientGone.to_string());
    Err(crate::error::Error::Database(
        diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::Unknown, message),
    ))
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

/// How often the watcher looks at the sockets of the clients of the running units.
pub(crate) const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Ticks that find no unit to watch after which the watcher sleeps until the next one comes,
/// so that an idle process does not wake ten times a second (while it is awake, a request
/// pays no wake-up).
const IDLE_TICKS: u32 = 20;

/// A unit on the watch list.
#[derive(Clone)]
struct Watched {
    id: u64,
    /// The client's socket, weakly: the list does not keep a connection open that actix has
    /// closed, and a unit whose connection is gone is cancelled as one whose client went.
    peer: Weak<socket2::Socket>,
    unit: Arc<Unit>,
    /// Whether a tick has passed since it came: only those are looked at, so the units that
    /// end within a tick (nearly all) cost no look at their socket.
    seen: bool,
    /// PostgreSQL: cancels the statement of the unit's connection.
    #[cfg(feature = "postgres")]
    canceller: Option<Arc<Canceller>>,
}

impl Watched {
    /// Cancels the unit if its client has gone.
    fn check(&self) {
        let gone = match self.peer.upgrade() {
            Some(socket) => PeerSocket(socket).closed(),
            None => true,
        };
        if !gone {
            return;
        }
        self.unit.cancel();
        #[cfg(feature = "postgres")]
        if let Some(canceller) = &self.canceller {
            // The unit's lock is held while the cancel is sent, so that the connection cannot
            // go back to the pool (and run another request's statement) meanwhile.
            let backend = super::lock(&self.unit.pg_backend);
            if let Some(backend) = *backend {
                canceller.cancel(backend);
            }
        }
    }
}

struct WatchList {
    next_id: u64,
    units: Vec<Watched>,
    /// Whether the watcher waits on [`WAKE`] for a unit to come.
    asleep: bool,
}

static WATCH_LIST: Mutex<WatchList> = Mutex::new(WatchList {
    next_id: 0,
    units: Vec::new(),
    asleep: false,
});
static WAKE: Condvar = Condvar::new();
static WATCHER: Once = Once::new();

/// The watch list, whether or not a holder panicked (no code that holds it can leave it
/// inconsistent).
fn watch_list() -> MutexGuard<'static, WatchList> {
    WATCH_LIST.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Puts `unit`, the work of the request whose client is `peer`, on the watch list until the
/// returned guard is dropped: once the client has gone, the unit is cancelled (and on
/// PostgreSQL its statement, through `canceller`). The guard goes with the work, not with the
/// request's future, which actix drops when the connection breaks while the work runs on.
pub(super) fn watch(
    peer: &PeerSocket,
    unit: &Arc<Unit>,
    #[cfg(feature = "postgres")] canceller: Option<Arc<Canceller>>,
) -> Watch {
    WATCHER.call_once(|| {
        if let Err(e) = std::thread::Builder::new()
            .name("plover-watch".into())
            .spawn(watcher)
        {
            log::error!("no watcher of client disconnects: {e}");
        }
    });
    let mut list = watch_list();
    let id = list.next_id;
    list.next_id = id.wrapping_add(1);
    list.units.push(Watched {
        id,
        peer: Arc::downgrade(&peer.0),
        unit: unit.clone(),
        seen: false,
        #[cfg(feature = "postgres")]
        canceller,
    });
    if list.asleep {
        list.asleep = false;
        WAKE.notify_one();
    }
    Watch(id)
}

/// A unit's place on the watch list; dropping it takes the unit off.
#[derive(Debug)]
pub(super) struct Watch(u64);

impl Drop for Watch {
    fn drop(&mut self) {
        let mut list = watch_list();
        let gone = list
            .units
            .iter()
            .position(|w| w.id == self.0)
            .map(|i| list.units.swap_remove(i));
        drop(list);
        // Its references are let go outside the lock.
        drop(gone);
    }
}

/// The watcher thread: every [`WATCH_EVERY`], looks at the clients of the units that were on
/// the list at the tick before and are not cancelled yet, outside the list's lock. Nothing in
/// it unwraps or indexes. It sends the PostgreSQL cancels one after another: one that waits
/// for its connection to the server delays the next looks.
fn watcher() {
    let mut idle = 0;
    loop {
        std::thread::sleep(WATCH_EVERY);
        let mut due = Vec::new();
        {
            let mut list = watch_list();
            if list.units.is_empty() {
                idle += 1;
                if idle >= IDLE_TICKS {
                    list.asleep = true;
                    // A loop: a wait may end without a notification.
                    while list.asleep {
                        list = WAKE.wait(list).unwrap_or_else(PoisonError::into_inner);
                    }
                    idle = 0;
                }
                continue;
            }
            idle = 0;
            for w in &mut list.units {
                if w.seen && !w.unit.is_cancelled() {
                    due.push(w.clone());
                }
                w.seen = true;
            }
        }
        for w in &due {
            w.check();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_between_statements_stops_once_the_client_has_gone_not_at_the_budget() {
        use actix_web::ResponseError;
        assert!(stop_if_client_gone().is_ok(), "no unit: nothing to stop");
        let unit = Unit::new(Duration::from_nanos(1));
        let _entered = enter(unit.clone());
        std::thread::sleep(Duration::from_millis(2));
        assert!(
            stop_if_client_gone().is_ok(),
            "past its budget: left to the statements"
        );
        unit.cancel();
        let Err(error) = stop_if_client_gone() else {
            panic!("the client has gone: the work stops");
        };
        assert_eq!(error.status_code(), 503);
        assert!(
            error.to_string().contains(crate::error::INTERRUPTED),
            "{error}"
        );
    }

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

    /// A server's end of a new connection (non-blocking, as actix's), its client, and the
    /// duplicate of the server's socket.
    #[cfg(unix)]
    fn connection() -> std::io::Result<(std::net::TcpStream, std::net::TcpStream, PeerSocket)> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let client = std::net::TcpStream::connect(listener.local_addr()?)?;
        let (server, _) = listener.accept()?;
        server.set_nonblocking(true)?;
        let peer = PeerSocket::of(&server).ok_or(std::io::ErrorKind::Other)?;
        Ok((server, client, peer))
    }

    #[cfg(unix)]
    fn watched(unit: &Arc<Unit>, peer: &PeerSocket) -> Watch {
        watch(
            peer,
            unit,
            #[cfg(feature = "postgres")]
            None,
        )
    }

    /// How long `unit` took to be cancelled, if within a second.
    #[cfg(unix)]
    fn cancelled_within_a_second(unit: &Unit) -> Option<Duration> {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(1) {
            if unit.is_cancelled() {
                return Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    #[cfg(unix)]
    #[test]
    fn the_watcher_cancels_the_units_whose_clients_went() -> std::io::Result<()> {
        // A client that stays: its unit runs on.
        let (_server, client, peer) = connection()?;
        let unit = Unit::new(Duration::ZERO);
        let watch = watched(&unit, &peer);
        std::thread::sleep(3 * WATCH_EVERY);
        assert!(!unit.is_cancelled());
        // It goes: the next tick cancels the unit (a second is the bound a loaded machine
        // keeps).
        drop(client);
        assert!(cancelled_within_a_second(&unit).is_some());
        drop(watch);
        assert!(watch_list()
            .units
            .iter()
            .all(|w| !Arc::ptr_eq(&w.unit, &unit)));

        // A connection that actix closed (its socket is gone): the unit is cancelled too, and
        // the list does not keep the socket open.
        let (server, _client, peer) = connection()?;
        let unit = Unit::new(Duration::ZERO);
        let _watch = watched(&unit, &peer);
        drop((server, peer));
        assert!(cancelled_within_a_second(&unit).is_some());

        // A unit off the list is not looked at.
        let (_server, client, peer) = connection()?;
        let unit = Unit::new(Duration::ZERO);
        drop(watched(&unit, &peer));
        drop(client);
        assert_eq!(cancelled_within_a_second(&unit), None);
        Ok(())
    }
}
