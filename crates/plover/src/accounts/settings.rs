//! The settings of an `Auth`, set by its builder methods: of its users and passwords, and (with
//! the `accounts` feature) of its sessions.

use std::fmt;
#[cfg(feature = "accounts")]
use std::time::Duration;

#[cfg(feature = "accounts")]
use actix_web::cookie::Key;

use super::gate::Gate;
use super::password::DEFAULT_COST;
use super::throttle::{LoginLimits, Store};
use crate::db::Database;

/// The settings of an [`Auth`](super::Auth) (see its builder methods).
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) db: Database,
    pub(crate) cost: u32,
    pub(crate) password_checks: usize,
    pub(crate) check_share: f64,
    pub(crate) limits: LoginLimits,
    pub(crate) login_store: Store,
    #[cfg(feature = "accounts")]
    pub(crate) session: SessionSettings,
}

impl Settings {
    pub(crate) fn new(db: Database) -> Settings {
        Settings {
            db,
            cost: DEFAULT_COST,
            password_checks: Gate::default_permits(),
            check_share: 0.125,
            limits: LoginLimits::default(),
            login_store: Store::Auto,
            #[cfg(feature = "accounts")]
            session: SessionSettings::default(),
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Settings");
        out.field("cost", &self.cost)
            .field("password_checks", &self.password_checks)
            .field("check_share", &self.check_share)
            .field("limits", &self.limits)
            .field("login_store", &self.login_store);
        #[cfg(feature = "accounts")]
        out.field("session", &self.session);
        out.finish_non_exhaustive()
    }
}

/// Default session lifetime: 14 days.
#[cfg(feature = "accounts")]
const DEFAULT_LIFETIME: Duration = Duration::from_secs(14 * 24 * 3600);

/// The settings of the session login: where its views are, the cookie's key and lifetime.
#[cfg(feature = "accounts")]
#[derive(Clone)]
pub(crate) struct SessionSettings {
    pub(crate) prefix: String,
    pub(crate) default_next_url: String,
    pub(crate) key: Key,
    pub(crate) lifetime: Duration,
    pub(crate) secure: bool,
    pub(crate) templates: std::sync::Arc<dyn super::pages::AccountTemplates>,
    pub(crate) flows: FlowSettings,
}

/// The settings of the account flows that send mail: password reset and sign-up.
#[cfg(feature = "accounts")]
#[derive(Clone, Debug)]
pub(crate) struct FlowSettings {
    /// Where their mail goes; without one, neither flow is mounted.
    pub(crate) mailer: Option<crate::mail::Mailer>,
    /// Whether the sign-up view is mounted.
    pub(crate) signup: bool,
    /// The site's address in mailed links (`https://example.com`); else the request's.
    pub(crate) site_url: Option<String>,
    /// How long a password reset link is valid (default 1 hour).
    pub(crate) reset_lifetime: Duration,
    /// How long a sign-up confirmation link is valid (default 7 days).
    pub(crate) confirm_lifetime: Duration,
}

#[cfg(feature = "accounts")]
impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings {
            mailer: None,
            signup: false,
            site_url: None,
            reset_lifetime: Duration::from_secs(3600),
            confirm_lifetime: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

#[cfg(feature = "accounts")]
impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            prefix: "/accounts".into(),
            default_next_url: "/".into(),
            key: Key::generate(),
            lifetime: DEFAULT_LIFETIME,
            secure: false,
            templates: std::sync::Arc::new(super::pages::DefaultAccountTemplates),
            flows: FlowSettings::default(),
        }
    }
}

#[cfg(feature = "accounts")]
impl fmt::Debug for SessionSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionSettings")
            .field("prefix", &self.prefix)
            .field("default_next_url", &self.default_next_url)
            .field("lifetime", &self.lifetime)
            .field("secure", &self.secure)
            .field("flows", &self.flows)
            .finish_non_exhaustive()
    }
}
