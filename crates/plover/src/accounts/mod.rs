//! Users, passwords and the accounts component (SPEC.md section 9).

mod password;
mod user;

pub use password::{check_password, make_password, PasswordError, DEFAULT_COST};
pub use user::{Auth, UserModel};
