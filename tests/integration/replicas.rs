//! Read replicas (docs/deployment.md#read-replicas): the conformance app's API over a
//! PostgreSQL primary and a streaming replica whose replay is delayed by a second, both started
//! here (`scripts/pg-replica.sh`); reads, and a change feed's replay
//! (docs/changes.md#replay-from-a-replica). Runs with the other PostgreSQL tests
//! (`PLOVER_TEST_PG_URL` set) where the server's binaries are installed; skipped otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::Method;
use actix_web::test::{self, TestRequest};
use actix_web::App;
use base64::Engine as _;
use diesel::{Connection, PgConnection, RunQueryDsl};
use microblog::{ensure_user, User};
use plover::db::{Config, Database, CONSISTENCY_HEADER, SERVED_BY_HEADER};

/// The headers as docs/reference.md names them (the constants must say the same).
const CONSISTENCY: &str = "Plover-Consistency";
const SERVED_BY: &str = "Plover-Served-By";
use plover::prelude::*;
use plover_tests::{SseEvent, TestService};
use serde_json::{json, Value};

/// The replica's replay delay, in milliseconds.
const DELAY_MS: u64 = 1000;
/// The lag past which the replica is skipped, in seconds (the default is 5).
const MAX_LAG: f64 = 2.0;

/// A primary and its replica in a temporary directory, stopped and removed when dropped.
struct Cluster {
    dir: PathBuf,
    primary: String,
    replica: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/pg-replica.sh")
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Cluster {
    /// Starts the pair for the test `name`, or `None` where PostgreSQL's server binaries are
    /// not installed.
    fn start(name: &str) -> Option<Cluster> {
        let installed = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .any(|d| d.is_ok_and(|d| d.path().join("bin/pg_basebackup").exists()));
        if !installed {
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("plover-replicas-{name}-{}", std::process::id()));
        let (p, r) = (free_port(), free_port());
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .args([p.to_string(), r.to_string(), DELAY_MS.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let urls = String::from_utf8(out.stdout).unwrap();
        let mut urls = urls.lines().map(str::to_owned);
        let (primary, replica) = (urls.next().unwrap(), urls.next().unwrap());
        Some(Cluster {
            dir,
            primary,
            replica,
        })
    }

    /// Runs `stop-replica` or `start-replica`.
    fn replica_command(dir: &Path, command: &str) {
        let out = Command::new("bash")
            .arg(script())
            .arg(command)
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `sql` on the replica.
    fn on_replica(&self, sql: &str) {
        let mut conn = PgConnection::establish(&self.replica).unwrap();
        diesel::sql_query(sql).execute(&mut conn).unwrap();
    }

    /// The number that `sql` (one `bigint` column named `n`) reads on the replica (`replica`)
    /// or the primary; `None` when it fails (a table the replica has not replayed yet).
    fn number(&self, replica: bool, sql: &str) -> Option<i64> {
        #[derive(diesel::QueryableByName)]
        struct N {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let url = if replica {
            &self.replica
        } else {
            &self.primary
        };
        let mut conn = PgConnection::establish(url).unwrap();
        let row = diesel::sql_query(sql).get_result::<N>(&mut conn).ok()?;
        Some(row.n)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

/// A client: anonymous, or with Basic credentials; it may send a consistency token.
#[derive(Clone, Copy)]
struct Client<'a> {
    basic: Option<(&'a str, &'a str)>,
    token: Option<&'a str>,
}

const ANONYMOUS: Client<'static> = Client {
    basic: None,
    token: None,
};

fn user(name: &'static str) -> Client<'static> {
    Client {
        basic: Some((name, "pw-of-a-reader")),
        token: None,
    }
}

/// What a test reads of an answer.
struct Answer {
    status: u16,
    body: Value,
    served_by: String,
    token: Option<String>,
}

async fn send<S, B>(
    app: &S,
    client: Client<'_>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Answer
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let mut req = TestRequest::default().method(method).uri(path);
    if let Some((name, password)) = client.basic {
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"));
        req = req.insert_header(("Authorization", format!("Basic {encoded}")));
    }
    if let Some(token) = client.token {
        req = req.insert_header((CONSISTENCY, token));
    }
    if let Some(body) = body {
        req = req.set_json(body);
    }
    let resp = test::call_service(app, req.to_request()).await;
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (served_by, token) = (header(SERVED_BY).unwrap_or_default(), header(CONSISTENCY));
    let status = resp.status().as_u16();
    let bytes = test::read_body(resp).await;
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        body,
        served_by,
        token,
    }
}

async fn get<S, B>(app: &S, client: Client<'_>, path: &str) -> Answer
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    send(app, client, Method::GET, path, None).await
}

/// Reads `path` anonymously until the replica serves it, or panics after `within`.
async fn until_the_replica_serves<S, B>(app: &S, path: &str, within: Duration)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let start = Instant::now();
    loop {
        let answer = get(app, ANONYMOUS, path).await;
        assert!(answer.status < 500, "{path}: {}", answer.status);
        if answer.served_by == "replica-1" {
            return;
        }
        assert!(
            start.elapsed() < within,
            "the replica served no read within {within:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The number at the end of a message's content (`n-12` -> 12).
fn number(answer: &Answer) -> u64 {
    let content = answer.body["content"].as_str().unwrap_or_default();
    content
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", answer.body))
}

#[test]
fn the_header_constants_are_the_documented_names() {
    assert_eq!(CONSISTENCY_HEADER, CONSISTENCY);
    assert_eq!(SERVED_BY_HEADER, SERVED_BY);
}

#[actix_web::test]
async fn a_delayed_replica_serves_reads_and_no_client_reads_an_older_state() {
    if !plover_tests::on_postgres() {
        return;
    }
    let Some(cluster) = Cluster::start("reads") else {
        eprintln!("skipped: no PostgreSQL server binaries (pg_basebackup) installed");
        return;
    };
    let config = Config::from_url(&cluster.primary)
        .unwrap()
        .option("replica_max_lag", MAX_LAG)
        .option("replica_check_every", 0.2)
        .replica(&cluster.replica);
    let db = Database::open(&config).unwrap();
    let mut tables = plover_conformance_app::models::models();
    tables.push(plover::jobs::Job::meta());
    db.run_blocking(|c| plover::schema::create_tables(c, &tables))
        .unwrap();
    let auth = Auth::<User>::new(db.clone()).cost(4);
    for name in ["alice", "bob"] {
        ensure_user(&db, &auth, name, "pw-of-a-reader", false).unwrap();
    }
    let api = plover_conformance_app::api(db.clone(), &auth, 1 << 20).setup();
    let app = test::init_service(App::new().configure(api)).await;
    until_the_replica_serves(&app, "/api/amodel/", Duration::from_secs(30)).await;
    half_the_reads_on_the_replica(&app).await;
    let (detail, token) = writers_read_their_writes(&app).await;
    let last = readers_never_go_back(&app, &detail, &token).await;
    a_stalled_replica_is_skipped(&app, &cluster).await;
    a_stopped_replica_costs_no_read(&app, &cluster, &detail, last).await;
}

/// At least half of the anonymous reads are served by the replica.
async fn half_the_reads_on_the_replica<S, B>(app: &S)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let mut by_replica = 0;
    for _ in 0..40 {
        let answer = get(app, ANONYMOUS, "/api/amodel/").await;
        assert_eq!(answer.status, 200);
        by_replica += usize::from(answer.served_by == "replica-1");
    }
    assert!(by_replica >= 20, "{by_replica} of 40 reads on the replica");
}

/// A writer reads its own writes at once: the detail, the list, after an update; and an
/// anonymous client that sends the write's token too.
async fn writers_read_their_writes<S, B>(app: &S) -> (String, String)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let alice = user("alice");
    let created = send(
        app,
        alice,
        Method::POST,
        "/api/message/",
        Some(json!({"content": "n-0"})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let token = created
        .token
        .clone()
        .expect("a write answers with its consistency token");
    let id = created.body["id"].as_i64().unwrap();
    let detail = format!("/api/message/{id}/");
    assert_eq!(get(app, alice, &detail).await.body["content"], "n-0");
    let list = get(app, alice, &format!("/api/message/?id={id}")).await;
    assert_eq!(list.status, 200);
    assert!(list.body.to_string().contains("\"n-0\""), "{}", list.body);
    let with_token = Client {
        basic: None,
        token: Some(&token),
    };
    assert_eq!(get(app, with_token, &detail).await.body["content"], "n-0");
    let updated = send(
        app,
        alice,
        Method::PUT,
        &detail,
        Some(json!({"content": "n-1"})),
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(get(app, alice, &detail).await.body["content"], "n-1");
    let bad = Client {
        basic: None,
        token: Some("yesterday"),
    };
    assert_eq!(
        get(app, bad, &detail).await.status,
        400,
        "a token is validated"
    );

    (detail, token)
}

/// An authenticated reader never sees the value go backwards, though its own writes send
/// it to the primary now and then while the replica is a second behind.
async fn readers_never_go_back<S, B>(app: &S, detail: &str, token: &str) -> u64
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (alice, bob) = (user("alice"), user("bob"));
    let first = get(
        app,
        Client {
            token: Some(token),
            ..bob
        },
        detail,
    )
    .await;
    let mut last = number(&first);
    for i in 2..32 {
        let put = send(
            app,
            alice,
            Method::PUT,
            detail,
            Some(json!({"content": format!("n-{i}")})),
        )
        .await;
        assert_eq!(put.status, 200);
        if i % 15 == 0 {
            let own = send(
                app,
                bob,
                Method::POST,
                "/api/message/",
                Some(json!({"content": "bob"})),
            )
            .await;
            assert_eq!(own.status, 201);
        }
        let read = get(app, bob, detail).await;
        assert_eq!(read.status, 200, "{}", read.body);
        let n = number(&read);
        assert!(
            n >= last,
            "bob read n-{n} after n-{last} ({})",
            read.served_by
        );
        last = n;
        actix_web::rt::time::sleep(Duration::from_millis(60)).await;
    }
    assert!(last > 0, "bob saw the updates");

    last
}

/// The replica stalls: a stranger's write is visible to an anonymous reader within the lag
/// bound (and the check's period), the replica being skipped.
async fn a_stalled_replica_is_skipped<S, B>(app: &S, cluster: &Cluster)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    cluster.on_replica("SELECT pg_wal_replay_pause()");
    let written = send(
        app,
        ANONYMOUS,
        Method::POST,
        "/api/amodel/",
        Some(json!({"a_field": "stalled"})),
    )
    .await;
    assert_eq!(written.status, 201);
    let path = format!("/api/amodel/{}/", written.body["id"]);
    let start = Instant::now();
    while get(app, ANONYMOUS, &path).await.status != 200 {
        let bound = Duration::from_secs_f64(MAX_LAG + 1.5);
        assert!(
            start.elapsed() < bound,
            "not visible after {:?}",
            start.elapsed()
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    cluster.on_replica("SELECT pg_wal_replay_resume()");
    until_the_replica_serves(app, "/api/amodel/", Duration::from_secs(20)).await;
}

/// The replica goes down while reads come: none fails; the primary serves them; the
/// replica serves again once it is back.
async fn a_stopped_replica_costs_no_read<S, B>(app: &S, cluster: &Cluster, detail: &str, last: u64)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let dir = cluster.dir.clone();
    let stopping = std::thread::spawn(move || Cluster::replica_command(&dir, "stop-replica"));
    let mut reads = 0;
    while !stopping.is_finished() || reads < 20 {
        for client in [ANONYMOUS, user("bob")] {
            let answer = get(app, client, "/api/amodel/").await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            reads += 1;
        }
    }
    stopping.join().unwrap();
    for client in [ANONYMOUS, user("bob")] {
        let answer = get(app, client, detail).await;
        assert_eq!((answer.status, answer.served_by.as_str()), (200, "primary"));
    }
    Cluster::replica_command(&cluster.dir, "start-replica");
    until_the_replica_serves(app, "/api/amodel/", Duration::from_secs(30)).await;
    let after = get(app, user("bob"), detail).await;
    assert!(number(&after) >= last, "{}", after.body);
}

/// The events of the outbox that have their places.
const PLACED: &str = "SELECT count(*) AS n FROM plover_event WHERE position IS NOT NULL";

/// Waits until `placed` events have their places on the replica (`replica`) or the primary.
async fn until_placed(cluster: &Cluster, replica: bool, placed: i64) {
    let start = Instant::now();
    while cluster.number(replica, PLACED).unwrap_or(0) < placed {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{placed} events not placed"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Opens the ticket feed with these headers and reads `n` events (or what comes within a few
/// seconds): `(place, title)` of each.
async fn feed(app: &TestService, headers: &[(&str, &str)], n: usize) -> Vec<(i64, String)> {
    let mut req = TestRequest::get().uri("/api/ticket/changes/");
    for (name, value) in headers {
        req = req.insert_header((*name, *value));
    }
    let mut stream = app.stream(req).await;
    assert_eq!(stream.status.as_u16(), 200);
    let events = stream.events(n, Duration::from_secs(5)).await;
    titles(&events)
}

fn titles(events: &[SseEvent]) -> Vec<(i64, String)> {
    let title = |e: &SseEvent| e.data["object"]["title"].as_str().unwrap_or("").to_owned();
    events.iter().map(|e| (e.id.unwrap(), title(e))).collect()
}

fn expected(places: std::ops::RangeInclusive<i64>, prefix: &str) -> Vec<(i64, String)> {
    places.map(|i| (i, format!("{prefix}-{i}"))).collect()
}

/// A change feed's replay (docs/changes.md#replay-from-a-replica): a stream that resumes
/// replays from the replica what it has, and the primary gives the rest, once, in order; a
/// client that wrote (or sends a write's token) replays from the primary; the live tail
/// follows the primary's commits.
///
/// The replica's replay is paused after the first five events, and the primary's outbox is
/// then changed behind Plover's back (those events' titles `feed-N` become `primary-N`): a
/// title says which server a replayed event came from.
#[actix_web::test]
async fn a_feed_replays_from_the_replica_and_takes_the_rest_from_the_primary() {
    if !plover_tests::on_postgres() {
        return;
    }
    let Some(cluster) = Cluster::start("feed") else {
        eprintln!("skipped: no PostgreSQL server binaries (pg_basebackup) installed");
        return;
    };
    // The replica stays admitted while it is paused for the test's few seconds.
    let config = Config::from_url(&cluster.primary)
        .unwrap()
        .option("replica_max_lag", 120.0)
        .option("replica_check_every", 0.2)
        .replica(&cluster.replica);
    let db = Database::open(&config).unwrap();
    let mut tables = plover_conformance_app::models::models();
    tables.push(plover::jobs::Job::meta());
    db.run_blocking(|c| plover::schema::create_tables(c, &tables))
        .unwrap();
    let auth = Auth::<User>::new(db.clone()).cost(4);
    let api = plover_conformance_app::api(db.clone(), &auth, 1 << 20).setup();
    let app = TestService::new(App::new().configure(api)).await;
    let mut live = app
        .stream(TestRequest::get().uri("/api/ticket/changes/"))
        .await;
    assert_eq!(live.status.as_u16(), 200);
    let post = |title: String, basic: Option<&'static str>| {
        let mut req = TestRequest::post()
            .uri("/api/ticket/")
            .set_json(json!({"title": title, "body": "b"}));
        if let Some(basic) = basic {
            req = req.insert_header(("Authorization", basic));
        }
        let app = &app;
        async move {
            let resp = app.send(req).await;
            assert_eq!(resp.status.as_u16(), 201, "{}", resp.text());
            resp.header(CONSISTENCY).map(str::to_owned)
        }
    };
    for i in 1..=5 {
        post(format!("feed-{i}"), None).await;
    }
    until_placed(&cluster, false, 5).await;
    until_placed(&cluster, true, 5).await;
    let start = Instant::now();
    while app
        .send(TestRequest::get().uri("/api/ticket/"))
        .await
        .header(SERVED_BY)
        != Some("replica-1")
    {
        assert!(start.elapsed() < Duration::from_secs(30), "replica unused");
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }

    // The replica stops at the fifth event; the primary goes on.
    cluster.on_replica("SELECT pg_wal_replay_pause()");
    // Once the pause is requested, no further WAL is applied (the replay checks before each
    // record); it reads `paused` only when the next record arrives.
    let paused = "SELECT count(*) AS n WHERE pg_get_wal_replay_pause_state() <> 'not paused'";
    assert_eq!(cluster.number(true, paused), Some(1));
    let mut conn = PgConnection::establish(&cluster.primary).unwrap();
    diesel::sql_query(
        "UPDATE plover_event SET row_after = replace(row_after, 'feed-', 'primary-')",
    )
    .execute(&mut conn)
    .unwrap();
    let alice = "Basic YWxpY2U6cHctb2YtYS13cml0ZXI="; // alice:pw-of-a-writer
    for i in 6..=7 {
        post(format!("feed-{i}"), None).await;
    }
    let token = post("feed-8".into(), Some(alice)).await.expect("a token");
    until_placed(&cluster, false, 8).await;
    assert_eq!(
        cluster.number(true, PLACED),
        Some(5),
        "the replica is paused"
    );

    // Replayed by the replica up to its fifth event, then by the primary: each event once.
    let mut want = expected(3..=5, "feed");
    want.extend(expected(6..=8, "feed"));
    assert_eq!(feed(&app, &[("Last-Event-ID", "2")], 6).await, want);
    // The replica is behind the position: the primary gives it all.
    assert_eq!(
        feed(&app, &[("Last-Event-ID", "6")], 2).await,
        expected(7..=8, "feed")
    );
    // A writer, and a client with a write's token, replay from the primary.
    let mut from_primary = expected(3..=5, "primary");
    from_primary.extend(expected(6..=8, "feed"));
    let headers = [("Last-Event-ID", "2"), ("Authorization", alice)];
    assert_eq!(feed(&app, &headers, 6).await, from_primary);
    let headers = [("Last-Event-ID", "2"), (CONSISTENCY, token.as_str())];
    assert_eq!(feed(&app, &headers, 6).await, from_primary);
    let bad = TestRequest::get()
        .uri("/api/ticket/changes/")
        .insert_header((CONSISTENCY, "yesterday"));
    assert_eq!(app.send(bad).await.status.as_u16(), 400);

    // The live stream heard every event from the primary, and hears the next one.
    post("feed-9".into(), None).await;
    let heard = titles(&live.events(9, Duration::from_secs(10)).await);
    let places: Vec<i64> = heard.iter().map(|(place, _)| *place).collect();
    assert_eq!(places, (1..=9).collect::<Vec<_>>(), "{heard:?}");
    cluster.on_replica("SELECT pg_wal_replay_resume()");
}
