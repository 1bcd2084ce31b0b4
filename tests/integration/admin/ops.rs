//! The admin's pages of the job queue and the webhooks (docs/admin.md#jobs-and-webhooks):
//! `Admin::jobs` and `Admin::webhooks`, over an application with the conformance app's API,
//! its webhooks delivering to the endpoints stored in the database and to a receiver each test
//! starts on 127.0.0.1.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::Method;
use actix_web::App;
use plover::admin::Admin;
use plover::jobs::{Job, JobResult, Jobs, NewJob};
use plover::prelude::*;
use plover::webhooks::{Secret, Targets, WebhookEndpoint, Webhooks};
use plover_tests::*;
use serde_json::json;

use super::{field_error, row_ids, see_other};
use crate::deliveries::{receiver, Receiver};

const PW: &str = "pw";

/// The application: its admin with the job and webhook pages, its job queue (the deliveries'
/// handler, and `flaky`, whose first attempt fails), and a receiver.
struct Ops {
    db: Database,
    _store: Store,
    service: TestService,
    hooks: Webhooks,
    queue: Jobs,
    receiver: Arc<Receiver>,
    url: String,
}

async fn ops(targets: Targets) -> Ops {
    let (db, store) = fresh_database("");
    let mut tables = models();
    tables.extend([Job::meta(), WebhookEndpoint::meta()]);
    db.run_blocking(|conn| plover::schema::create_tables(conn, &tables))
        .unwrap();
    let auth = Auth::<User>::new(db.clone()).cost(4);
    let api = plover_conformance_app::api(db.clone(), &auth, plover::rest::DEFAULT_MAX_BODY_BYTES);
    let hooks = Webhooks::new(&api)
        .retry(Duration::ZERO, Duration::ZERO)
        .max_attempts(2)
        .stored_endpoints(targets);
    let mut admin = Admin::new(&auth);
    admin.jobs().webhooks(&hooks);
    let runs = Arc::new(AtomicUsize::new(0));
    let queue = hooks.jobs(
        Jobs::new(db.clone()).handle("flaky", move |_: serde_json::Value| {
            let first = runs.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                let result: JobResult = if first {
                    Err("the first attempt fails".into())
                } else {
                    Ok(())
                };
                result
            }
        }),
    );
    assert_eq!(hooks.dispatch().await.unwrap(), 0, "the position is made");
    let hash = auth.make_password(PW).unwrap();
    db.run_blocking(move |conn| {
        User::insert(
            conn,
            UserChanges {
                username: Some("root".into()),
                password: Some(hash),
                email: Some("root@example.com".into()),
                join_date: Some(datetime("2020-01-01 00:00:00")),
                active: Some(true),
                admin: Some(true),
            },
        )
    })
    .unwrap();
    let service = TestService::new(
        App::new()
            .wrap(auth.session_middleware())
            .configure(auth.setup())
            .configure(api.setup())
            .configure(admin.setup()),
    )
    .await;
    let receiver = Arc::new(Receiver::default());
    let url = self::receiver(&receiver).await;
    Ops {
        db,
        _store: store,
        service,
        hooks,
        queue,
        receiver,
        url,
    }
}

impl Ops {
    /// The page `path` (200), checked for the keyboard and screen readers as every admin page.
    async fn page(&self, browser: &Browser<'_>, path: &str) -> String {
        let html = browser.get(path).await.expect(200).text();
        let problems = super::a11y::problems(path, &html);
        assert!(problems.is_empty(), "{problems:?}");
        html
    }

    /// A browser logged in as the administrator.
    async fn admin(&self) -> Browser<'_> {
        let browser = self.service.browser();
        browser.login("root", PW).await.expect(302);
        browser
    }

    fn count(&self, sql: &str) -> i64 {
        scalar(&self.db, sql).unwrap().parse().unwrap()
    }

    fn text(&self, sql: &str) -> String {
        scalar(&self.db, sql).unwrap_or_default()
    }

    /// Creates a ticket through the API.
    async fn ticket(&self, title: &str) {
        let body = json!({"title": title, "body": "on fire"});
        let resp = (self.service)
            .send(json_request(Method::POST, "/api/ticket/", &body))
            .await;
        resp.expect(201);
    }

    /// Queues the deliveries of the new events and runs the due jobs.
    async fn deliver(&self) -> usize {
        let queued = self.hooks.dispatch().await.unwrap();
        self.queue.run_due().await.unwrap();
        queued
    }

    /// Adds an endpoint through the admin's form; its response.
    async fn add_endpoint(&self, browser: &Browser<'_>, url: &str, secret: &str) -> Resp {
        let form = [
            ("url", url),
            ("secret", secret),
            ("resources", "ticket"),
            ("operations", ""),
            ("active", "1"),
        ];
        post(browser, "/admin/webhook-endpoints/add/", &form).await
    }

    /// Chooses `action` on `ids` in the index `index` and confirms it.
    async fn act(&self, browser: &Browser<'_>, index: &str, action: &str, ids: &[i64]) -> Resp {
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        let mut form = vec![("action", action), ("confirm", "yes")];
        form.extend(ids.iter().map(|id| ("id", id.as_str())));
        post(browser, index, &form).await
    }
}

/// POSTs `fields` with the session's CSRF token (read from the jobs' index, whose bulk form
/// has it).
async fn post(browser: &Browser<'_>, uri: &str, fields: &[(&str, &str)]) -> Resp {
    let token = browser.csrf("/admin/jobs/").await;
    let mut all = fields.to_vec();
    all.push(("csrf_token", &token));
    browser.post_form(uri, &all).await
}

/// Enqueues a job of `kind`; its id.
fn enqueue(db: &Database, kind: &str, attempts: u32) -> i64 {
    let job = NewJob::new(kind, &json!({"order": 7})).unwrap();
    db.run_blocking(move |conn| job.max_attempts(attempts).enqueue(conn))
        .unwrap()
}

#[actix_web::test]
async fn the_job_pages_list_by_state_and_retry_and_delete_are_their_only_writes() {
    let app = ops(Targets::Any).await;
    let flaky = enqueue(&app.db, "flaky", 1);
    assert_eq!(app.queue.run_due().await.unwrap(), 1, "its attempt fails");
    let waiting = enqueue(&app.db, "no_handler_here", 3);
    let stuck = enqueue(&app.db, "no_handler_here", 3);
    app.db
        .run_blocking(move |conn| {
            conn.batch_execute(&format!(
                "UPDATE plover_job SET state = 'running', attempts = 1 WHERE id = {stuck}"
            ))
        })
        .unwrap();
    let root = app.admin().await;

    // Every job, the newest first; no add or import page.
    let html = app.page(&root, "/admin/jobs/").await;
    assert_eq!(row_ids(&html), [stuck, waiting, flaky], "{html}");
    assert!(!html.contains("/admin/jobs/add/"), "{html}");
    assert!(!html.contains("/admin/jobs/import/"), "{html}");
    assert!(html.contains("the first attempt fails"), "{html}");
    assert!(html.contains("Retry (queue again now)"), "{html}");
    root.get("/admin/jobs/add/").await.expect(404);
    root.get("/admin/jobs/import/").await.expect(404);
    for (state, id) in [("queued", waiting), ("running", stuck), ("failed", flaky)] {
        let html = root
            .get(&format!("/admin/jobs/?state={state}"))
            .await
            .expect(200)
            .text();
        assert_eq!(row_ids(&html), [id], "{state}: {html}");
        assert!(
            html.contains(&format!("?state={state}\" aria-current")),
            "{html}"
        );
    }
    let html = root.get("/admin/jobs/?kind=flaky").await.expect(200).text();
    assert_eq!(row_ids(&html), [flaky]);
    let html = root.get("/admin/jobs/?q=FLAK").await.expect(200).text();
    assert_eq!(row_ids(&html), [flaky], "the search of the kinds");

    // A job's page shows its payload and last error, and saves nothing.
    let page = format!("/admin/jobs/{flaky}/");
    let html = app.page(&root, &page).await;
    assert!(unescape_html(&html).contains(r#"{"order":7}"#), "{html}");
    assert!(html.contains("the first attempt fails"), "{html}");
    assert!(!html.contains("type=\"submit\">Save"), "{html}");
    post(&root, &page, &[("kind", "edited")]).await.expect(405);
    assert_eq!(
        app.text(&format!("SELECT kind FROM plover_job WHERE id = {flaky}")),
        "flaky"
    );

    // Retry: the failed job is queued again with its attempts counted anew, then runs; the
    // others are left alone.
    let resp = app
        .act(&root, "/admin/jobs/", "retry", &[flaky, waiting])
        .await;
    assert_eq!(see_other(&resp), "/admin/jobs/");
    let html = root.get("/admin/jobs/").await.expect(200).text();
    assert!(html.contains("1 queued again; 1 left alone"), "{html}");
    let state = format!("SELECT state || ' ' || attempts FROM plover_job WHERE id = {flaky}");
    assert_eq!(app.text(&state), "queued 0");
    assert_eq!(app.queue.run_due().await.unwrap(), 1);
    assert_eq!(
        app.count(&format!(
            "SELECT COUNT(*) FROM plover_job WHERE id = {flaky}"
        )),
        0
    );

    // Delete removes.
    let resp = post(
        &root,
        "/admin/jobs/",
        &[
            ("action", "delete"),
            ("id", &waiting.to_string()),
            ("confirm", "yes"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/jobs/");
    let left = app.count("SELECT COUNT(*) FROM plover_job");
    assert_eq!(left, 1, "the running one is left");
}

#[actix_web::test]
async fn an_endpoint_added_in_the_admin_receives_signed_deliveries_until_deactivated() {
    let app = ops(Targets::Any).await;
    let root = app.admin().await;
    // The add form offers a new secret; one left blank is made.
    let html = app.page(&root, "/admin/webhook-endpoints/add/").await;
    assert!(html.contains("value=\"whsec_"), "{html}");
    let resp = app.add_endpoint(&root, &app.url, "").await;
    assert_eq!(see_other(&resp), "/admin/webhook-endpoints/");
    let secret = app.text("SELECT secret FROM plover_webhook_endpoint");
    assert!(Secret::parse(&secret).is_ok(), "{secret}");
    // Lists show it masked.
    let html = app.page(&root, "/admin/webhook-endpoints/").await;
    assert!(html.contains(&app.url), "{html}");
    assert!(!html.contains(&secret), "{html}");
    assert!(
        html.contains(&format!("whsec_…{}", &secret[secret.len() - 4..])),
        "{html}"
    );

    app.ticket("Printer").await;
    assert_eq!(app.deliver().await, 1);
    let delivered = app.receiver.delivered();
    assert_eq!(delivered.len(), 1);
    let webhook = standardwebhooks::Webhook::new(&secret).unwrap();
    assert!(webhook
        .verify(&delivered[0].body, &delivered[0].headers)
        .is_ok());
    assert_eq!(delivered[0].json()["object"]["title"], "Printer");

    // Deactivated: no new delivery.
    let id = app.count("SELECT id FROM plover_webhook_endpoint");
    let page = format!("/admin/webhook-endpoints/{id}/");
    let html = root.get(&page).await.expect(200).text();
    let version = (html.split("name=\"_version\" value=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .map(unescape_html)
        .unwrap();
    let form = [
        ("url", app.url.as_str()),
        ("secret", secret.as_str()),
        ("resources", "ticket"),
        ("operations", ""),
        ("_version", version.as_str()),
    ];
    assert_eq!(
        see_other(&post(&root, &page, &form).await),
        "/admin/webhook-endpoints/"
    );
    app.ticket("Scanner").await;
    assert_eq!(app.deliver().await, 0);
    assert_eq!(app.receiver.received().len(), 1);
}

#[actix_web::test]
async fn a_url_or_secret_the_guard_refuses_is_a_form_error_and_nothing_is_saved() {
    let app = ops(Targets::Public).await;
    let root = app.admin().await;
    for (url, secret, field) in [
        ("http://127.0.0.1:9/hooks", "", "url"),
        ("http://10.0.0.8/", "", "url"),
        ("not a url", "", "url"),
        ("http://93.184.215.14/hooks", "whsec_!!", "secret"),
    ] {
        let resp = app.add_endpoint(&root, url, secret).await;
        let html = resp.expect(400).text();
        assert!(super::a11y::problems(url, &html).is_empty());
        let error = field_error(&html, field);
        assert!(error.is_some(), "{url} {secret}: {html}");
        assert!(
            html.contains(&format!("value=\"{url}\"")),
            "the input is kept: {html}"
        );
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM plover_webhook_endpoint"), 0);
}

#[actix_web::test]
async fn a_dead_letter_re_sent_from_the_admin_is_delivered() {
    let app = ops(Targets::Any).await;
    let root = app.admin().await;
    let resp = app.add_endpoint(&root, &app.url, "").await;
    see_other(&resp);
    app.receiver.fail_next.store(2, Ordering::SeqCst);
    app.ticket("Printer").await;
    assert_eq!(app.deliver().await, 1);
    assert!(app.receiver.delivered().is_empty());
    let dead = app.count("SELECT id FROM plover_job WHERE state = 'failed'");

    // The deliveries list it with its endpoint and event; so do the dead letters.
    let event = app.count("SELECT MAX(id) FROM plover_event");
    let html = app.page(&root, "/admin/webhook-deliveries/").await;
    assert_eq!(row_ids(&html), [dead], "{html}");
    assert!(
        html.contains(&app.url) && html.contains(&format!("<td>{event}</td>")),
        "{html}"
    );
    assert!(html.contains("500"), "the last error: {html}");
    let html = app.page(&root, "/admin/webhook-dead-letters/").await;
    assert_eq!(row_ids(&html), [dead], "{html}");

    let search = format!(
        "/admin/webhook-deliveries/?q={}",
        app.url.replace(':', "%3A")
    );
    let html = root.get(&search).await.expect(200).text();
    assert_eq!(row_ids(&html), [dead], "{html}");
    // Another job is no delivery.
    let other = enqueue(&app.db, "no_handler_here", 1);
    let html = root
        .get("/admin/webhook-deliveries/")
        .await
        .expect(200)
        .text();
    assert!(!row_ids(&html).contains(&other), "{html}");

    let resp = app
        .act(&root, "/admin/webhook-dead-letters/", "resend", &[dead])
        .await;
    assert_eq!(see_other(&resp), "/admin/webhook-dead-letters/");
    app.queue.run_due().await.unwrap();
    assert_eq!(app.receiver.delivered().len(), 1);
    let html = root
        .get("/admin/webhook-dead-letters/")
        .await
        .expect(200)
        .text();
    assert!(row_ids(&html).is_empty(), "{html}");
}
