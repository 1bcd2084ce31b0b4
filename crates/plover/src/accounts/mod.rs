//! Users, passwords and the accounts component (SPEC.md section 9): session login and logout,
//! `login_required` views through [`LoggedInUser`], and CSRF tokens for forms.

mod cache;
mod gate;
mod next;
mod password;
mod session;
mod settings;
mod user;
mod views;

pub use cache::CredentialCache;
pub use next::safe_next;
pub use password::{check_password, make_password, PasswordError, DEFAULT_COST};
pub use session::{current_user, CsrfToken, LoggedInUser, LoginRedirect, SESSION_COOKIE};
pub use user::{Auth, UserModel};
