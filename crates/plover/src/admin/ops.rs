//! The admin pages of Plover's own tables that run the application: the job queue
//! ([`Admin::jobs`]) and the webhooks ([`Admin::webhooks`]), made of read-only
//! [`ModelAdmin`]s with actions, as an application would make them.

use std::sync::Arc;

use super::action::Action;
use super::model_admin::{Column, ModelAdmin};
use super::Admin;
use crate::accounts::UserModel;
use crate::db::Conn;
use crate::error::Error;
use crate::jobs::{self, Job};
use crate::webhooks::{self, WebhookEndpoint, Webhooks, DELIVERY_JOB};

/// The most characters of a job's last error an index shows (its page shows all of it).
const ERROR_CHARS: usize = 120;

impl<U: UserModel + Clone + Send + 'static> Admin<U> {
    /// Adds the job queue's pages ([`crate::jobs`]), "jobs": every job of `plover_job`, the
    /// newest first, with facets by state (queued, running, failed), a search of the kinds
    /// (`?q=receipt`; the filter form takes `kind=send_receipt`), and each job's page with its
    /// payload and last error. No
    /// job is written by hand: the actions "Retry" (a failed job queued again, due now, its
    /// attempts counted from zero: [`jobs::retry`]) and "Delete" are the only writes.
    pub fn jobs(&mut self) -> &mut Admin<U> {
        let f = Job::FIELDS;
        let columns = [
            f.id,
            f.kind,
            f.state,
            f.attempts,
            f.max_attempts,
            f.run_after,
        ]
        .map(Column::field)
        .into_iter()
        .chain([last_error(), Column::field(f.created)]);
        self.register(
            job_admin("jobs", "retry", "Retry (queue again now)")
                .columns(columns)
                .list_filter([f.state])
                .search_fields([f.kind]),
        )
    }

    /// Adds the pages of `hooks`' webhooks ([`crate::webhooks`]):
    ///
    /// - "webhook-deliveries": the delivery jobs, the newest first, with their endpoint, event
    ///   id, state, attempts, last error and next attempt, facets by state, and a search of
    ///   their payloads (an endpoint's URL finds its deliveries);
    /// - "webhook-dead-letters": the failed deliveries, with "Re-send" (queued again now, its
    ///   attempts counted from zero) and "Delete";
    /// - with [`Webhooks::stored_endpoints`], "webhook-endpoints": the endpoints kept in the
    ///   database ([`WebhookEndpoint`]), added, edited, deactivated and deleted here. A URL that
    ///   does not parse, that an endpoint in code has, or that the guard refuses under the
    ///   targets `hooks` allows, and a malformed secret, are errors shown beside the field
    ///   (nothing is saved); a secret left blank is made (`whsec_` and 32 random bytes in
    ///   base64). Lists show secrets masked; an endpoint's page shows it, for its receiver.
    pub fn webhooks(&mut self, hooks: &Webhooks) -> &mut Admin<U> {
        let f = Job::FIELDS;
        let columns = || {
            [
                Column::field(f.id),
                Column::computed("endpoint", |job: &Job| delivery(job).0),
                Column::computed("event", |job: &Job| delivery(job).1),
                Column::field(f.state),
                Column::field(f.attempts),
                last_error(),
                Column::computed("next attempt", next_attempt),
            ]
        };
        let scope = |state: Option<&str>| {
            let mut pairs = vec![("kind".to_owned(), DELIVERY_JOB.to_owned())];
            pairs.extend(state.map(|s| ("state".to_owned(), s.to_owned())));
            pairs
        };
        let deliveries = job_admin("webhook-deliveries", "resend", "Re-send")
            .columns(columns())
            .list_filter([f.state])
            .search_fields([f.payload])
            .scope(scope(None));
        let dead = job_admin("webhook-dead-letters", "resend", "Re-send")
            .columns(columns())
            .scope(scope(Some("failed")));
        self.register(deliveries).register(dead);
        if let Some(targets) = hooks.stored_targets() {
            let resources: Vec<String> = hooks
                .resource_names()
                .into_iter()
                .map(String::from)
                .collect();
            let taken = hooks.code_urls();
            let endpoints = ModelAdmin::<WebhookEndpoint>::new()
                .name("webhook-endpoints")
                .columns(endpoint_columns())
                .clean(Arc::new(move |_conn: &mut Conn<'_>, changes, existing| {
                    let names: Vec<&str> = resources.iter().map(String::as_str).collect();
                    webhooks::stored::check(changes, existing, targets, &names, &taken)
                }));
            self.register(endpoints);
        }
        self
    }
}

/// A read-only admin of jobs named `name`, the newest first, whose action `action` (offered
/// as `label`) queues the selected failed jobs again.
fn job_admin(name: &str, action: &str, label: &str) -> ModelAdmin<Job> {
    ModelAdmin::<Job>::new()
        .name(name)
        .read_only()
        .ordering(Job::FIELDS.id, true)
        .action(Action::new(action, label, retry))
}

/// Queues the failed ones of `jobs` again ([`jobs::retry`]); what was done.
fn retry(conn: &mut Conn<'_>, rows: &[Job]) -> Result<String, Error> {
    let mut queued = 0;
    for job in rows {
        if jobs::retry(conn, job.id)? {
            queued += 1;
        }
    }
    let skipped = rows.len() - queued;
    let mut text = format!("{queued} queued again");
    if skipped > 0 {
        text.push_str(&format!(
            "; {skipped} left alone (only a failed job is queued again)"
        ));
    }
    Ok(text)
}

/// The column of a job's last error, cut at [`ERROR_CHARS`].
fn last_error() -> Column<Job> {
    Column::computed("last error", |job: &Job| {
        let error = job.last_error.as_deref().unwrap_or_default();
        let mut cut: String = error.chars().take(ERROR_CHARS).collect();
        if cut.len() < error.len() {
            cut.push('…');
        }
        cut
    })
}

/// When a job runs next: its `run_after` while it is queued.
fn next_attempt(job: &Job) -> String {
    match job.state.as_str() {
        "queued" => job.run_after.format("%Y-%m-%d %H:%M:%S").to_string(),
        _ => String::new(),
    }
}

/// The endpoint and the event id of a delivery job (empty when its payload is not one).
fn delivery(job: &Job) -> (String, String) {
    let payload: serde_json::Value = serde_json::from_str(&job.payload).unwrap_or_default();
    let text = |key: &str| match &payload[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    (text("endpoint"), text("id"))
}

/// The columns of the stored endpoints: the secret masked.
fn endpoint_columns() -> Vec<Column<WebhookEndpoint>> {
    let f = WebhookEndpoint::FIELDS;
    vec![
        Column::field(f.id),
        Column::field(f.url),
        Column::computed("secret", |e: &WebhookEndpoint| {
            webhooks::stored::masked(&e.secret)
        }),
        Column::field(f.resources),
        Column::field(f.operations),
        Column::field(f.active),
        Column::field(f.created),
    ]
}
