//! Changes that reach their readers (docs/changes.md): the outbox, one event per row that a
//! write through Plover creates, changes or deletes, in the write's own transaction, and the
//! change feed that serves them to subscribers as Server-Sent Events.
//!
//! A model records its events once a resource of it serves a feed
//! ([`Resource::changes`](crate::rest::Resource::changes)) or once the application asks for them
//! with [`record`] (for its own readers of [`ChangeEvent`]). From then on, in this process,
//! every write of the model records: REST (single, bulk, by filter, upsert, nested children),
//! the admin (add, edit, delete, bulk delete, inlines, import, actions), `views::Query` and
//! recursive deletes, all through the same row writes. Writes made outside Plover (raw SQL,
//! another program) are not seen.
//!
//! The table `plover_event` is a model like the application's own: `manage::Commands` counts
//! it among the application's models (its schema, drift check and migrations come with
//! theirs); an application that creates its tables with `schema::create_tables` lists
//! [`ChangeEvent::meta`] among them.
//!
//! ```
//! use plover::prelude::*;
//! use plover::changes::ChangeEvent;
//! use plover::views::Query;
//!
//! #[derive(Debug, RestModel)]
//! #[diesel(table_name = ticket)]
//! #[rest(table)]
//! pub struct Ticket { pub id: i32, pub title: String }
//!
//! let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
//! plover::changes::record::<Ticket>();
//! db.run_blocking(|conn| {
//!     plover::schema::create_tables(conn, &[Ticket::meta(), ChangeEvent::meta()])?;
//!     let changes = TicketChanges { title: Some("Printer on fire".into()), ..Default::default() };
//!     conn.transaction(|conn| plover::model::save::<Ticket>(conn, changes, None))?;
//!     let events = Query::<ChangeEvent>::new().all(conn)?;
//!     assert_eq!(events.len(), 1);
//!     assert_eq!((events[0].model.as_str(), events[0].op.as_str()), ("ticket", "created"));
//!     assert_eq!(events[0].field_names(), ["id", "title"]);
//!     Ok(())
//! })
//! .unwrap();
//! ```

pub(crate) mod feed;
pub(crate) mod order;
pub(crate) mod slots;
pub(crate) mod watch;

pub use slots::StreamLimits;
pub use watch::cursor;

use plover_derive::RestModel;

use crate::model::RestModel;

/// One event of the outbox: a row of the table `plover_event`. Its place in the feeds
/// ([`ChangeEvent::place`]) increases in the order the writes committed, as every reader sees
/// it (docs/changes.md#order); ids and places are never reused. Its indexes depend on the
/// engine (`schema::statements` makes them): on SQLite the primary key alone, on PostgreSQL
/// partial indexes over the placed events (by model, and all) and over the unplaced ones.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_event)]
#[rest(table, display = "{op} {model} #{object_id}")]
pub struct ChangeEvent {
    /// The event's id, taken when its transaction wrote it (the `webhook-id` of its
    /// deliveries). On SQLite, where one transaction writes at a time, ids follow the commits
    /// and are the events' places; on PostgreSQL they need not.
    pub id: i64,
    /// When the write was made, UTC: the events of one transaction share the time of its
    /// first.
    pub created: chrono::NaiveDateTime,
    /// The name of the row's model (`message`).
    pub model: String,
    /// The row's primary key.
    pub object_id: i64,
    /// `created`, `updated` or `deleted`.
    #[rest(choices = ["created", "updated", "deleted"])]
    pub op: String,
    /// The names of the fields that changed, as a JSON array: every field of a created or
    /// deleted row, those whose value differs for an update.
    pub fields: String,
    /// The user who made the write (`None`: not a user). Not a foreign key: events outlive
    /// their users.
    pub user_id: Option<i64>,
    /// The API key that made the write (`None`: not a key).
    pub api_key_id: Option<i64>,
    /// The row before the write (none for a creation): a JSON object of its columns as the
    /// database holds them.
    #[rest(long)]
    pub row_before: Option<String>,
    /// The row after the write (none for a deletion), as [`ChangeEvent::row_before`].
    #[rest(long)]
    pub row_after: Option<String>,
    /// PostgreSQL: the event's place in commit order, given by the outbox's sequencer shortly
    /// after its transaction commits (`None` until then: feeds and webhooks do not see it
    /// yet). SQLite: always `None`, the id is the place.
    pub position: Option<i64>,
}

impl ChangeEvent {
    /// The event's place in the order of commits: the `id:` of its Server-Sent Event, what
    /// `Last-Event-ID`, `after` and [`cursor`] count in. Its [`position`](ChangeEvent::position)
    /// once it has one (PostgreSQL), else its id (SQLite).
    pub fn place(&self) -> i64 {
        self.position.unwrap_or(self.id)
    }

    /// The names of the fields that changed ([`ChangeEvent::fields`] read).
    pub fn field_names(&self) -> Vec<String> {
        serde_json::from_str(&self.fields).unwrap_or_default()
    }
}

/// From now on, in this process, every write of `M` through Plover records its events.
pub fn record<M: RestModel>() {
    M::meta().record_changes();
}

/// Keeps events for `keep` (default 7 days): older ones are removed in bounded batches by the
/// processes that serve a feed, and a stream that resumes after a removed event gets
/// `event: reset`. Process-wide.
pub fn retain(keep: std::time::Duration) {
    watch::set_retention(keep);
}
