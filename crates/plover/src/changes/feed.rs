//! A change feed's stream (docs/changes.md#the-change-feed): Server-Sent Events read from the
//! outbox after a position, judged for their subscriber by the resource that serves them, then
//! live. Each stream is one task: it waits for a commit (or a heartbeat's time) holding no
//! connection, reads the new events with a connection from the pool, and hands their text to
//! the response through a small buffer; a subscriber that stops reading fills it and is
//! disconnected, so that nobody waits for it.

use std::sync::Arc;

use actix_web::web::Bytes;
use actix_web::HttpResponse;
use futures_util::stream;
use tokio::sync::mpsc;

use super::order::{self, bound};
use super::slots::{Slot, HEARTBEAT};
use super::watch::clean;
use super::ChangeEvent;
use crate::db::{pending, Conn, Database};
use crate::error::Error;
use crate::query::Op;
use crate::views::Query;

/// The name of the query parameter that resumes a feed after an event's place.
pub(crate) const AFTER: &str = "after";

/// The list parameter that asks for `meta.changes_cursor` (`changes=cursor`).
pub(crate) const CHANGES: &str = "changes";

/// Events read from the outbox at a time.
const BATCH: i64 = 100;

/// Chunks of text a stream holds for its subscriber; one more and it is disconnected.
const BUFFER: usize = 32;

/// What a resource decides about the events of its feed for one subscriber.
pub(crate) trait Judge: Send + Sync + 'static {
    /// The name of the model whose events the feed reads.
    fn model(&self) -> &'static str;

    /// Appends to `out` the Server-Sent Events of `events` (of [`Judge::model`], in place order)
    /// that this subscriber hears of.
    fn judge(
        &self,
        conn: &mut Conn<'_>,
        events: &[ChangeEvent],
        out: &mut String,
    ) -> Result<(), Error>;
}

/// The position a stream resumes after: the `Last-Event-ID` header, else the `after`
/// parameter (a browser reconnects with the URL it started with, and the header is where it
/// is); `None`: live from now. A value that is not an integer from 0 is a 400 naming it.
pub(crate) fn position(header: Option<&str>, param: Option<&str>) -> Result<Option<i64>, Error> {
    let parse = |name: &str, text: &str| match text.trim().parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(Error::param(name, "expected an event id (an integer >= 0)")),
    };
    match (header, param) {
        (Some(text), _) => parse("Last-Event-ID", text).map(Some),
        (None, Some(text)) => parse(AFTER, text).map(Some),
        (None, None) => Ok(None),
    }
}

/// Where a stream starts: after this place, or with a reset (the events after the
/// position are gone, or it names none that was ever handed out).
pub(crate) enum Start {
    After(i64),
    Reset,
}

/// Decides where a stream starts from its `position`, in the outbox as it is now: the events
/// committed before have their places first (PostgreSQL), so that a live stream does not
/// start before them.
pub(crate) fn start(conn: &mut Conn<'_>, position: Option<i64>) -> Result<Start, Error> {
    order::settle(conn)?;
    if position.is_some() {
        // Events past the retention are gone for a resuming stream, removed yet or not.
        clean(conn)?;
    }
    let (oldest, newest) = (bound(conn, false)?, bound(conn, true)?);
    Ok(match (position, oldest, newest) {
        (None, _, newest) => Start::After(newest.unwrap_or(0)),
        // Events after the position were removed (the newest event is always kept), or the
        // position is ahead of every event: the subscriber must fetch its list again (`n` may
        // be i64::MAX, hence the saturating addition).
        (Some(n), Some(oldest), Some(newest)) if n.saturating_add(1) < oldest || n > newest => {
            Start::Reset
        }
        (Some(n), None, None) if n > 0 => Start::Reset,
        (Some(n), _, _) => Start::After(n),
    })
}

/// The events of `model` after the place `after`, at most [`BATCH`], in place order.
fn events_after(conn: &mut Conn<'_>, model: &str, after: i64) -> Result<Vec<ChangeEvent>, Error> {
    let model = Query::<ChangeEvent>::new().filter(ChangeEvent::FIELDS.model, Op::Eq, model);
    order::after(conn.engine(), model, after)
        .limit(BATCH)
        .all(conn)
}

/// The response of a stream that starts at `start`, judged by `judge`, holding `slot` while it
/// is open.
pub(crate) fn respond(
    db: Database,
    judge: Arc<dyn Judge>,
    start: Start,
    slot: Slot,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel::<Bytes>(BUFFER);
    match start {
        Start::Reset => {
            // The only event, and the stream ends.
            let _ = tx.try_send(Bytes::from_static(b"event: reset\ndata: {}\n\n"));
            drop(tx);
        }
        Start::After(after) => {
            super::watch::start(&db);
            actix_web::rt::spawn(run(db, judge, after, tx, slot));
        }
    }
    let body = stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, actix_web::Error>(chunk), rx))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body)
}

/// The stream's task: reads what follows `after`, hands it over, waits for a commit or the
/// heartbeat; ends when the subscriber is gone or too slow, or the database fails.
async fn run(
    db: Database,
    judge: Arc<dyn Judge>,
    mut after: i64,
    tx: mpsc::Sender<Bytes>,
    slot: Slot,
) {
    let _slot = slot;
    let mut commits = pending::committed();
    // Opening comment: the response starts at once, before any event.
    if tx.try_send(Bytes::from_static(b": ok\n\n")).is_err() {
        return;
    }
    loop {
        commits.borrow_and_update();
        let judge_now = Arc::clone(&judge);
        let read = db
            .run(move |conn| {
                let events = events_after(conn, judge_now.model(), after)?;
                let mut out = String::new();
                judge_now.judge(conn, &events, &mut out)?;
                Ok((events.last().map(ChangeEvent::place), events.len(), out))
            })
            .await;
        let (last, count, text) = match read {
            Ok(read) => read,
            Err(e) => {
                log::warn!("change feed of {}: {e}", judge.model());
                return;
            }
        };
        if !text.is_empty() && tx.try_send(Bytes::from(text)).is_err() {
            return; // gone, or too slow: it may resume from its last event's place
        }
        if let Some(last) = last {
            after = last;
        }
        if count as i64 == BATCH {
            continue;
        }
        tokio::select! {
            _ = commits.changed() => {}
            () = tokio::time::sleep(HEARTBEAT) => {
                if tx.try_send(Bytes::from_static(b": heartbeat\n\n")).is_err() {
                    return;
                }
            }
            () = tx.closed() => return,
        }
    }
}
