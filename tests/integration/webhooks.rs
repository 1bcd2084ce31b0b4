//! Webhook deliveries (docs/changes.md#webhooks) to a receiver each test starts on
//! 127.0.0.1: signatures the Standard Webhooks reference library verifies, rotation, the
//! guard, non-2xx answers, redirects and timeouts as failures, and deliveries run as jobs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use plover::jobs::{Jobs, NewJob};
use plover::prelude::*;
use plover::webhooks::{deliver, DeliveryError, Endpoint, Secret, Targets};
use plover_tests::*;
use serde_json::json;

/// One request the receiver got: its headers and body.
#[derive(Debug, Clone)]
struct Received {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

type Log = Arc<Mutex<Vec<Received>>>;

/// A receiver on a free port of 127.0.0.1: `/ok` records and answers 204, `/fail` 500,
/// `/slow` answers after 5 s, `/moved` redirects to `/ok`. Its base URL.
async fn receiver(log: &Log) -> String {
    let log = log.clone();
    let server = HttpServer::new(move || {
        let log = log.clone();
        App::new()
            .route(
                "/ok",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let log = log.clone();
                    async move {
                        let headers = (req.headers().iter())
                            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                            .collect();
                        log.lock().unwrap().push(Received {
                            headers,
                            body: body.to_vec(),
                        });
                        HttpResponse::NoContent().finish()
                    }
                }),
            )
            .route(
                "/fail",
                web::post().to(|| async { HttpResponse::InternalServerError().finish() }),
            )
            .route(
                "/slow",
                web::post().to(|| async {
                    actix_web::rt::time::sleep(Duration::from_secs(5)).await;
                    HttpResponse::Ok().finish()
                }),
            )
            .route(
                "/moved",
                web::post().to(|| async {
                    HttpResponse::TemporaryRedirect()
                        .insert_header(("location", "/ok"))
                        .finish()
                }),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .expect("a free port");
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{address}")
}

fn endpoint(base: &str, path: &str, secret: &Secret) -> Endpoint {
    Endpoint::new(&format!("{base}{path}"), &secret.expose(), Targets::Any).expect("an endpoint")
}

/// Whether the reference library verifies `received` with `secret`.
fn verifies(received: &Received, secret: &Secret) -> bool {
    let mut headers = http::HeaderMap::new();
    for (name, value) in &received.headers {
        headers.insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    let webhook = standardwebhooks::Webhook::new(&secret.expose()).unwrap();
    webhook.verify(&received.body, &headers).is_ok()
}

fn header<'a>(received: &'a Received, name: &str) -> &'a str {
    (received.headers.iter())
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

#[actix_web::test]
async fn a_delivery_is_signed_so_that_the_reference_library_verifies_it() {
    let log = Log::default();
    let base = receiver(&log).await;
    let secret = Secret::generate();
    let body = br#"{"id": 41, "event": "created", "resource": "ticket", "object": {"id": 3}}"#;
    let sent = deliver(&endpoint(&base, "/ok", &secret), "41", body).await;
    assert_eq!(sent.unwrap(), 204);

    let received = log.lock().unwrap()[0].clone();
    assert_eq!(received.body, body);
    assert_eq!(header(&received, "webhook-id"), "41");
    assert_eq!(header(&received, "content-type"), "application/json");
    let timestamp: i64 = header(&received, "webhook-timestamp").parse().unwrap();
    assert!((timestamp - chrono::Utc::now().timestamp()).abs() < 60);
    assert!(verifies(&received, &secret));
    assert!(
        !verifies(&received, &Secret::generate()),
        "another key fails"
    );
    let mut tampered = received.clone();
    tampered.body = br#"{"id": 41, "event": "deleted"}"#.to_vec();
    assert!(!verifies(&tampered, &secret), "another body fails");
}

#[actix_web::test]
async fn while_a_secret_is_rotated_each_of_the_two_verifies() {
    let log = Log::default();
    let base = receiver(&log).await;
    let (old, new) = (Secret::generate(), Secret::generate());
    let rotated = endpoint(&base, "/ok", &old).rotate(&new.expose()).unwrap();
    deliver(&rotated, "7", b"{}").await.unwrap();
    let received = log.lock().unwrap()[0].clone();
    assert_eq!(header(&received, "webhook-signature").split(' ').count(), 2);
    assert!(verifies(&received, &old));
    assert!(verifies(&received, &new));
}

#[actix_web::test]
async fn non_2xx_answers_redirects_and_timeouts_are_failures() {
    let log = Log::default();
    let base = receiver(&log).await;
    let secret = Secret::generate();
    let failed = deliver(&endpoint(&base, "/fail", &secret), "1", b"{}").await;
    assert!(
        matches!(failed, Err(DeliveryError::Status(500))),
        "{failed:?}"
    );
    let moved = deliver(&endpoint(&base, "/moved", &secret), "1", b"{}").await;
    assert!(
        matches!(moved, Err(DeliveryError::Status(307))),
        "{moved:?}"
    );
    assert!(log.lock().unwrap().is_empty(), "a redirect is not followed");
    let slow = endpoint(&base, "/slow", &secret).timeout(Duration::from_millis(300));
    let late = deliver(&slow, "1", b"{}").await;
    assert!(matches!(late, Err(DeliveryError::Timeout(_))), "{late:?}");
    // Nobody listens: a failure too.
    let closed = Endpoint::new("http://127.0.0.1:9/", &secret.expose(), Targets::Any).unwrap();
    let refused = deliver(&closed, "1", b"{}").await;
    assert!(
        matches!(refused, Err(DeliveryError::Failed(_))),
        "{refused:?}"
    );
}

#[actix_web::test]
async fn local_targets_are_refused_unless_allowed() {
    let log = Log::default();
    let base = receiver(&log).await;
    let secret = Secret::generate().expose();
    for url in [
        format!("{base}/ok"),
        "http://localhost/ok".into(),
        "http://[::1]/".into(),
    ] {
        let refused = Endpoint::new(&url, &secret, Targets::Public).unwrap_err();
        let Error::Validation { fields, .. } = refused else {
            panic!("{url}: not a validation error");
        };
        assert!(
            fields["url"].contains("refused"),
            "{url}: {}",
            fields["url"]
        );
    }
    let bad = Endpoint::new("not a url", &secret, Targets::Any).unwrap_err();
    assert!(bad.to_string().contains("Validation"), "{bad}");
    assert!(Endpoint::new(&format!("{base}/ok"), &secret, Targets::Any).is_ok());
}

#[actix_web::test]
async fn deliveries_run_as_jobs_and_a_failing_receiver_is_retried() {
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &[plover::jobs::Job::meta()]))
        .unwrap();
    let log = Log::default();
    let base = receiver(&log).await;
    let secret = Secret::generate();
    let (good, bad) = (
        endpoint(&base, "/ok", &secret),
        endpoint(&base, "/fail", &secret),
    );
    let queue = Jobs::new(db.clone())
        .retry(Duration::ZERO, Duration::ZERO)
        .handle("webhook", move |delivery: serde_json::Value| {
            let target = if delivery["good"] == true {
                good.clone()
            } else {
                bad.clone()
            };
            async move {
                let body = delivery["body"].to_string();
                let id = delivery["id"].to_string();
                deliver(&target, &id, body.as_bytes()).await?;
                Ok(())
            }
        });
    db.run_blocking(|conn| {
        conn.transaction(|conn| {
            let job = |good: bool| json!({"id": 5, "good": good, "body": {"id": 5}});
            NewJob::new("webhook", &job(true))?.enqueue(conn)?;
            NewJob::new("webhook", &job(false))?
                .max_attempts(2)
                .enqueue(conn)
        })
    })
    .unwrap();
    assert_eq!(
        queue.run_due().await.unwrap(),
        3,
        "one delivery, two failed attempts"
    );
    let received = log.lock().unwrap().clone();
    assert_eq!(received.len(), 1);
    assert!(verifies(&received[0], &secret));
    let failed = scalar(
        &db,
        "SELECT last_error FROM plover_job WHERE state = 'failed'",
    );
    assert!(failed.unwrap_or_default().contains("500"));
}
