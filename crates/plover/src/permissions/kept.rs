//! The permissions of users that this process read, by database and user, each with the
//! permissions stamp it was read under (docs/permissions.md): while a request's stamp (read
//! with its user, in the same statement) is that stamp, no grant or revocation has been
//! written since, anywhere, and the kept set answers without a statement.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::held::Held;
use crate::auth::AuthUser;
use crate::db::{Database, LazyConn};
use crate::error::Error;

/// The most users kept; past it the whole cache starts again.
const CAPACITY: usize = 10_000;

/// By (database, user): the stamp and the permissions read under it.
type Kept = HashMap<(u64, i64), (i64, Arc<Held>)>;

static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

/// The permissions of `user`: a superuser's, those kept for the request's stamp, or those read
/// now (one statement), kept for the stamp when the request read one.
///
/// The set read now is at least as recent as the stamp, which was read before it: keeping it
/// under that stamp is never too generous.
pub(crate) fn held(db: &mut LazyConn<'_>, user: &AuthUser) -> Result<Arc<Held>, Error> {
    static SUPERUSER: LazyLock<Arc<Held>> = LazyLock::new(|| Arc::new(Held::superuser()));
    if user.admin {
        return Ok(Arc::clone(&SUPERUSER));
    }
    let Some(stamp) = db.permissions_stamp() else {
        return Held::of_user_id(&mut db.conn()?, user.id).map(Arc::new);
    };
    if let Some(held) = cached(db.database(), user.id, stamp) {
        return Ok(held);
    }
    let key = (db.database().id(), user.id);
    let held = Arc::new(Held::of_user_id(&mut db.conn()?, user.id)?);
    let mut kept = KEPT.lock();
    if kept.len() >= CAPACITY {
        kept.clear();
    }
    kept.insert(key, (stamp, Arc::clone(&held)));
    Ok(held)
}

/// The permissions kept for the user `user_id` of `database` under `stamp`, if any: no
/// statement, no connection (a caller on an async thread tries this before [`held`]).
pub(crate) fn cached(database: &Database, user_id: i64, stamp: i64) -> Option<Arc<Held>> {
    let kept = KEPT.lock();
    let (kept, held) = kept.get(&(database.id(), user_id))?;
    (*kept == stamp).then(|| Arc::clone(held))
}
