//! Users, passwords and the accounts component (docs/contract.md#accounts): session login and
//! logout, `login_required` views through [`LoggedInUser`], and CSRF tokens for forms.

pub(crate) mod cache;
mod failures;
mod flight;
#[cfg(feature = "accounts")]
mod flow_limits;
#[cfg(feature = "accounts")]
mod flows;
mod gate;
#[cfg(feature = "accounts")]
mod next;
#[cfg(feature = "accounts")]
mod pages;
mod password;
#[cfg(feature = "accounts")]
mod session;
mod settings;
pub(crate) mod throttle;
mod user;
mod users;
#[cfg(feature = "accounts")]
mod views;

pub use crate::model::usernames::{confusable_usernames, normalize_username};
#[cfg(feature = "accounts")]
pub use next::safe_next;
#[cfg(feature = "accounts")]
pub use pages::{
    AccountMail, AccountTemplates, DefaultAccountTemplates, FormInput, FormPage, MessagePage,
};
pub use password::{check_password, make_password, PasswordError, DEFAULT_COST};
#[cfg(feature = "accounts")]
pub use session::{current_user, CsrfToken, LoggedInUser, LoginRedirect, SESSION_COOKIE};
#[cfg(feature = "admin")]
pub(crate) use session::{keep_password, session_stamp};
pub use throttle::LoginLimits;
pub use user::{Auth, Credentials, UserModel};
pub use users::{User, UserChanges};
