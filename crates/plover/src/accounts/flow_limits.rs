//! The limits of the flows that send mail: requests per client address (the login throttle's
//! allowance), reset mails per account (3 an hour), and the time a mail takes to send, which
//! a request that sends none spends all the same.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::accounts::throttle::{LoginLimits, Refusal, Store, Throttle};
use crate::db::LazyConn;
use crate::server::ClientKey;

/// Reset mails one account gets per hour, at most.
pub(crate) const MAILS_PER_HOUR: u32 = 3;

const HOUR: Duration = Duration::from_secs(3600);

/// The counts of one `Auth`'s reset and sign-up requests, and its mails' sending time.
#[derive(Debug)]
pub(crate) struct Limits {
    /// Every reset request and sign-up counts against its address, with the login throttle's
    /// allowance per address.
    addresses: Throttle,
    /// Every reset mail counts against its account.
    mails: Throttle,
    /// The time a mail took to send, as a moving average, in microseconds.
    send_micros: AtomicU64,
}

impl Limits {
    /// The limits of the users of table `table`, with the login throttle's `limits`, counted
    /// where the login failures are (`store`).
    pub(crate) fn new(limits: LoginLimits, table: &str, store: Store) -> Limits {
        let addresses = LoginLimits {
            per_username: u32::MAX,
            ..limits
        };
        let mails = LoginLimits {
            per_username: MAILS_PER_HOUR,
            per_address: u32::MAX,
            window: HOUR,
            first_delay: HOUR,
            log_interval: limits.log_interval,
        };
        Limits {
            addresses: Throttle::new(addresses, &format!("flows:{table}"), store),
            mails: Throttle::new(mails, &format!("mail:{table}"), store),
            send_micros: AtomicU64::new(0),
        }
    }

    /// Counts one request from `client`; `Err(wait)` when the address is over its allowance
    /// (the request is then not counted again).
    pub(crate) fn request(&self, db: &mut LazyConn<'_>, client: ClientKey) -> Result<(), Duration> {
        if let Err(wait) = self.addresses.check(db, client, "") {
            self.addresses.refused(client, Refusal::Throttled);
            return Err(wait);
        }
        self.addresses.failed(db, client, "");
        Ok(())
    }

    /// Whether the account with primary key `pk` may get one more mail now; if so, it is
    /// counted.
    pub(crate) fn mail(&self, db: &mut LazyConn<'_>, pk: i64) -> bool {
        let (anyone, account) = (ClientKey::of(None), pk.to_string());
        if self.mails.check(db, anyone, &account).is_err() {
            self.mails.refused(anyone, Refusal::Throttled);
            return false;
        }
        self.mails.failed(db, anyone, &account);
        true
    }

    /// Notes that a mail took `took` to send.
    pub(crate) fn sent(&self, took: Duration) {
        let took = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let before = self.send_micros.load(Ordering::Relaxed);
        let average = if before == 0 {
            took
        } else {
            before - before / 8 + took / 8
        };
        self.send_micros.store(average, Ordering::Relaxed);
    }

    /// The time a mail takes to send, on average: what a request that sends none waits.
    pub(crate) fn send_time(&self) -> Duration {
        Duration::from_micros(self.send_micros.load(Ordering::Relaxed))
    }
}
