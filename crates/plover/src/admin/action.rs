//! `Action`: an application's own action on the rows selected in a model's index.

use std::sync::Arc;

use super::erased::typed_rows;
use crate::db::Conn;
use crate::error::Error;
use crate::model::row::Rows;
use crate::model::RestModel;
use crate::permissions;

/// What an action does with the selected rows: the text shown once it is done.
pub(crate) type ActionFn<M> =
    Arc<dyn Fn(&mut Conn<'_>, &[M]) -> Result<String, Error> + Send + Sync>;

/// An action on the rows selected in a model's index, beside the built-in bulk delete
/// (Django's admin actions), registered with [`ModelAdmin::action`](super::ModelAdmin::action).
///
/// Choosing it with selected rows shows a confirmation page that lists them; confirming runs
/// the function once, in one transaction, with the rows (loaded again inside it, key
/// ascending). What it returns is shown on the index it leads back to (an empty text: the
/// label and the number of rows). An error rolls back everything the function wrote: a 4xx
/// error ([`Error::Conflict`], [`Error::field`]...) shows its message on the confirmation page,
/// anything else is a 500. At most the model admin's `max_bulk_rows` rows (1,000 by default)
/// are selected at once.
///
/// ```
/// # use plover::prelude::*;
/// # use plover::admin::{Action, ModelAdmin};
/// # diesel::table! { ticket (id) { id -> Integer, title -> Text, open -> Bool } }
/// # #[derive(RestModel)] #[diesel(table_name = ticket)] #[rest(display = "{title}")]
/// # pub struct Ticket { pub id: i32, pub title: String, pub open: bool }
/// let close = Action::new("close", "Close", |conn, tickets: &[Ticket]| {
///     for ticket in tickets {
///         let changes = TicketChanges { open: Some(false), ..TicketChanges::default() };
///         plover::model::save::<Ticket>(conn, changes, Some(ticket))?; // the model's rules run
///     }
///     Ok(format!("{} tickets closed", tickets.len()))
/// });
/// let admin = ModelAdmin::<Ticket>::new().action(close);
/// ```
pub struct Action<M> {
    pub(crate) name: String,
    pub(crate) label: String,
    /// The model permission a user needs to see and run it.
    pub(crate) needs: permissions::Action,
    pub(crate) run: ActionFn<M>,
}

impl<M> std::fmt::Debug for Action<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Action")
            .field("name", &self.name)
            .field("label", &self.label)
            .field("needs", &self.needs)
            .finish_non_exhaustive()
    }
}

impl<M> Action<M> {
    /// An action named `name` (the `action` value the index's form sends: lower-case letters,
    /// digits, `_` and `-`; not `delete`, which is the bulk delete), offered as `label`.
    pub fn new(
        name: &str,
        label: &str,
        run: impl Fn(&mut Conn<'_>, &[M]) -> Result<String, Error> + Send + Sync + 'static,
    ) -> Action<M> {
        Action {
            name: name.to_owned(),
            label: label.to_owned(),
            needs: permissions::Action::Change,
            run: Arc::new(run),
        }
    }

    /// The model permission a user needs to see and run the action (default `change`):
    /// a user without it is not offered the action, and choosing it anyway is refused (403).
    /// Superusers hold every permission (docs/admin.md#permissions).
    ///
    /// ```
    /// # use plover::prelude::*;
    /// # use plover::admin::Action;
    /// # diesel::table! { ticket (id) { id -> Integer, title -> Text } }
    /// # #[derive(RestModel)] #[diesel(table_name = ticket)]
    /// # pub struct Ticket { pub id: i32, pub title: String }
    /// use plover::permissions;
    ///
    /// let archive = Action::new("archive", "Archive", |_conn, rows: &[Ticket]| {
    ///     Ok(format!("{} archived", rows.len()))
    /// })
    /// .needs(permissions::Action::Delete);
    /// ```
    #[must_use]
    pub fn needs(mut self, permission: permissions::Action) -> Action<M> {
        self.needs = permission;
        self
    }
}

/// [`ActionFn`] for rows whose type is erased.
type RunOnRows = Arc<dyn Fn(&mut Conn<'_>, &dyn Rows) -> Result<String, Error> + Send + Sync>;

/// An [`Action`] after set-up, its rows' type erased.
pub(crate) struct PreparedAction {
    pub(crate) name: String,
    pub(crate) label: String,
    pub(crate) needs: permissions::Action,
    pub(crate) run: RunOnRows,
}

impl<M: RestModel + 'static> Action<M> {
    /// The action for rows whose type is erased.
    pub(crate) fn erase(self) -> PreparedAction {
        let run = self.run;
        PreparedAction {
            name: self.name,
            label: self.label,
            needs: self.needs,
            run: Arc::new(move |conn: &mut Conn<'_>, rows: &dyn Rows| {
                run(conn, typed_rows::<M>(rows)?)
            }),
        }
    }
}

/// Panics (at set-up) on an action name that is not usable in a form, is `delete`, or is taken.
pub(crate) fn check_names(model: &str, actions: &[PreparedAction]) {
    for (i, action) in actions.iter().enumerate() {
        let name = &action.name;
        let usable = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        assert!(
            usable,
            "plover admin: the action `{name}` of {model} needs a name of lower-case letters, \
             digits, `_` and `-`"
        );
        assert!(
            name != "delete",
            "plover admin: `delete` is the bulk delete of {model}; name the action otherwise"
        );
        assert!(
            actions[..i].iter().all(|a| a.name != *name),
            "plover admin: {model} has two actions named `{name}`"
        );
    }
}
