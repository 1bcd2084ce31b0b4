//! Password hashing with bcrypt.

/// The bcrypt cost used by [`make_password`] unless an [`Auth`](super::Auth) sets another.
pub const DEFAULT_COST: u32 = bcrypt::DEFAULT_COST;

/// A password that cannot be hashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// bcrypt reads at most 72 bytes; longer passwords are refused, never truncated.
    #[error("passwords may be at most 72 bytes long")]
    TooLong,
    /// The hashing library failed.
    #[error("password hashing failed")]
    Hashing,
}

/// A salted bcrypt hash of `raw` at `cost` (4 to 31). An empty password gives an empty string:
/// no usable password, which [`check_password`] never accepts.
pub fn make_password(raw: &str, cost: u32) -> Result<String, PasswordError> {
    if raw.is_empty() {
        return Ok(String::new());
    }
    if raw.len() > 72 {
        return Err(PasswordError::TooLong);
    }
    bcrypt::hash(raw, cost).map_err(|_| PasswordError::Hashing)
}

/// Whether `raw` matches the hash `encoded`; false for an empty or malformed hash.
pub fn check_password(raw: &str, encoded: &str) -> bool {
    if encoded.is_empty() || raw.is_empty() || raw.len() > 72 {
        return false;
    }
    bcrypt::verify(raw, encoded).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let hash = make_password("secret", 4).unwrap_or_default();
        assert!(hash.starts_with("$2"));
        assert!(check_password("secret", &hash));
        assert!(!check_password("Secret", &hash));
        assert_eq!(make_password("", 4).as_deref(), Ok(""));
        assert!(!check_password("", ""));
        assert_eq!(
            make_password(&"x".repeat(73), 4),
            Err(PasswordError::TooLong)
        );
        assert!(make_password(&"x".repeat(72), 4).is_ok());
    }
}
