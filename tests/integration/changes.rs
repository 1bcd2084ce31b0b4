//! The outbox and the change feed (docs/changes.md): one event per row each write path
//! touches, in the write's transaction; the feed's events as the subscriber's detail GET shows
//! the row, judged by the resource's scope, read checks and the stream's filters; resume,
//! reset and the list's snapshot cursor; ids in commit order under concurrent writers.

use std::time::Duration;

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover::changes::ChangeEvent;
use plover::views::Query;
use plover_tests::{basic, json_request, SseEvent, TestApp};
use serde_json::{json, Value};

/// How long a test waits for events that should come.
const WAIT: Duration = Duration::from_secs(5);

/// Every event of the outbox, oldest first.
fn events(app: &TestApp) -> Vec<ChangeEvent> {
    let all = Query::<ChangeEvent>::new().order_by(ChangeEvent::FIELDS.id);
    app.db.run_blocking(|c| all.all(c)).expect("the events")
}

/// `(model, op, object_id)` of each event after the first `skip`.
fn ops(app: &TestApp, skip: usize) -> Vec<(String, String, i64)> {
    (events(app).into_iter().skip(skip))
        .map(|e| (e.model, e.op, e.object_id))
        .collect()
}

fn op(model: &str, op: &str, id: i64) -> (String, String, i64) {
    (model.to_owned(), op.to_owned(), id)
}

#[actix_web::test]
async fn every_rest_write_path_records_one_event_per_row_in_its_transaction() {
    let app = TestApp::new().await;
    // Single create, update, delete.
    let id = app
        .post("/api/ticket/", json!({"title": "a", "body": "b"}))
        .await;
    let id = id.json_with(201)["id"].as_i64().expect("an id");
    app.send(json_request(
        Method::PATCH,
        &format!("/api/ticket/{id}/"),
        &json!({"title": "a2"}),
    ))
    .await
    .expect(200);
    app.delete(&format!("/api/ticket/{id}/")).await.expect(200);
    assert_eq!(
        ops(&app, 0),
        [
            op("ticket", "created", id),
            op("ticket", "updated", id),
            op("ticket", "deleted", id)
        ]
    );
    let all = events(&app);
    assert_eq!(
        all[1].field_names(),
        ["title"],
        "only the field that changed"
    );
    assert!(all[0].row_before.is_none() && all[2].row_after.is_none());
    let after: Value =
        serde_json::from_str(all[1].row_after.as_deref().expect("a row")).expect("JSON");
    assert_eq!(after["title"], "a2");

    // Bulk create: one event per row; a bulk create that fails leaves none.
    let n = events(&app).len();
    app.post(
        "/api/ticket/",
        json!([{"title": "x", "body": "1"}, {"title": "y", "body": "2"}]),
    )
    .await
    .expect(201);
    assert_eq!(events(&app).len(), n + 2);
    let bad = app
        .post(
            "/api/ticket/",
            json!([{"title": "z", "body": "1"}, {"title": 5}]),
        )
        .await;
    assert_eq!(bad.code(), 400);
    assert_eq!(events(&app).len(), n + 2, "a failed write records nothing");
    // A row's write fails after an earlier row of the array was written: that row's event
    // goes with it, and the array written again right after records each row once.
    let tickets = app.count("ticket");
    let bad = app
        .post(
            "/api/ticket/",
            json!([{"title": "z"}, {"title": "w", "parent_id": 999_999}]),
        )
        .await;
    assert_eq!(bad.code(), 400, "{}", bad.text());
    let items: Value = serde_json::from_str(&bad.text()).expect("JSON");
    let failed: Vec<&String> = items["items"].as_object().expect("items").keys().collect();
    assert_eq!(
        failed,
        ["1"],
        "only the row with the missing parent: {items}"
    );
    assert_eq!(app.count("ticket"), tickets, "nothing written");
    assert_eq!(
        events(&app).len(),
        n + 2,
        "a failed row's write records nothing"
    );
    app.post("/api/ticket/", json!([{"title": "z"}, {"title": "w"}]))
        .await
        .expect(201);
    assert_eq!(events(&app).len(), n + 4);

    // Writes by filter: one event per row they change.
    let n = events(&app).len();
    app.send(json_request(
        Method::PATCH,
        "/api/ticket/?title__in=x,y",
        &json!({"priority": 1}),
    ))
    .await
    .expect(200);
    let changed = ops(&app, n);
    assert_eq!(changed.len(), 2);
    assert!(changed
        .iter()
        .all(|(m, o, _)| m == "ticket" && o == "updated"));

    // Nested children: the parent and each child.
    let n = events(&app).len();
    let parent = app
        .post(
            "/api/ticket/",
            json!({"title": "p", "body": "b", "children": [{"title": "c", "body": "d"}]}),
        )
        .await;
    let parent = parent.json_with(201)["id"].as_i64().expect("an id");
    let created = ops(&app, n);
    assert_eq!(created.len(), 2, "{created:?}");
    assert!(created.contains(&op("ticket", "created", parent)));

    // A delete with dependents: the row, and the child whose nullable parent it empties.
    let child = created
        .iter()
        .find(|(_, _, id)| *id != parent)
        .map(|c| c.2)
        .expect("the child");
    let n = events(&app).len();
    app.delete(&format!("/api/ticket/{parent}/"))
        .await
        .expect(200);
    let deleted = ops(&app, n);
    assert_eq!(deleted.len(), 2, "{deleted:?}");
    assert!(
        deleted.contains(&op("ticket", "updated", child)),
        "{deleted:?}"
    );
    assert!(
        deleted.contains(&op("ticket", "deleted", parent)),
        "{deleted:?}"
    );

    // views::Query writes go through the same row writes.
    let n = events(&app).len();
    let gone = app
        .db
        .run_blocking(|c| {
            Query::<plover_conformance_app::models::Ticket>::new()
                .filter(
                    plover_conformance_app::models::Ticket::FIELDS.title,
                    plover::query::Op::Eq,
                    "x",
                )
                .delete(c)
        })
        .expect("a delete");
    assert_eq!(gone, 1);
    assert_eq!(ops(&app, n).len(), 1);
}

#[actix_web::test]
async fn a_large_bulk_create_records_each_row_once_in_order_with_its_time() {
    // 300 rows: the events are written by inserts of 128, 128, 32, 8 and 4 rows.
    let app = TestApp::new().await;
    let before = plover::value::now();
    let rows: Vec<Value> = (0..300)
        .map(|n| json!({"title": format!("t{n}"), "body": "b"}))
        .collect();
    let created = app.post("/api/ticket/", json!(rows)).await.json_with(201);
    let ids: Vec<i64> = (created.as_array().expect("the rows").iter())
        .map(|row| row["id"].as_i64().expect("an id"))
        .collect();
    let all = events(&app);
    assert_eq!(all.len(), 300);
    let object_ids: Vec<i64> = all.iter().map(|e| e.object_id).collect();
    assert_eq!(
        object_ids, ids,
        "one event per row, in the order of the rows"
    );
    let first = &all[0];
    assert!(first.created >= before && first.created <= plover::value::now());
    for (e, n) in all.iter().zip(0..) {
        assert_eq!((e.model.as_str(), e.op.as_str()), ("ticket", "created"));
        assert_eq!(e.created, first.created, "the time of the transaction");
        assert_eq!(e.field_names(), first.field_names());
        let after: Value =
            serde_json::from_str(e.row_after.as_deref().expect("a row")).expect("the row's JSON");
        assert_eq!(after["title"], format!("t{n}"));
    }
    assert!(first.field_names().contains(&"title".to_owned()));
}

#[actix_web::test]
async fn the_author_of_a_write_is_recorded() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let (name, value) = basic("alice", "pw");
    let req = json_request(Method::POST, "/api/message/", &json!({"content": "hi"}))
        .insert_header((name, value));
    app.send(req).await.expect(201);
    let message = events(&app)
        .into_iter()
        .find(|e| e.model == "message")
        .expect("its event");
    assert_eq!((message.user_id, message.api_key_id), (Some(alice), None));
    app.post("/api/ticket/", json!({"title": "anon", "body": "b"}))
        .await
        .expect(201);
    let ticket = events(&app)
        .into_iter()
        .find(|e| e.model == "ticket")
        .expect("its event");
    assert_eq!((ticket.user_id, ticket.api_key_id), (None, None));
}

/// The events of `stream` once `n` came (or the wait ended).
async fn next(stream: &mut plover_tests::Streamed, n: usize) -> Vec<SseEvent> {
    stream.events(n, WAIT).await
}

#[actix_web::test]
async fn a_feed_serves_each_change_as_the_detail_get_shows_it() {
    let app = TestApp::new().await;
    let mut feed = app.stream("/api/ticket/changes/").await;
    assert_eq!(feed.status, 200);
    assert_eq!(
        feed.headers
            .get("content-type")
            .map(|v| v.to_str().unwrap_or("")),
        Some("text/event-stream")
    );
    let id = app
        .post("/api/ticket/", json!({"title": "a", "body": "b"}))
        .await;
    let id = id.json_with(201)["id"].as_i64().expect("an id");
    app.send(json_request(
        Method::PATCH,
        &format!("/api/ticket/{id}/"),
        &json!({"title": "a2"}),
    ))
    .await
    .expect(200);
    app.delete(&format!("/api/ticket/{id}/")).await.expect(200);
    let got = next(&mut feed, 3).await;
    let kinds: Vec<&str> = got.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["created", "updated", "deleted"]);
    assert!(got.windows(2).all(|w| w[0].id < w[1].id), "ids increase");
    assert_eq!(got[1].data["id"], id);
    assert_eq!(got[1].data["object"]["title"], "a2");
    assert!(
        got[1].data["object"].get("secret_note").is_none(),
        "private fields never"
    );
    assert_eq!(got[2].data["object"], Value::Null);
}

#[actix_web::test]
async fn a_feed_tells_nobody_of_rows_they_could_not_read() {
    let app = TestApp::new().await;
    // hmodel's check_get refuses rows whose h_field is "private".
    let mut feed = app.stream("/api/hmodel/changes/").await;
    let hidden = app
        .post("/api/hmodel/", json!({"h_field": "private"}))
        .await;
    let hidden = hidden.json_with(201)["id"].as_i64().expect("an id");
    let shown = app.post("/api/hmodel/", json!({"h_field": "open"})).await;
    let shown = shown.json_with(201)["id"].as_i64().expect("an id");
    // Now readable: an update; then unreadable: it leaves, its object null.
    app.send(json_request(
        Method::PUT,
        &format!("/api/hmodel/{shown}/"),
        &json!({"h_field": "private"}),
    ))
    .await
    .expect(200);
    app.delete(&format!("/api/hmodel/{hidden}/"))
        .await
        .expect(200);
    let got = next(&mut feed, 3).await;
    let seen: Vec<(&str, i64)> = got
        .iter()
        .map(|e| (e.event.as_str(), e.data["id"].as_i64().unwrap_or(0)))
        .collect();
    assert_eq!(seen, [("created", shown), ("left", shown)], "{got:?}");
    assert_eq!(got[1].data["object"], Value::Null);

    // Filters: a row that stops matching leaves, shown as the GET shows it (still readable).
    let mut open = app.stream("/api/ticket/changes/?status=open").await;
    let t = app
        .post("/api/ticket/", json!({"title": "t", "body": "b"}))
        .await;
    let t = t.json_with(201)["id"].as_i64().expect("an id");
    app.send(json_request(
        Method::PATCH,
        &format!("/api/ticket/{t}/"),
        &json!({"status": "closed"}),
    ))
    .await
    .expect(200);
    app.send(json_request(
        Method::PATCH,
        &format!("/api/ticket/{t}/"),
        &json!({"title": "unseen"}),
    ))
    .await
    .expect(200);
    let got = next(&mut open, 3).await;
    let kinds: Vec<&str> = got.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["created", "left"], "{got:?}");
    assert_eq!(got[1].data["object"]["status"], "closed");

    // An unknown filter is the list's 400.
    let bad = app.get("/api/ticket/changes/?nosuchfield=1").await;
    assert_eq!(bad.code(), 400);
}

#[actix_web::test]
async fn user_events_never_show_private_fields_nor_inactive_users() {
    let app = TestApp::new().await;
    app.user_with("root", "pw", true, true);
    let (name, value) = basic("root", "pw");
    let mut feed = app
        .service_stream(
            TestRequest::get()
                .uri("/api/user/changes/")
                .insert_header((name, value)),
        )
        .await;
    assert_eq!(feed.status, 200);
    app.user_with("ghost", "pw", false, false);
    let bob = app.user("bob", "pw");
    let got = next(&mut feed, 2).await;
    assert_eq!(got.len(), 1, "the inactive user is never sent: {got:?}");
    assert_eq!(got[0].data["id"], bob);
    let object = got[0].data["object"].as_object().expect("an object");
    assert!(
        !object.contains_key("email") && !object.contains_key("password"),
        "{object:?}"
    );
}

#[actix_web::test]
async fn a_feed_resumes_after_an_id_and_the_list_cursor_misses_nothing() {
    let app = TestApp::new().await;
    app.post("/api/ticket/", json!({"title": "one", "body": "b"}))
        .await
        .expect(201);
    let list = app.get("/api/ticket/?changes=cursor").await.json_with(200);
    let cursor = list["meta"]["changes_cursor"].as_i64().expect("a cursor");
    assert_eq!(list["objects"].as_array().map(Vec::len), Some(1));
    app.post("/api/ticket/", json!({"title": "two", "body": "b"}))
        .await
        .expect(201);
    app.post("/api/ticket/", json!({"title": "three", "body": "b"}))
        .await
        .expect(201);
    // After the cursor: the two rows the list did not hold, no more.
    let mut feed = app
        .stream(&format!("/api/ticket/changes/?after={cursor}"))
        .await;
    let got = next(&mut feed, 3).await;
    let titles: Vec<&str> = got
        .iter()
        .filter_map(|e| e.data["object"]["title"].as_str())
        .collect();
    assert_eq!(titles, ["two", "three"]);
    // Last-Event-ID wins over `after`.
    let first_id = got[0].id.expect("an id");
    let req = TestRequest::get()
        .uri(&format!("/api/ticket/changes/?after={cursor}"))
        .insert_header(("Last-Event-ID", first_id.to_string()));
    let mut resumed = app.service_stream(req).await;
    let got = next(&mut resumed, 2).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].data["object"]["title"], "three");
    // Malformed positions are a 400 naming them; `changes=` elsewhere is a 400.
    let bad = app.get("/api/ticket/changes/?after=soon").await;
    assert_eq!(bad.code(), 400);
    assert!(bad.text().contains("after"));
    let req = TestRequest::get()
        .uri("/api/ticket/changes/")
        .insert_header(("Last-Event-ID", "-3"));
    let bad = app.service_stream(req).await;
    assert_eq!(bad.status, 400);
    assert_eq!(app.get("/api/amodel/?changes=cursor").await.code(), 400);
    assert_eq!(app.get("/api/ticket/?changes=everything").await.code(), 400);
    // A position past every event: reset, and the stream ends.
    let mut ahead = app.stream("/api/ticket/changes/?after=100000").await;
    let got = next(&mut ahead, 2).await;
    assert_eq!(
        got.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
        ["reset"]
    );
}

#[actix_web::test]
async fn a_position_at_the_largest_event_id_is_a_reset_not_an_overflow() {
    let app = TestApp::new().await;
    app.post("/api/ticket/", json!({"title": "one", "body": "b"}))
        .await
        .expect(201);
    for position in [i64::MAX, i64::MAX - 1] {
        let mut ahead = app
            .stream(&format!("/api/ticket/changes/?after={position}"))
            .await;
        let got = next(&mut ahead, 2).await;
        assert_eq!(
            got.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
            ["reset"],
            "after={position}"
        );
        let req = TestRequest::get()
            .uri("/api/ticket/changes/")
            .insert_header(("Last-Event-ID", position.to_string()));
        let mut resumed = app.service_stream(req).await;
        assert_eq!(resumed.status, 200, "Last-Event-ID: {position}");
        let got = next(&mut resumed, 2).await;
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].event, "reset");
    }
}

#[actix_web::test]
async fn streams_are_bounded_per_client_address() {
    let app = TestApp::new().await;
    let from = |ip: &str| {
        let peer = format!("{ip}:4000").parse().expect("an address");
        TestRequest::get()
            .uri("/api/ticket/changes/")
            .peer_addr(peer)
    };
    let mut open = Vec::new();
    for _ in 0..16 {
        let feed = app.service_stream(from("10.0.0.7")).await;
        assert_eq!(feed.status, 200);
        open.push(feed);
    }
    let refused = app.service_stream(from("10.0.0.7")).await;
    assert_eq!(refused.status, 429);
    assert!(refused.headers.get("retry-after").is_some());
    assert_eq!(
        app.service_stream(from("10.0.0.8")).await.status,
        200,
        "another address"
    );
    drop(open.pop());
    // The task notices the closed stream at its next write; a commit makes it write.
    app.post("/api/ticket/", json!({"title": "wake", "body": "b"}))
        .await
        .expect(201);
    let mut again = None;
    for _ in 0..50 {
        let feed = app.service_stream(from("10.0.0.7")).await;
        if feed.status == 200 {
            again = Some(feed);
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(again.is_some(), "a closed stream's place is free again");
}

#[actix_web::test]
async fn places_follow_the_commit_order_of_concurrent_writers() {
    let app = TestApp::new().await;
    if !app.is_postgres() {
        return; // SQLite has one writer at a time: the slow one would hold the fast one back.
    }
    let mut feed = app.stream("/api/ticket/changes/").await;
    let db = app.db.clone();
    // A writer that takes its time inside its transaction (its event written, on PostgreSQL,
    // with an id taken before the fast one's), and one that commits meanwhile.
    let slow = std::thread::spawn(move || {
        db.run_blocking(|conn| {
            conn.transaction(|conn| {
                let changes = plover_conformance_app::models::TicketChanges {
                    title: Some("slow".into()),
                    body: Some("b".into()),
                    ..Default::default()
                };
                plover::model::save::<plover_conformance_app::models::Ticket>(conn, changes, None)?;
                std::thread::sleep(Duration::from_millis(800));
                Ok(())
            })
        })
    });
    actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    app.post("/api/ticket/", json!({"title": "fast", "body": "b"}))
        .await
        .expect(201);
    let title = |e: &SseEvent| e.data["object"]["title"].as_str().map(str::to_owned);
    let first = next(&mut feed, 1).await;
    assert_eq!(title(&first[0]).as_deref(), Some("fast"), "committed first");
    slow.join().expect("the slow writer").expect("its write");
    let second = next(&mut feed, 1).await;
    assert_eq!(title(&second[0]).as_deref(), Some("slow"));
    let (fast, slow) = (
        first[0].id.expect("a place"),
        second[0].id.expect("a place"),
    );
    assert!(
        slow > fast,
        "a reader that saw {fast} never sees a smaller one later ({slow})"
    );
    let raw = |title: &str| {
        let all = events(&app);
        let event = all.into_iter().find(|e| {
            (e.row_after.as_deref()).is_some_and(|r| r.contains(&format!("\"{title}\"")))
        });
        event.expect("its event")
    };
    // The events' own ids need not follow the commits: the places do.
    assert_eq!((raw("fast").place(), raw("slow").place()), (fast, slow));
}

#[actix_web::test]
async fn concurrent_writers_reach_a_subscriber_once_each_in_commit_order() {
    let app = TestApp::new().await;
    let mut feed = app.stream("/api/ticket/changes/").await;
    // Writers that stall inside their transactions for different times, so that their
    // commits interleave in another order than the one their events were written in.
    const WRITERS: usize = 6;
    const EACH: usize = 5;
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = app.db.clone();
            std::thread::spawn(move || {
                for n in 0..EACH {
                    db.run_blocking(|conn| {
                        conn.transaction(|conn| {
                            let changes = plover_conformance_app::models::TicketChanges {
                                title: Some(format!("w{w}-{n}")),
                                body: Some("b".into()),
                                ..Default::default()
                            };
                            plover::model::save::<plover_conformance_app::models::Ticket>(
                                conn, changes, None,
                            )?;
                            std::thread::sleep(Duration::from_millis(
                                ((w * 7 + n * 3) % 11) as u64,
                            ));
                            Ok(())
                        })
                    })
                    .expect("a write");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer");
    }
    let got = next(&mut feed, WRITERS * EACH).await;
    let mut titles: Vec<String> = got
        .iter()
        .filter_map(|e| e.data["object"]["title"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(titles.len(), WRITERS * EACH, "{got:?}");
    assert!(
        got.windows(2).all(|w| w[0].id < w[1].id),
        "places increase: {:?}",
        got.iter().map(|e| e.id).collect::<Vec<_>>()
    );
    titles.sort();
    titles.dedup();
    assert_eq!(titles.len(), WRITERS * EACH, "each write once");
    // A subscriber that resumes from the middle gets the rest, in the same order.
    let middle = got[WRITERS * EACH / 2 - 1].id.expect("an id");
    let mut resumed = app
        .stream(&format!("/api/ticket/changes/?after={middle}"))
        .await;
    let rest = next(&mut resumed, WRITERS * EACH / 2).await;
    let ids = |events: &[SseEvent]| events.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(&rest), ids(&got[WRITERS * EACH / 2..]));
}

/// A row of `sample` with a value of each kind whose JSON an engine might write its own way
/// (a boolean, a large integer, a float, a date, a time, a null), named `name`.
fn sample(name: &str) -> Value {
    json!({
        "name": name, "qty": 7, "big": 1_i64 << 40, "ratio": 0.25, "flag": true,
        "body": "b", "remark": null, "day": "2026-11-30", "stamp": "2026-11-30T12:34:56.5",
    })
}

#[actix_web::test]
async fn a_bulk_creates_events_keep_the_rows_as_a_single_creates_do() {
    // The first row of a transaction gives its event its JSON from its own insert; the rows
    // after it have theirs read from the table at the commit. Both must read the same.
    let app = TestApp::new().await;
    let mut feed = app.stream("/api/sample/changes/").await;
    assert_eq!(feed.status, 200);
    app.post("/api/sample/", sample("s0")).await.expect(201);
    let rows = json!([sample("s1"), sample("s2"), sample("s3")]);
    app.post("/api/sample/", rows).await.expect(201);
    let got = next(&mut feed, 4).await;
    assert_eq!(got.len(), 4);
    for e in &got {
        let id = e.data["id"].as_i64().expect("an id");
        let detail = app.get(&format!("/api/sample/{id}/")).await.json_with(200);
        assert_eq!(e.data["object"], detail, "the event as the detail GET");
    }
    // The stored snapshots too: equal but for the key and the name.
    let snapshots: Vec<Value> = (events(&app).iter())
        .map(|e| {
            let mut row: Value =
                serde_json::from_str(e.row_after.as_deref().expect("a row")).expect("JSON");
            let row = row.as_object_mut().expect("an object");
            row.remove("id");
            row.remove("name");
            Value::Object(row.clone())
        })
        .collect();
    assert_eq!(snapshots.len(), 4);
    assert!(
        snapshots.iter().all(|s| *s == snapshots[0]),
        "{snapshots:?}"
    );
}

#[actix_web::test]
async fn a_row_changed_after_its_creation_in_one_transaction_keeps_both_states() {
    // The events of rows created in a transaction read their JSON at its commit, unless a
    // write of the same model comes first: then they read it before that write.
    use plover_conformance_app::models::{Ticket, TicketChanges};
    let app = TestApp::new().await;
    app.db
        .run_blocking(|conn| {
            conn.transaction(|conn| {
                let mut rows = Vec::new();
                for title in ["t0", "t1", "t2"] {
                    let changes = TicketChanges {
                        title: Some(title.into()),
                        body: Some("b".into()),
                        ..Default::default()
                    };
                    rows.push(plover::model::save::<Ticket>(conn, changes, None)?);
                }
                let changes = TicketChanges {
                    title: Some("t1 again".into()),
                    ..Default::default()
                };
                plover::model::save::<Ticket>(conn, changes, Some(&rows[1]))?;
                Ok(())
            })
        })
        .expect("the writes");
    let all = events(&app);
    let title = |json: Option<&str>| -> Value {
        serde_json::from_str::<Value>(json.expect("a row")).expect("JSON")["title"].clone()
    };
    let seen: Vec<(&str, Value)> = (all.iter())
        .map(|e| (e.op.as_str(), title(e.row_after.as_deref())))
        .collect();
    assert_eq!(
        seen,
        [
            ("created", json!("t0")),
            ("created", json!("t1")),
            ("created", json!("t2")),
            ("updated", json!("t1 again")),
        ]
    );
    assert_eq!(title(all[3].row_before.as_deref()), json!("t1"));
}
