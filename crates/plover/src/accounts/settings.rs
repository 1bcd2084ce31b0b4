//! The settings of an `Auth`, set by its builder methods.

use std::fmt;
use std::time::Duration;

use actix_web::cookie::Key;

use super::gate::Gate;
use super::password::DEFAULT_COST;
use crate::db::Database;

/// Default session lifetime: 14 days.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(14 * 24 * 3600);

/// The settings of an [`Auth`] (see its builder methods).
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) db: Database,
    pub(crate) cost: u32,
    pub(crate) prefix: String,
    pub(crate) default_next_url: String,
    pub(crate) key: Key,
    pub(crate) lifetime: Duration,
    pub(crate) secure: bool,
    pub(crate) password_checks: usize,
}

impl Settings {
    pub(crate) fn new(db: Database) -> Settings {
        Settings {
            db,
            cost: DEFAULT_COST,
            prefix: "/accounts".into(),
            default_next_url: "/".into(),
            key: Key::generate(),
            lifetime: DEFAULT_LIFETIME,
            secure: false,
            password_checks: Gate::default_permits(),
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("cost", &self.cost)
            .field("prefix", &self.prefix)
            .field("default_next_url", &self.default_next_url)
            .field("lifetime", &self.lifetime)
            .field("secure", &self.secure)
            .finish_non_exhaustive()
    }
}
