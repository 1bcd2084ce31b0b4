//! One model's writes with its type erased: the save and the delete that the REST API's write
//! paths and the admin's pages are written once against, so that an application compiles only
//! the small [`Typed`] glue per model, not every write path once per model.

use std::marker::PhantomData;

use crate::db::Conn;
use crate::error::Error;
use crate::history::{self, Actor};
use crate::model::row::{save_erased, Changes, Row};
use crate::model::RestModel;

/// The writes of one model.
pub(crate) trait Store: Send + Sync {
    /// [`crate::model::save`]: an insert, or an update of `existing`.
    fn save(
        &self,
        conn: &mut Conn<'_>,
        changes: Changes,
        existing: Option<&dyn Row>,
    ) -> Result<Box<dyn Row>, Error>;
    /// Deletes the rows of `ids` with their history entries; how many were deleted.
    fn delete(
        &self,
        conn: &mut Conn<'_>,
        actor: &Actor,
        ids: &[i64],
        recursive: bool,
    ) -> Result<usize, Error>;
}

/// [`Store`] (and the admin's `Model`) of `M`.
pub(crate) struct Typed<M>(PhantomData<fn() -> M>);

impl<M> Default for Typed<M> {
    fn default() -> Typed<M> {
        Typed(PhantomData)
    }
}

impl<M: RestModel + 'static> Typed<M> {
    /// The model `M`'s writes, for as long as the program runs (the type holds nothing).
    pub(crate) fn store() -> &'static dyn Store {
        const { &Typed::<M>(PhantomData) }
    }
}

impl<M: RestModel + 'static> Store for Typed<M> {
    fn save(
        &self,
        conn: &mut Conn<'_>,
        changes: Changes,
        existing: Option<&dyn Row>,
    ) -> Result<Box<dyn Row>, Error> {
        save_erased::<M>(conn, changes, existing)
    }

    fn delete(
        &self,
        conn: &mut Conn<'_>,
        actor: &Actor,
        ids: &[i64],
        recursive: bool,
    ) -> Result<usize, Error> {
        history::delete::<M>(conn, actor, ids, recursive)
    }
}
