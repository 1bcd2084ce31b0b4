//! A change feed's stream (docs/changes.md#the-change-feed): Server-Sent Events read from the
//! outbox after a position, judged for their subscriber by the resource that serves them, then
//! live. Each stream is one task: it waits for a commit (or a heartbeat's time) holding no
//! connection, reads the new events with a connection from the pool, and hands their text to
//! the response through a small buffer; a subscriber that stops reading fills it and is
//! disconnected, so that nobody waits for it. Where the database has read replicas, a stream
//! that resumes replays from one, then the primary reads the rest and the live tail
//! (docs/changes.md#replay-from-a-replica).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_web::web::Bytes;
use actix_web::HttpResponse;
use futures_util::stream;
use tokio::sync::mpsc;

use super::order::{self, bound};
use super::slots::{Slot, HEARTBEAT};
use super::watch::clean;
use super::ChangeEvent;
use crate::db::replicas::Reader;
use crate::db::{pending, Conn, Database, ServedBy};
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

/// Bytes of text a stream holds for its subscriber on the live tail (beyond the chunk the
/// response is sending); a subscriber that lets more pile up is disconnected, and may resume
/// from its last event. A chunk is a batch of events of any size, so [`BUFFER`] alone would
/// bound a stalled stream's memory by its batches, not its bytes. Catching up (full batches)
/// is bounded by [`BUFFER`] alone, so that a subscriber replaying large rows is not cut at
/// every batch.
const HELD_BYTES: usize = 1 << 20;

/// Where a stream's task hands its text to the response: the channel, and the bytes in it.
struct Handoff {
    tx: mpsc::Sender<Bytes>,
    held: Arc<AtomicUsize>,
}

impl Handoff {
    /// Hands `text` over; `false` when the subscriber is gone or too slow: [`BUFFER`] chunks
    /// held, or with `live` more than [`HELD_BYTES`] with it.
    fn give(&self, text: Bytes, live: bool) -> bool {
        let len = text.len();
        let held = self.held.fetch_add(len, Ordering::Relaxed);
        if live && held > 0 && held + len > HELD_BYTES {
            return false;
        }
        self.tx.try_send(text).is_ok()
    }
}

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

/// Where a stream starts.
pub(crate) enum Start {
    /// Resumes after this place: the events that followed it are replayed first, on a read
    /// replica where one has them (docs/changes.md#replay-from-a-replica).
    Resume(i64),
    /// Live from now: after this place, the newest when the stream opened.
    Live(i64),
    /// A reset: the events after the position are gone, or it names none that was ever
    /// handed out.
    Reset,
}

/// Decides where a stream starts from its `position`, in the outbox as it is now on the
/// primary (`conn`): the events committed before have their places first (PostgreSQL), so
/// that a live stream does not start before them.
pub(crate) fn start(conn: &mut Conn<'_>, position: Option<i64>) -> Result<Start, Error> {
    order::settle(conn)?;
    if position.is_some() {
        // Events past the retention are gone for a resuming stream, removed yet or not.
        clean(conn)?;
    }
    let (oldest, newest) = (bound(conn, false)?, bound(conn, true)?);
    Ok(match (position, oldest, newest) {
        (None, _, newest) => Start::Live(newest.unwrap_or(0)),
        // Events after the position were removed (the newest event is always kept), or the
        // position is ahead of every event: the subscriber must fetch its list again (`n` may
        // be i64::MAX, hence the saturating addition).
        (Some(n), Some(oldest), Some(newest)) if n.saturating_add(1) < oldest || n > newest => {
            Start::Reset
        }
        (Some(n), None, None) if n > 0 => Start::Reset,
        (Some(n), _, _) => Start::Resume(n),
    })
}

/// The events of `model` after the place `after`, at most [`BATCH`], in place order.
fn events_after(conn: &mut Conn<'_>, model: &str, after: i64) -> Result<Vec<ChangeEvent>, Error> {
    let model = Query::<ChangeEvent>::new().filter(ChangeEvent::FIELDS.model, Op::Eq, model);
    order::after(conn.engine(), model, after)
        .limit(BATCH)
        .all(conn)
}

/// The response of a stream that starts at `start`, judged by `judge`, for `reader` (its
/// client, for the choice of a replica), holding `slot` while it is open.
pub(crate) fn respond(
    db: Database,
    judge: Arc<dyn Judge>,
    start: Start,
    reader: Reader,
    slot: Slot,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel::<Bytes>(BUFFER);
    let held = Arc::new(AtomicUsize::new(0));
    let out = Handoff {
        tx,
        held: Arc::clone(&held),
    };
    match start {
        Start::Reset => {
            // The only event, and the stream ends.
            out.give(Bytes::from_static(b"event: reset\ndata: {}\n\n"), false);
            drop(out);
        }
        Start::Resume(after) | Start::Live(after) => {
            let replay = matches!(start, Start::Resume(_)) && db.has_replicas();
            super::watch::start(&db);
            let stream = Stream {
                db,
                judge,
                reader,
                out,
            };
            actix_web::rt::spawn(stream.run(after, replay, slot));
        }
    }
    let body = stream::unfold((rx, held), |(mut rx, held)| async move {
        let chunk = rx.recv().await?;
        held.fetch_sub(chunk.len(), Ordering::Relaxed);
        Some((Ok::<_, actix_web::Error>(chunk), (rx, held)))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body)
}

/// A stream's task: what it reads, for whom, and where it hands the text.
struct Stream {
    db: Database,
    judge: Arc<dyn Judge>,
    reader: Reader,
    out: Handoff,
}

/// What one read of a stream found.
struct Batch {
    /// The place of its last event.
    last: Option<i64>,
    /// How many events it read.
    count: usize,
    /// The events its subscriber hears of, as Server-Sent Events.
    text: String,
    /// Whether a replica served it.
    on_replica: bool,
}

impl Stream {
    /// Reads what follows `after`, hands it over, waits for a commit or the heartbeat; ends
    /// when the subscriber is gone or too slow, or the database fails. With `replay`, the
    /// events are read from a replica first while it gives full batches (it has more); the
    /// rest, and the live tail, from the primary (docs/changes.md#replay-from-a-replica).
    async fn run(self, mut after: i64, mut replay: bool, slot: Slot) {
        let _slot = slot;
        let mut commits = pending::committed();
        // Opening comment: the response starts at once, before any event.
        if !self.out.give(Bytes::from_static(b": ok\n\n"), false) {
            return;
        }
        loop {
            commits.borrow_and_update();
            let batch = match self.read(after, replay).await {
                Ok(batch) => batch,
                Err(e) => {
                    log::warn!("change feed of {}: {e}", self.judge.model());
                    return;
                }
            };
            let full = batch.count as i64 == BATCH;
            if !batch.text.is_empty() && !self.out.give(Bytes::from(batch.text), !full) {
                return; // gone, or too slow: it may resume from its last event's place
            }
            if let Some(last) = batch.last {
                after = last;
            }
            // A replica that gave less than a batch has no more: the primary reads after its
            // last event at once, for what the replica has not replayed yet.
            replay = replay && batch.on_replica && full;
            if full || batch.on_replica {
                continue;
            }
            tokio::select! {
                _ = commits.changed() => {}
                () = tokio::time::sleep(HEARTBEAT) => {
                    if !self.out.give(Bytes::from_static(b": heartbeat\n\n"), false) {
                        return;
                    }
                }
                () = self.out.tx.closed() => return,
            }
        }
    }

    /// Reads and judges the events after `after`: on a replica that has replayed what the
    /// stream's client has seen when `replay` (else, or when none has, on the primary). An
    /// identified client that hears of events is remembered at the position it read them at,
    /// so that its later reads see at least as much.
    async fn read(&self, after: i64, replay: bool) -> Result<Batch, Error> {
        let judge = Arc::clone(&self.judge);
        let reader = match replay {
            true => self.reader,
            false => self.reader.on_primary(),
        };
        self.db
            .run_lazy(move |lazy| {
                lazy.read_from_replicas(reader);
                let (last, count, text) = lazy.retrying(|lazy| {
                    let conn = &mut lazy.conn()?;
                    let events = events_after(conn, judge.model(), after)?;
                    let mut text = String::new();
                    judge.judge(conn, &events, &mut text)?;
                    Ok((events.last().map(ChangeEvent::place), events.len(), text))
                })?;
                let on_replica = matches!(lazy.served_by(), Some(ServedBy::Replica(_)));
                if !text.is_empty() {
                    lazy.consistency(true);
                }
                Ok(Batch {
                    last,
                    count,
                    text,
                    on_replica,
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handoff() -> (Handoff, mpsc::Receiver<Bytes>) {
        let (tx, rx) = mpsc::channel(BUFFER);
        let held = Arc::new(AtomicUsize::new(0));
        (Handoff { tx, held }, rx)
    }

    fn text(kib: usize) -> Bytes {
        Bytes::from(vec![b'x'; kib * 1024])
    }

    #[test]
    fn a_live_stream_holds_a_mebibyte_and_one_catching_up_its_chunks() {
        // Live: a chunk of any size goes when nothing is held; then at most 1 MiB in all.
        let (live, _rx) = handoff();
        assert!(live.give(text(600), true));
        assert!(live.give(text(400), true));
        assert!(!live.give(text(100), true));
        let (live, _rx) = handoff();
        assert!(live.give(text(3 * 1024), true));
        assert!(!live.give(text(1), true));
        // Catching up: only the number of chunks counts.
        let (replay, _rx) = handoff();
        for _ in 0..BUFFER {
            assert!(replay.give(text(600), false));
        }
        assert!(!replay.give(text(1), false));
        // What the response took no longer counts.
        let (live, mut rx) = handoff();
        assert!(live.give(text(900), true));
        let taken = rx.try_recv().unwrap_or_else(|e| panic!("{e:?}"));
        live.held.fetch_sub(taken.len(), Ordering::Relaxed);
        assert!(live.give(text(900), true));
    }
}
