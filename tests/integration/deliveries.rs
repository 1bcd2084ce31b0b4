//! Webhook deliveries from the outbox (docs/changes.md#deliveries-from-the-outbox), to a
//! receiver each test starts on 127.0.0.1: one signed delivery per event and endpoint, with
//! the object as the resource serializes it (private and write-only fields never), retried
//! with the same `webhook-id`, in event order per endpoint, dead-lettered after the last
//! attempt and sent again by `jobs::retry`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::http::Method;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use plover::changes::ChangeEvent;
use plover::jobs::{self, Jobs};
use plover::prelude::*;
use plover::views::Query;
use plover::webhooks::{Endpoint, Secret, Targets, Webhooks};
use plover_tests::*;
use serde_json::{json, Value};

/// One request the receiver got, and the status it answered.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Vec<u8>,
    pub(crate) status: u16,
}

impl Received {
    fn id(&self) -> &str {
        self.headers["webhook-id"].to_str().unwrap()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// The receiver's log, and how many of the next requests it answers 500.
#[derive(Default)]
pub(crate) struct Receiver {
    log: Mutex<Vec<Received>>,
    pub(crate) fail_next: AtomicUsize,
}

impl Receiver {
    pub(crate) fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    /// The answered requests (2xx).
    pub(crate) fn delivered(&self) -> Vec<Received> {
        let all = self.received();
        all.into_iter().filter(|r| r.status < 300).collect()
    }
}

/// Starts a receiver on a free port of 127.0.0.1; the URL of its `/hooks`.
pub(crate) async fn receiver(state: &Arc<Receiver>) -> String {
    let state = state.clone();
    let server = HttpServer::new(move || {
        let state = state.clone();
        App::new().route(
            "/hooks",
            web::post().to(move |req: HttpRequest, body: web::Bytes| {
                let state = state.clone();
                async move {
                    let failing = state
                        .fail_next
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    let mut headers = http::HeaderMap::new();
                    for (name, value) in req.headers() {
                        headers.insert(
                            http::HeaderName::from_bytes(name.as_str().as_bytes()).unwrap(),
                            http::HeaderValue::from_bytes(value.as_bytes()).unwrap(),
                        );
                    }
                    let status = if failing { 500 } else { 204 };
                    state.log.lock().unwrap().push(Received {
                        headers,
                        body: body.to_vec(),
                        status,
                    });
                    if failing {
                        HttpResponse::InternalServerError().finish()
                    } else {
                        HttpResponse::NoContent().finish()
                    }
                }
            }),
        )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .expect("a free port");
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{address}/hooks")
}

/// The conformance app's API "api" with webhooks to a receiver, over a fresh database.
struct Hooked {
    db: Database,
    _store: Store,
    auth: Auth<User>,
    service: TestService,
    hooks: Webhooks,
    queue: Jobs,
    receiver: Arc<Receiver>,
    url: String,
    secret: Secret,
}

/// The application, its webhooks made by `configure` from the API and an endpoint at the
/// receiver (signed with a new secret, loopback allowed). The dispatcher's position is made
/// before it returns.
async fn hooked(configure: impl FnOnce(&RestApi, Endpoint) -> Webhooks) -> Hooked {
    let (db, store) = fresh_database("");
    let mut tables = models();
    tables.push(plover::jobs::Job::meta());
    db.run_blocking(|conn| plover::schema::create_tables(conn, &tables))
        .unwrap();
    let auth = Auth::<User>::new(db.clone()).cost(4);
    let api = plover_conformance_app::api(db.clone(), &auth, plover::rest::DEFAULT_MAX_BODY_BYTES);
    let receiver = Arc::new(Receiver::default());
    let url = self::receiver(&receiver).await;
    let secret = Secret::generate();
    let endpoint = Endpoint::new(&url, &secret.expose(), Targets::Any).unwrap();
    let hooks = configure(&api, endpoint);
    let queue = hooks.jobs(Jobs::new(db.clone()));
    assert_eq!(hooks.dispatch().await.unwrap(), 0, "the position is made");
    let service = TestService::new(App::new().configure(api.setup())).await;
    Hooked {
        db,
        _store: store,
        auth,
        service,
        hooks,
        queue,
        receiver,
        url,
        secret,
    }
}

impl Hooked {
    /// Queues the deliveries of the new events and runs the due jobs.
    async fn deliver(&self) {
        self.hooks.dispatch().await.unwrap();
        self.queue.run_due().await.unwrap();
    }

    async fn create(&self, path: &str, body: Value) -> Value {
        let resp = self
            .service
            .send(json_request(Method::POST, path, &body))
            .await;
        resp.json_with(201)
    }

    fn events(&self) -> Vec<ChangeEvent> {
        let all = Query::<ChangeEvent>::new().order_by(ChangeEvent::FIELDS.id);
        self.db.run_blocking(|c| all.all(c)).unwrap()
    }

    fn verifies(&self, received: &Received) -> bool {
        let webhook = standardwebhooks::Webhook::new(&self.secret.expose()).unwrap();
        webhook.verify(&received.body, &received.headers).is_ok()
    }
}

/// Every event of message, ticket and sample, as the conformance app's `--webhook` says.
fn conformance(api: &RestApi, endpoint: Endpoint) -> Webhooks {
    Webhooks::new(api)
        .retry(Duration::ZERO, Duration::ZERO)
        .max_attempts(5)
        .endpoint(endpoint.resources(&["message", "ticket", "sample"]))
}

#[actix_web::test]
async fn a_rest_write_makes_one_signed_delivery_through_the_dispatcher_and_workers() {
    let app = hooked(|api, endpoint| {
        Webhooks::new(api).endpoint(endpoint.resources(&["message", "ticket", "sample"]))
    })
    .await;
    let workers = app.queue.clone().poll(Duration::from_millis(50)).start(2);
    let dispatcher = app.hooks.start().unwrap();
    let ticket = app
        .create(
            "/api/ticket/",
            json!({"title": "Printer", "body": "on fire"}),
        )
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while app.receiver.received().is_empty() && tokio::time::Instant::now() < deadline {
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    // Time for a duplicate to show up, if one were sent.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    dispatcher.stop().await;
    workers.stop().await;

    let received = app.receiver.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let event = &app.events()[0];
    assert!(app.verifies(&received[0]));
    assert_eq!(received[0].id(), event.id.to_string());
    let detail = app
        .service
        .send(actix_web::test::TestRequest::get().uri(&format!("/api/ticket/{}/", ticket["id"])))
        .await
        .json_with(200);
    assert_eq!(
        received[0].json(),
        json!({"id": event.id, "event": "created", "resource": "ticket", "object": detail})
    );
    assert_eq!(
        scalar(&app.db, "SELECT COUNT(*) FROM plover_job").as_deref(),
        Some("0"),
        "a delivered job is gone"
    );
}

#[actix_web::test]
async fn a_failing_delivery_is_retried_with_its_id_and_holds_back_the_endpoints_next_one() {
    let app = hooked(conformance).await;
    app.receiver.fail_next.store(2, Ordering::SeqCst);
    let first = app
        .create("/api/ticket/", json!({"title": "one", "body": "1"}))
        .await;
    app.create("/api/sample/", json!({"name": "two", "qty": 2}))
        .await;
    let path = format!("/api/ticket/{}/", first["id"]);
    app.service
        .send(actix_web::test::TestRequest::delete().uri(&path))
        .await
        .expect(200);
    app.deliver().await;

    let events = app.events();
    let received = app.receiver.received();
    let ids: Vec<&str> = received.iter().map(Received::id).collect();
    let (one, two, three) = (
        events[0].id.to_string(),
        events[1].id.to_string(),
        events[2].id.to_string(),
    );
    assert_eq!(
        ids,
        [&one, &one, &one, &two, &three],
        "in event order, retries first"
    );
    assert_eq!(
        received.iter().map(|r| r.status).collect::<Vec<_>>(),
        [500, 500, 204, 204, 204]
    );
    assert!(received.iter().all(|r| app.verifies(r)));
    assert_eq!(
        received[0].body, received[2].body,
        "every attempt sends the same body"
    );
    let bodies: Vec<Value> = app
        .receiver
        .delivered()
        .iter()
        .map(Received::json)
        .collect();
    assert_eq!(bodies[0]["object"]["title"], "one");
    assert_eq!(
        (bodies[1]["event"].as_str(), bodies[1]["resource"].as_str()),
        (Some("created"), Some("sample"))
    );
    assert_eq!(
        bodies[2],
        json!({"id": events[2].id, "event": "deleted", "resource": "ticket", "object": null})
    );
}

#[actix_web::test]
async fn private_and_write_only_fields_are_never_in_a_body() {
    let app = hooked(|api, endpoint| {
        Webhooks::new(api)
            .retry(Duration::ZERO, Duration::ZERO)
            .endpoint(endpoint.resources(&["user", "message", "ticket"]))
    })
    .await;
    microblog::ensure_user(&app.db, &app.auth, "alice", "s3cret-pw", false).unwrap();
    let email = "alice-private@example.com";
    app.db
        .run_blocking(|conn| {
            conn.batch_execute(&format!(
                "UPDATE \"user\" SET email = '{email}' WHERE username = 'alice'"
            ))
        })
        .unwrap();
    let post = json_request(Method::POST, "/api/message/", &json!({"content": "hi"}))
        .insert_header(basic("alice", "s3cret-pw"));
    app.service.send(post).await.expect(201);
    let ticket = app
        .create("/api/ticket/", json!({"title": "t", "body": "b"}))
        .await;
    app.db
        .run_blocking(|conn| {
            conn.batch_execute("UPDATE ticket SET secret_note = 'the-staff-secret'")
        })
        .unwrap();
    let patch = json_request(
        Method::PATCH,
        &format!("/api/ticket/{}/", ticket["id"]),
        &json!({"title": "t2"}),
    );
    app.service.send(patch).await.expect(200);
    app.deliver().await;

    let bodies: Vec<Value> = app
        .receiver
        .delivered()
        .iter()
        .map(Received::json)
        .collect();
    let resources: Vec<&str> = bodies
        .iter()
        .map(|b| b["resource"].as_str().unwrap())
        .collect();
    assert_eq!(
        resources,
        ["user", "message", "ticket", "ticket"],
        "{bodies:?}"
    );
    assert_eq!(bodies[0]["object"]["username"], "alice");
    assert_eq!(
        bodies[1]["object"]["user"]["username"], "alice",
        "the include"
    );
    assert_eq!(bodies[3]["object"]["title"], "t2");
    for received in app.receiver.delivered() {
        let text = String::from_utf8(received.body.clone()).unwrap();
        for secret in [
            "email",
            email,
            "password",
            "$2",
            "secret_note",
            "the-staff-secret",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
}

#[actix_web::test]
async fn after_its_last_attempt_a_delivery_is_a_dead_letter_that_retry_sends_again() {
    let app = hooked(|api, endpoint| conformance(api, endpoint).max_attempts(3)).await;
    app.receiver.fail_next.store(usize::MAX, Ordering::SeqCst);
    app.create("/api/ticket/", json!({"title": "lost", "body": "b"}))
        .await;
    app.create("/api/ticket/", json!({"title": "next", "body": "b"}))
        .await;
    app.deliver().await;
    let received = app.receiver.received();
    assert_eq!(
        received.len(),
        6,
        "3 attempts each: a dead letter lets the next one go"
    );
    let dead = scalar(
        &app.db,
        "SELECT MIN(id) FROM plover_job WHERE state = 'failed' AND last_error LIKE '%500%'",
    );
    let dead: i64 = dead.unwrap().parse().unwrap();
    assert_eq!(
        scalar(
            &app.db,
            "SELECT COUNT(*) FROM plover_job WHERE state = 'failed'"
        )
        .as_deref(),
        Some("2")
    );

    app.receiver.fail_next.store(0, Ordering::SeqCst);
    assert!(app.db.run_blocking(|conn| jobs::retry(conn, dead)).unwrap());
    app.queue.run_due().await.unwrap();
    let delivered = app.receiver.delivered();
    assert_eq!(delivered.len(), 1);
    assert_eq!(
        delivered[0].id(),
        received[0].id(),
        "re-sent with its webhook-id"
    );
    assert_eq!(delivered[0].body, received[0].body);
    assert_eq!(delivered[0].json()["object"]["title"], "lost");
    assert!(app.verifies(&delivered[0]));
}

#[actix_web::test]
async fn each_endpoint_gets_what_it_wants_and_a_failing_one_holds_back_no_other() {
    let app = hooked(|api, endpoint| conformance(api, endpoint).max_attempts(2)).await;
    // A second endpoint on a closed port wants only the deletions of tickets.
    let secret = Secret::generate().expose();
    let closed = Endpoint::new("http://127.0.0.1:9/", &secret, Targets::Any).unwrap();
    let hooks = app
        .hooks
        .clone()
        .endpoint(closed.resources(&["ticket"]).operations(&["deleted"]));
    let ticket = app
        .create("/api/ticket/", json!({"title": "a", "body": "b"}))
        .await;
    let path = format!("/api/ticket/{}/", ticket["id"]);
    app.service
        .send(actix_web::test::TestRequest::delete().uri(&path))
        .await
        .expect(200);
    assert_eq!(
        hooks.dispatch().await.unwrap(),
        3,
        "two to the receiver, one elsewhere"
    );
    app.queue.run_due().await.unwrap();
    let events: Vec<&str> = (app.receiver.delivered().iter())
        .map(|r| {
            if r.json()["object"].is_null() {
                "deleted"
            } else {
                "created"
            }
        })
        .collect();
    assert_eq!(events, ["created", "deleted"]);
    assert_eq!(
        scalar(
            &app.db,
            "SELECT COUNT(*) FROM plover_job WHERE state = 'failed'"
        )
        .as_deref(),
        Some("1"),
        "the closed port's delivery"
    );
}

#[actix_web::test]
async fn dispatchers_of_two_processes_hand_each_event_out_once() {
    let app = hooked(conformance).await;
    // Another process: its own API and webhooks over the same database.
    let auth = Auth::<User>::new(app.db.clone()).cost(4);
    let other_api = plover_conformance_app::api(app.db.clone(), &auth, 1 << 20);
    let url = app.url.clone();
    let endpoint = Endpoint::new(&url, &app.secret.expose(), Targets::Any).unwrap();
    let other = conformance(&other_api, endpoint);
    for n in 0..5 {
        app.create("/api/sample/", json!({"name": format!("s{n}"), "qty": n}))
            .await;
    }
    let (one, two) = tokio::join!(app.hooks.dispatch(), other.dispatch());
    assert_eq!(one.unwrap() + two.unwrap(), 5);
    assert_eq!(
        other.dispatch().await.unwrap() + app.hooks.dispatch().await.unwrap(),
        0
    );
    app.queue.run_due().await.unwrap();
    let ids: Vec<String> = app
        .receiver
        .delivered()
        .iter()
        .map(|r| r.id().to_owned())
        .collect();
    let events: Vec<String> = app.events().iter().map(|e| e.id.to_string()).collect();
    assert_eq!(ids, events);
}
