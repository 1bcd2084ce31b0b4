//! The signed tokens of mailed links (password reset, sign-up confirmation): stateless, as
//! Django's. A token is `<user key>-<time>-<signature>` (the first two in base 36); the
//! signature is an HMAC-SHA256, under the session key, of the purpose, the user's key, the
//! time and the user's state now: its password hash, last login and active flag. So a token is
//! void once it has been used (the password changed, or the user was activated), once the user
//! logs in or changes the password another way, and once its lifetime is over.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use subtle::ConstantTimeEq;

use crate::accounts::user::{Auth, UserModel};

/// What a token is for: a token made for one purpose never passes for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// Set a new password (the reset link).
    Reset,
    /// Activate a user who signed up (the confirmation link).
    Confirm,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Reset => b"reset",
            Purpose::Confirm => b"confirm",
        }
    }
}

/// The longest token read (longer ones are refused before any work).
const MAX_TOKEN: usize = 64;

/// The bytes of the signature kept (96 bits, 16 characters: a link stays short enough for
/// one line of mail; Django keeps 80).
const SIGNATURE_BYTES: usize = 12;

/// A token's parts, before it is checked against the user's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Parsed {
    /// The user's primary key.
    pub(super) pk: i64,
    /// When it was made, in seconds since the Unix epoch.
    made: u64,
    signature: Vec<u8>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The signature of `purpose` for `user` made at `made`.
fn sign<U: UserModel>(auth: &Auth<U>, purpose: Purpose, user: &U, made: u64) -> Vec<u8> {
    let key = auth.settings().session.key.signing();
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(key) else {
        return Vec::new();
    };
    for part in [
        b"plover account token".as_slice(),
        purpose.label(),
        user.pk().to_string().as_bytes(),
        made.to_string().as_bytes(),
        user.password_hash().as_bytes(),
        last_login(user).as_bytes(),
        if user.is_active() { b"1" } else { b"0" },
    ] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes()[..SIGNATURE_BYTES].to_vec()
}

/// The user's last login as its JSON text, where the model names the field (`""` otherwise).
fn last_login<U: UserModel>(user: &U) -> String {
    U::LAST_LOGIN_FIELD
        .and_then(|name| U::meta().field(name))
        .map(|(i, _)| user.field_json(i).to_string())
        .unwrap_or_default()
}

/// A token for `purpose` and `user`, made now.
pub(super) fn make<U: UserModel>(auth: &Auth<U>, purpose: Purpose, user: &U) -> String {
    let made = now_secs();
    let signature = sign(auth, purpose, user, made);
    format!(
        "{}-{}-{}",
        base36(u64::try_from(user.pk()).unwrap_or(0)),
        base36(made),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature)
    )
}

/// The parts of `token`, if it has the shape of one and its lifetime is not over. Says
/// nothing of its signature: [`check`] does, with the user's state.
pub(super) fn parse(token: &str, lifetime: Duration) -> Option<Parsed> {
    if token.len() > MAX_TOKEN {
        return None;
    }
    let mut parts = token.splitn(3, '-');
    let pk = from_base36(parts.next()?)?;
    let made = from_base36(parts.next()?)?;
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts.next()?)
        .ok()
        .filter(|s| s.len() == SIGNATURE_BYTES)?;
    let age = now_secs().checked_sub(made)?;
    if age > lifetime.as_secs() {
        return None;
    }
    Some(Parsed {
        pk: i64::try_from(pk).ok()?,
        made,
        signature,
    })
}

/// Whether `token` was made for `purpose` and `user` as the user is now (compared in constant
/// time).
pub(super) fn check<U: UserModel>(
    auth: &Auth<U>,
    purpose: Purpose,
    token: &Parsed,
    user: &U,
) -> bool {
    user.pk() == token.pk
        && bool::from(sign(auth, purpose, user, token.made).ct_eq(&token.signature))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A base-36 number of at most 13 digits, lower case (the form [`base36`] writes: no sign, no
/// upper case, no leading zero), so that one number has one spelling.
fn from_base36(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.len() <= 13
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        && (text == "0" || !text.starts_with('0'));
    canonical
        .then(|| u64::from_str_radix(text, 36).ok())
        .flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use plover_derive::RestModel;

    use super::*;
    use crate::db::Database;

    diesel::table! {
        luser (id) { id -> Integer, username -> Text, password -> Text, active -> Bool,
                     seen -> Nullable<Timestamp> }
    }

    /// A user whose last login is kept.
    #[derive(Clone, RestModel)]
    #[diesel(table_name = luser)]
    struct LUser {
        id: i32,
        username: String,
        #[rest(write_only)]
        password: String,
        active: bool,
        seen: Option<chrono::NaiveDateTime>,
    }

    impl UserModel for LUser {
        const LAST_LOGIN_FIELD: Option<&'static str> = Some("seen");
        fn username(&self) -> &str {
            &self.username
        }
        fn password_hash(&self) -> &str {
            &self.password
        }
        fn password_hash_mut(&mut self) -> &mut String {
            &mut self.password
        }
        fn is_active(&self) -> bool {
            self.active
        }
    }

    /// A token fits the user it was made for, and no longer once the password, the last login
    /// or the active flag changed, nor for another purpose or another secret key.
    #[test]
    fn a_token_dies_with_the_state_it_signed() {
        let db = Database::from_url("sqlite://:memory:").unwrap();
        let auth = Auth::<LUser>::new(db.clone()).secret_key(&[7; 32]);
        let user = LUser {
            id: 5,
            username: "u".into(),
            password: "hash".into(),
            active: true,
            seen: None,
        };
        let hour = Duration::from_secs(3600);
        let token = parse(&make(&auth, Purpose::Reset, &user), hour).unwrap();
        assert!(check(&auth, Purpose::Reset, &token, &user));
        assert!(
            !check(&auth, Purpose::Confirm, &token, &user),
            "another purpose"
        );
        let other_key = Auth::<LUser>::new(db).secret_key(&[8; 32]);
        assert!(
            !check(&other_key, Purpose::Reset, &token, &user),
            "another key"
        );
        let changed = [
            LUser {
                password: "new hash".into(),
                ..user.clone()
            },
            LUser {
                seen: Some(crate::value::now()),
                ..user.clone()
            },
            LUser {
                active: false,
                ..user.clone()
            },
            LUser {
                id: 6,
                ..user.clone()
            },
        ];
        for (i, changed) in changed.iter().enumerate() {
            assert!(!check(&auth, Purpose::Reset, &token, changed), "change {i}");
        }
    }

    #[test]
    fn numbers_have_one_spelling() {
        for n in [0, 1, 35, 36, 1_700_000_000, u64::from(u32::MAX)] {
            assert_eq!(from_base36(&base36(n)), Some(n));
        }
        for bad in ["", "00", "01", "A", "+1", "-1", "1 ", "zzzzzzzzzzzzzz"] {
            assert_eq!(from_base36(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_malformed_token_does_not_parse() {
        let hour = Duration::from_secs(3600);
        let made = base36(now_secs());
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([7u8; SIGNATURE_BYTES]);
        assert!(parse(&format!("1-{made}-{sig}"), hour).is_some());
        assert!(
            parse(&format!("1-{made}-{sig}A"), hour).is_none(),
            "long signature"
        );
        assert!(parse(&format!("1-{made}"), hour).is_none(), "no signature");
        assert!(parse(&format!("1-{made}-{sig}-x"), hour).is_none());
        let old = base36(now_secs() - 3601);
        assert!(parse(&format!("1-{old}-{sig}"), hour).is_none(), "expired");
        let later = base36(now_secs() + 600);
        assert!(
            parse(&format!("1-{later}-{sig}"), hour).is_none(),
            "from the future"
        );
    }
}
