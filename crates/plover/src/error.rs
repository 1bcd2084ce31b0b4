//! The error type of the framework and its one conversion to HTTP (docs/contract.md#errors).

use std::collections::BTreeMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use diesel::result::DatabaseErrorKind;
use serde_json::json;

/// Everything that can go wrong while serving a request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A query parameter is not acceptable (400, names the parameter).
    #[error("invalid parameter '{param}': {message}")]
    BadParam {
        /// The offending parameter, as sent.
        param: String,
        /// What is wrong with it.
        message: String,
    },
    /// The request body is not usable (400).
    #[error("{0}")]
    BadBody(String),
    /// A request header is not acceptable (400, names the header).
    #[error("invalid header '{header}': {message}")]
    BadHeader {
        /// The header's name, as HTTP spells it (`Idempotency-Key`).
        header: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// Field validation failed (400 with `fields`).
    #[error("{message}")]
    Validation {
        /// Summary.
        message: String,
        /// Message per field key, as the client sent the key.
        fields: BTreeMap<String, String>,
    },
    /// Credentials missing or wrong (401 with the Basic challenge).
    #[error("Authentication failed")]
    Unauthorized,
    /// A `check_*` hook or an ownership rule refused (403).
    #[error("Forbidden")]
    Forbidden,
    /// No such record or path (404).
    #[error("Not found")]
    NotFound,
    /// The verb is not served here (405); holds the verbs that are.
    #[error("Method not allowed")]
    MethodNotAllowed(Vec<Method>),
    /// A uniqueness or dependency conflict (409).
    #[error("{0}")]
    Conflict(String),
    /// A value conflicts with another row's (409 with `fields` naming the field).
    #[error("Conflict: {message}")]
    FieldConflict {
        /// The field, as the model names it.
        field: String,
        /// What conflicts.
        message: String,
    },
    /// The write's `If-Match` names no current representation of the row, or its
    /// `If-None-Match` names the current one (412); nothing was written.
    #[error("The object changed since you read it: read it again, then write (If-Match)")]
    PreconditionFailed,
    /// The resource takes writes only with `If-Match` (428).
    #[error("This resource needs If-Match on writes: send the ETag you read")]
    PreconditionRequired,
    /// The request's `Idempotency-Key` was used before, by the same credentials, for another
    /// request (another body or resource): 422, nothing was written
    /// (docs/contract.md#idempotency-keys).
    #[error(
        "This Idempotency-Key was used for another request (another body or resource): \
         send a new key with a new request"
    )]
    IdempotencyKeyReused,
    /// Items of a bulk write failed validation, a rule or a constraint (400 with `items`: per
    /// item's index in the body, its message per field); nothing was written.
    #[error("Validation failed")]
    Items(BTreeMap<usize, BTreeMap<String, String>>),
    /// A bulk write holds more objects than the resource takes in one request (413).
    #[error("At most {0} objects in one request")]
    TooManyItems(usize),
    /// A write by filter matches more rows than the resource lets one request change (400,
    /// holding that bound); nothing was written.
    #[error("The filters match more than {0} rows (max_affected): narrow them")]
    TooManyAffected(usize),
    /// The body exceeds the configured limit (413).
    #[error("Request body too large")]
    PayloadTooLarge,
    /// The body did not arrive within the server's time limit (408).
    #[error("The request body did not arrive in time")]
    Timeout,
    /// The database cannot be reached: the pool could open no connection within its timeout
    /// (503 with `Retry-After: 1`).
    #[error("Database unavailable")]
    Unavailable,
    /// The server is at one of its bounds (response memory, password checks, every pooled
    /// database connection in use, SQLite's writers' turn or lock past `busy_timeout`) and
    /// sheds this request (503 with `Retry-After: 1`).
    #[error("The server is busy; try again")]
    Busy,
    /// This client sent too many requests of a kind (failed logins, its share of a bound):
    /// 429 with `Retry-After`, the wait in whole seconds (at least one).
    #[error("Too many requests; try again in {} seconds", retry_after_secs(*.0))]
    TooManyRequests(std::time::Duration),
    /// A database error not caused by the input (500, details only in the log).
    #[error(transparent)]
    Database(diesel::result::Error),
    /// A bug or an unexpected state (500, details only in the log).
    #[error("internal error: {0}")]
    Internal(String),
}

/// A read that would pass the database's `read_memory` budget: the error that ends the rows of
/// its statement (docs/security.md), answered as [`Error::Busy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadBudgetFull;

impl std::fmt::Display for ReadBudgetFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the rows read would pass the database's read_memory budget")
    }
}

impl std::error::Error for ReadBudgetFull {}

impl From<diesel::result::Error> for Error {
    /// A database error; rows that would pass the database's read budget are
    /// [`Error::Busy`] (docs/security.md).
    fn from(e: diesel::result::Error) -> Error {
        match &e {
            diesel::result::Error::DeserializationError(cause) if cause.is::<ReadBudgetFull>() => {
                Error::Busy
            }
            _ => Error::Database(e),
        }
    }
}

impl Error {
    /// A validation error on one field.
    pub fn field(key: impl Into<String>, message: impl Into<String>) -> Error {
        let mut fields = BTreeMap::new();
        fields.insert(key.into(), message.into());
        Error::Validation {
            message: "Validation failed".into(),
            fields,
        }
    }

    /// The error for a person at a terminal: a validation error's fields as `field: message`,
    /// one per line joined with `separator`; any other error's own message.
    ///
    /// ```
    /// let e = plover::Error::field("url", "not a URL");
    /// assert_eq!(e.field_lines("; "), "url: not a URL");
    /// assert_eq!(plover::Error::NotFound.field_lines("; "), "Not found");
    /// ```
    pub fn field_lines(&self, separator: &str) -> String {
        match self {
            Error::Validation { fields, .. } => (fields.iter())
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(separator),
            Error::Internal(message) => message.clone(),
            other => other.to_string(),
        }
    }

    /// What an item of a bulk write reports for this error, by field (`error` where no field
    /// is to blame); `None` for an error that is not the item's (a 5xx, a refusal), which
    /// fails the whole request as it is.
    pub(crate) fn item_fields(&self) -> Option<BTreeMap<String, String>> {
        let one =
            |key: &str, message: &str| Some(BTreeMap::from([(key.to_owned(), message.to_owned())]));
        match self {
            Error::Validation { fields, .. } => Some(fields.clone()),
            Error::FieldConflict { field, message } => one(field, message),
            Error::BadBody(message) | Error::Conflict(message) => one("error", message),
            Error::Database(_) => {
                let (status, message) = self.classify()?;
                if !status.is_client_error() {
                    return None;
                }
                match self.unique_column() {
                    Some(column) => one(column, "this value is already taken"),
                    None => one("error", message),
                }
            }
            _ => None,
        }
    }

    /// The error of a write that kept meeting concurrent changes through its retries: 503
    /// with `Retry-After`, saying that a concurrent change conflicted.
    pub(crate) fn concurrent_change(what: &str) -> Error {
        Error::Database(diesel::result::Error::DatabaseError(
            DatabaseErrorKind::SerializationFailure,
            Box::new(what.to_owned()),
        ))
    }

    /// `self`, or where it says that Plover's table `table` does not exist, an error that says
    /// how to create it: list `model` (its `meta()`) among the models whose tables the
    /// application creates. `what` names the table for people ("the history table").
    pub(crate) fn explain_missing_table(self, what: &str, table: &str, model: &str) -> Error {
        let text = self.to_string();
        if !(self.is_missing_table() && text.contains(table)) {
            return self;
        }
        Error::Internal(format!(
            "{what} {table} does not exist ({text}): list {model} among the models whose \
             tables the application creates"
        ))
    }

    /// Whether the database said that a table does not exist (SQLite's and PostgreSQL's
    /// words).
    pub(crate) fn is_missing_table(&self) -> bool {
        let text = self.to_string();
        text.contains("no such table") || text.contains("does not exist")
    }

    /// A bad query parameter.
    pub fn param(param: impl Into<String>, message: impl Into<String>) -> Error {
        Error::BadParam {
            param: param.into(),
            message: message.into(),
        }
    }

    /// What an HTML page tells people about this error: what to do, never internals.
    #[cfg(feature = "html")]
    pub(crate) fn public_message(&self) -> String {
        match self {
            Error::NotFound => "There is nothing here.".into(),
            Error::Forbidden => "You may not do this here.".into(),
            Error::Unauthorized => "Log in to see this.".into(),
            Error::MethodNotAllowed(_) => "This page does not take that method.".into(),
            Error::PayloadTooLarge => "What you sent is too large.".into(),
            Error::PreconditionFailed
            | Error::PreconditionRequired
            | Error::IdempotencyKeyReused
            | Error::BadHeader { .. } => self.to_string(),
            Error::Items(items) => format!("{self}: {} objects have errors", items.len()),
            Error::TooManyItems(_) | Error::TooManyAffected(_) => self.to_string(),
            Error::Timeout => "What you sent did not arrive in time.".into(),
            Error::BadParam { param, message } => format!("{param}: {message}"),
            Error::BadBody(message) | Error::Conflict(message) => message.clone(),
            Error::FieldConflict { field, message } => format!("{field}: {message}"),
            Error::Validation { message, fields } => {
                let details: Vec<String> =
                    fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{message}: {}", details.join("; "))
            }
            Error::Unavailable => "The database is unavailable; try again.".into(),
            Error::Busy => "The server is busy; try again in a moment.".into(),
            Error::TooManyRequests(_) => self.to_string(),
            Error::Database(_) => match self.classify() {
                Some((_, message)) => message.into(),
                None => "Something went wrong; the details are in the server's log.".into(),
            },
            Error::Internal(_) => {
                "Something went wrong; the details are in the server's log.".into()
            }
        }
    }

    /// The column of a unique violation, where the engine tells: SQLite's message
    /// `UNIQUE constraint failed: table.column`, PostgreSQL's detail `Key (column)=(...)`. A
    /// constraint over several columns names none.
    pub(crate) fn unique_column(&self) -> Option<&str> {
        let Error::Database(diesel::result::Error::DatabaseError(
            DatabaseErrorKind::UniqueViolation,
            info,
        )) = self
        else {
            return None;
        };
        let column = match info.message().strip_prefix("UNIQUE constraint failed: ") {
            Some(columns) => columns.rsplit_once('.').map(|(_, c)| c)?,
            None => {
                let detail = info.details()?.strip_prefix("Key (")?;
                &detail[..detail.find(")=")?]
            }
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
        (!column.is_empty() && column.chars().all(plain)).then_some(column)
    }

    /// The error a database error stands for: constraint violations are the client's.
    fn classify(&self) -> Option<(StatusCode, &'static str)> {
        // The server went away under the query (PostgreSQL stopped or restarted): the
        // database is unavailable; try again.
        if self.is_connection_lost() {
            return Some(UNAVAILABLE);
        }
        match self {
            Error::Database(diesel::result::Error::DatabaseError(kind, _)) => match kind {
                DatabaseErrorKind::UniqueViolation => Some((
                    StatusCode::CONFLICT,
                    "Conflict: a unique value is already taken",
                )),
                DatabaseErrorKind::ForeignKeyViolation => Some((
                    StatusCode::BAD_REQUEST,
                    "A foreign key refers to a row that does not exist",
                )),
                DatabaseErrorKind::NotNullViolation | DatabaseErrorKind::CheckViolation => {
                    Some((StatusCode::BAD_REQUEST, "A value violates a constraint"))
                }
                // SQLite's limits on one statement; the request limits keep queries inside them,
                // this is the backstop (never a 5xx: docs/contract.md#bounded-cost).
                DatabaseErrorKind::Unknown if is_engine_limit(info_message(self)) => Some((
                    StatusCode::BAD_REQUEST,
                    "The request asks for more than the database takes in one query",
                )),
                // A lock outlasted SQLite's busy_timeout: the database is busy; try again.
                DatabaseErrorKind::Unknown if is_lock_timeout(info_message(self)) => Some(BUSY),
                // PostgreSQL gave up on one of two transactions that waited for each other (a
                // deadlock: two bulk writes of the same rows in other orders), or on one that
                // could not be serialized: a concurrent change conflicted; try again.
                DatabaseErrorKind::SerializationFailure => Some(CONFLICTED),
                DatabaseErrorKind::Unknown if info_message(self).contains("deadlock detected") => {
                    Some(CONFLICTED)
                }
                // A statement Plover interrupted (its client went away, or it ran past the
                // time budget), or one PostgreSQL cancelled for the same reasons.
                DatabaseErrorKind::Unknown
                    if info_message(self).contains(INTERRUPTED)
                        || info_message(self)
                            .contains("canceling statement due to user request") =>
                {
                    Some((
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The query took too long; try again",
                    ))
                }
                // PostgreSQL's statement_timeout: the work took too long; try again.
                DatabaseErrorKind::Unknown
                    if info_message(self)
                        .contains("canceling statement due to statement timeout") =>
                {
                    Some((
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The query took too long; try again",
                    ))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether this error says that the database connection itself is gone (the server went
    /// away or restarted under it, or a transaction's connection broke), so that the
    /// connection must not be used again.
    pub(crate) fn is_connection_lost(&self) -> bool {
        match self {
            Error::Database(diesel::result::Error::DatabaseError(kind, _)) => match kind {
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand => {
                    true
                }
                DatabaseErrorKind::Unknown => is_server_gone(info_message(self)),
                _ => false,
            },
            Error::Database(diesel::result::Error::BrokenTransactionManager) => true,
            _ => false,
        }
    }
}

/// The answer to a database error that means "not now": the client may try again.
const UNAVAILABLE: (StatusCode, &str) = (
    StatusCode::SERVICE_UNAVAILABLE,
    "The database is unavailable; try again",
);

/// The answer to a database error that means "not now, others hold what this needs": the
/// client may try again (the text of [`Error::Busy`]).
const BUSY: (StatusCode, &str) = (
    StatusCode::SERVICE_UNAVAILABLE,
    "The server is busy; try again",
);

/// The answer to a write that conflicted with a concurrent one (a deadlock, a serialization
/// failure, or retries that kept meeting concurrent changes): the client may try again.
const CONFLICTED: (StatusCode, &str) = (
    StatusCode::SERVICE_UNAVAILABLE,
    "A concurrent change conflicted; try again",
);

/// Whether an engine refused a statement for its size (SQLite's compile-time limits).
fn is_engine_limit(message: &str) -> bool {
    [
        "too many SQL variables",
        "LIKE or GLOB pattern too complex",
        "Expression tree is too large",
        "string or blob too big",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Whether the server said it is going or gone: a connection closed under the query, a server
/// shutting down or starting up.
fn is_server_gone(message: &str) -> bool {
    [
        "server closed the connection",
        "terminating connection",
        "connection to server",
        "the database system is shutting down",
        "the database system is starting up",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Whether SQLite gave up on a lock held past its `busy_timeout`.
fn is_lock_timeout(message: &str) -> bool {
    ["database is locked", "database table is locked"]
        .iter()
        .any(|m| message.contains(m))
}

/// The message of a database error, or `""`.
fn info_message(e: &Error) -> &str {
    match e {
        Error::Database(diesel::result::Error::DatabaseError(_, info)) => info.message(),
        _ => "",
    }
}

/// The start of the error message of a statement Plover interrupted (its client went away, or
/// it ran past its time budget): the database reports it as the statement's error.
pub(crate) const INTERRUPTED: &str = "plover: statement interrupted";

/// A wait as the whole seconds of `Retry-After`, rounded up, at least one.
pub(crate) fn retry_after_secs(wait: std::time::Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

fn json_error(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "error": message }))
}

impl ResponseError for Error {
    fn status_code(&self) -> StatusCode {
        match self {
            Error::BadParam { .. }
            | Error::BadBody(_)
            | Error::BadHeader { .. }
            | Error::Validation { .. }
            | Error::Items(_)
            | Error::TooManyAffected(_) => StatusCode::BAD_REQUEST,
            Error::Unauthorized => StatusCode::UNAUTHORIZED,
            Error::Forbidden => StatusCode::FORBIDDEN,
            Error::NotFound => StatusCode::NOT_FOUND,
            Error::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Error::Conflict(_) | Error::FieldConflict { .. } => StatusCode::CONFLICT,
            Error::PayloadTooLarge | Error::TooManyItems(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            Error::PreconditionRequired => StatusCode::PRECONDITION_REQUIRED,
            Error::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Error::Timeout => StatusCode::REQUEST_TIMEOUT,
            Error::Unavailable | Error::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Error::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Error::Database(_) => self
                .classify()
                .map_or(StatusCode::INTERNAL_SERVER_ERROR, |(s, _)| s),
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        // Every 5xx is logged with its cause here, and the body never holds the cause;
        // `Unavailable` is logged where it arises, with the pool's or the retry's cause, and a
        // shed request (`Busy`) in the summary of the bound that shed it: a flood writes one
        // line per interval, not one per request.
        if self.status_code().is_server_error() && !matches!(self, Error::Unavailable | Error::Busy)
        {
            log::error!("{}: {self}", self.status_code());
        }
        let mut resp = match self {
            Error::Unauthorized => HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, r#"Basic realm="Login Required""#))
                .content_type("text/html; charset=utf-8")
                .body("Authentication failed"),
            Error::Validation { message, fields } => {
                HttpResponse::BadRequest().json(json!({ "error": message, "fields": fields }))
            }
            Error::Items(items) => {
                let items: BTreeMap<String, _> =
                    items.iter().map(|(i, f)| (i.to_string(), f)).collect();
                HttpResponse::BadRequest()
                    .json(json!({ "error": self.to_string(), "items": items }))
            }
            Error::MethodNotAllowed(allowed) => {
                let allow = allowed
                    .iter()
                    .map(Method::as_str)
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut resp = json_error(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed");
                if let Ok(v) = HeaderValue::from_str(&allow) {
                    resp.headers_mut().insert(header::ALLOW, v);
                }
                resp
            }
            Error::FieldConflict { field, message } => HttpResponse::Conflict().json(json!({
                "error": "Conflict: a value is too close to another row's",
                "fields": { field: message },
            })),
            Error::Database(_) => match self.classify() {
                Some((status, message)) => match self.unique_column() {
                    Some(column) => HttpResponse::build(status).json(json!({
                        "error": message,
                        "fields": { column: "this value is already taken" },
                    })),
                    None => json_error(status, message),
                },
                None => json_error(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error"),
            },
            Error::Internal(_) => {
                json_error(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error")
            }
            Error::Busy => {
                let mut resp = json_error(StatusCode::SERVICE_UNAVAILABLE, &self.to_string());
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                resp
            }
            Error::TooManyRequests(wait) => {
                let mut resp = json_error(StatusCode::TOO_MANY_REQUESTS, &self.to_string());
                resp.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(retry_after_secs(*wait)),
                );
                resp
            }
            other => json_error(other.status_code(), &other.to_string()),
        };
        // Every 503 says when to try again (a pool that ran dry, a statement over its time
        // budget, a conflict that outlived its retries).
        if resp.status() == StatusCode::SERVICE_UNAVAILABLE
            && !resp.headers().contains_key(header::RETRY_AFTER)
        {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};

    use super::*;

    fn database(kind: DatabaseErrorKind, message: &str) -> Error {
        Error::Database(DieselError::DatabaseError(
            kind,
            Box::new(message.to_owned()),
        ))
    }

    /// Errors that say the server went away.
    fn server_gone_away() -> [Error; 4] {
        [
            database(
                DatabaseErrorKind::ClosedConnection,
                "server closed the connection",
            ),
            database(
                DatabaseErrorKind::UnableToSendCommand,
                "no connection to the server",
            ),
            database(
                DatabaseErrorKind::Unknown,
                "terminating connection due to shutdown",
            ),
            Error::Database(DieselError::BrokenTransactionManager),
        ]
    }

    /// SQLite giving up on a lock held past `busy_timeout`.
    fn lock_timeout() -> Error {
        database(DatabaseErrorKind::Unknown, "database is locked")
    }

    #[test]
    fn a_server_gone_away_or_a_lock_timeout_is_a_503() {
        for e in server_gone_away().into_iter().chain([lock_timeout()]) {
            assert_eq!(e.status_code(), StatusCode::SERVICE_UNAVAILABLE, "{e:?}");
        }
    }

    #[test]
    fn a_deadlock_or_a_serialization_failure_is_a_503_that_says_a_change_conflicted() {
        let conflicts = [
            database(DatabaseErrorKind::Unknown, "deadlock detected"),
            database(
                DatabaseErrorKind::SerializationFailure,
                "could not serialize access due to concurrent update",
            ),
            Error::concurrent_change("a delete kept racing inserts"),
        ];
        for e in conflicts {
            assert_eq!(e.status_code(), StatusCode::SERVICE_UNAVAILABLE, "{e:?}");
            assert_eq!(e.classify(), Some(CONFLICTED), "{e:?}");
            assert!(!e.is_connection_lost(), "{e:?}");
        }
        // SQLite's lock past busy_timeout: busy, as a pool whose connections are all in use.
        assert_eq!(lock_timeout().classify(), Some(BUSY));
        let busy = lock_timeout().error_response();
        let retry = busy.headers().get(header::RETRY_AFTER);
        assert_eq!(retry.and_then(|v| v.to_str().ok()), Some("1"));
    }

    #[test]
    fn only_a_server_gone_away_loses_the_connection() {
        for e in server_gone_away() {
            assert!(e.is_connection_lost(), "{e:?}");
        }
        let kept = [
            database(DatabaseErrorKind::UniqueViolation, "duplicate key"),
            database(
                DatabaseErrorKind::Unknown,
                "canceling statement due to statement timeout",
            ),
            lock_timeout(),
            Error::Database(DieselError::NotFound),
            Error::Unavailable,
            Error::NotFound,
        ];
        for e in kept {
            assert!(!e.is_connection_lost(), "{e:?}");
        }
    }
}
