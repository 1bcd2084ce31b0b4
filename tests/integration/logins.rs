//! Logins under attack (docs/security.md): failed attempts throttled per address and per
//! username from one address, a wrong-password flood from one address that does not lock
//! another out, and sessions that end with the password.

use std::time::{Duration, Instant};

use actix_web::test::TestRequest;
use futures_util::future::join_all;
use plover::accounts::LoginLimits;
use plover_tests::{basic, Browser, TestApp};
use serde_json::json;

const FAILED: &str = "Incorrect username or password.";

/// A Basic-authenticated POST of a message from `ip`.
fn post_from(ip: &str, username: &str, password: &str) -> TestRequest {
    TestRequest::post()
        .uri("/api/message/")
        .peer_addr(format!("{ip}:40000").parse().expect("an address"))
        .insert_header(basic(username, password))
        .set_json(json!({"content": "hello"}))
}

#[actix_web::test]
async fn the_sixth_failed_login_for_a_username_from_one_address_is_429_and_others_go_on() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    let attacker = app.browser().from_address("127.0.0.2");
    for _ in 0..5 {
        let resp = attacker.login("alice", "wrong").await;
        resp.expect(200);
        assert!(resp.text().contains(FAILED));
    }
    // The 6th attempt is refused without a check, even with the right password.
    let resp = attacker.login("alice", "right").await;
    assert_eq!(resp.code(), 429, "{}", resp.text());
    let wait: u64 = resp
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((55..=60).contains(&wait), "about a minute: {wait}");
    assert!(
        resp.text().contains("Too many failed attempts"),
        "{}",
        resp.text()
    );
    // Another username from the same address, and the same username from another address,
    // are not throttled.
    app.user("bob", "right");
    attacker.login("bob", "right").await.expect(302);
    let owner = app.browser().from_address("127.0.0.3");
    owner.login("alice", "right").await.expect(302);
    assert_eq!(owner.whoami().await, "alice");
}

#[actix_web::test]
async fn basic_authentication_is_throttled_with_a_json_429() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    for _ in 0..5 {
        app.send(post_from("127.0.0.2", "alice", "wrong"))
            .await
            .expect(401);
    }
    let resp = app.send(post_from("127.0.0.2", "alice", "right")).await;
    assert_eq!(resp.code(), 429);
    assert!(resp.header("retry-after").is_some());
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert!(resp.json()["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("Too many requests")));
    app.send(post_from("127.0.0.3", "alice", "right"))
        .await
        .expect(201);
    assert_eq!(
        app.count("message"),
        1,
        "the throttled request wrote nothing"
    );
}

#[actix_web::test]
async fn an_address_is_throttled_after_its_fifty_first_failure_whatever_the_usernames() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    for i in 0..50 {
        let resp = app
            .send(post_from("127.0.0.2", &format!("nobody{i}"), "wrong"))
            .await;
        assert_eq!(resp.code(), 401, "attempt {i}");
    }
    let resp = app.send(post_from("127.0.0.2", "alice", "right")).await;
    assert_eq!(resp.code(), 429);
    app.send(post_from("127.0.0.3", "alice", "right"))
        .await
        .expect(201);
}

#[actix_web::test]
async fn a_successful_login_ends_the_count_of_its_username() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    let client = app.browser().from_address("127.0.0.2");
    for _ in 0..4 {
        client.login("alice", "wrong").await.expect(200);
    }
    client.login("alice", "right").await.expect(302);
    for _ in 0..5 {
        client.login("alice", "wrong").await.expect(200);
    }
    assert_eq!(client.login("alice", "wrong").await.code(), 429);
}

/// Users whose stored hashes cost 2^10 rounds (as a real server's would), so that a check
/// takes long enough for a flood to queue.
fn costly_users(app: &TestApp, names: &[String]) {
    let hash = plover::accounts::make_password("right", 10).expect("a hash");
    for name in names {
        let id = app.user(name, "unused");
        app.sql(&format!(
            "UPDATE \"user\" SET password = '{hash}' WHERE id = {id};"
        ));
    }
}

/// Logs each browser in once, one after the other; returns the statuses and the median time.
async fn login_each(browsers: &[Browser<'_>], names: &[String]) -> (Vec<u16>, Duration) {
    let mut statuses = Vec::new();
    let mut times = Vec::new();
    for (browser, name) in browsers.iter().zip(names) {
        let started = Instant::now();
        statuses.push(browser.login(name, "right").await.code());
        times.push(started.elapsed());
    }
    times.sort();
    (statuses, times[times.len() / 2])
}

/// An application that runs one password check at a time and throttles no failure, so that a
/// flood keeps costing password checks: the tests of the checks' queue, which must hold even
/// for a flood the throttle would not stop (one spread over many usernames below the limits).
async fn one_check_at_a_time_unthrottled() -> TestApp {
    TestApp::with_auth(|auth| {
        auth.password_checks(1).login_limits(LoginLimits {
            per_username: u32::MAX,
            per_address: u32::MAX,
            ..LoginLimits::default()
        })
    })
    .await
}

#[actix_web::test]
async fn a_wrong_password_flood_from_one_address_does_not_lock_out_another() {
    // The fair share of the checks, without the throttle's help.
    let app = one_check_at_a_time_unthrottled().await;
    let names: Vec<String> = (0..20).map(|i| format!("user{i}")).collect();
    costly_users(&app, &names);
    costly_users(&app, &["victim".to_owned()]);
    let before: Vec<Browser<'_>> = (0..10)
        .map(|_| app.browser().from_address("127.0.0.3"))
        .collect();
    let (statuses, quiet) = login_each(&before, &names[..10]).await;
    assert_eq!(statuses, vec![302; 10], "without the flood");

    // 20 connections from 127.0.0.2, each sending wrong passwords as fast as it is answered
    // (each a new guess: requests with the same credentials would share one check).
    let stop = std::cell::Cell::new(false);
    let guesses = std::cell::Cell::new(0u32);
    let flood = join_all((0..20).map(|_| {
        let (stop, guesses) = (&stop, &guesses);
        let app = &app;
        async move {
            let mut codes = Vec::new();
            while !stop.get() {
                let guess = format!("wrong{}", guesses.get());
                guesses.set(guesses.get() + 1);
                let resp = app.send(post_from("127.0.0.2", "victim", &guess)).await;
                codes.push(resp.code());
                if resp.code() == 429 {
                    actix_web::rt::time::sleep(Duration::from_millis(5)).await;
                }
            }
            codes
        }
    }));
    let during = async {
        // Let the flood fill its places first.
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        let browsers: Vec<Browser<'_>> = (0..10)
            .map(|_| app.browser().from_address("127.0.0.3"))
            .collect();
        let result = login_each(&browsers, &names[10..]).await;
        stop.set(true);
        result
    };
    let (flood_codes, (statuses, busy)) = futures_util::future::join(flood, during).await;
    let codes: Vec<u16> = flood_codes.into_iter().flatten().collect();
    eprintln!(
        "correct logins from 127.0.0.3: median {quiet:?} without the flood, {busy:?} during it \
         ({} flood requests: {} refused 429, {} checked 401)",
        codes.len(),
        codes.iter().filter(|c| **c == 429).count(),
        codes.iter().filter(|c| **c == 401).count(),
    );
    assert_eq!(
        statuses,
        vec![302; 10],
        "every correct login succeeds during the flood"
    );
    assert!(codes.iter().all(|c| *c == 401 || *c == 429), "{codes:?}");
    assert!(codes.contains(&429), "the flood ran past its share");
}

#[actix_web::test]
async fn sessions_end_when_the_password_changes_by_any_writer() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "right");
    let (a, b) = (app.browser(), app.browser());
    a.login("alice", "right").await.expect(302);
    b.login("alice", "right").await.expect(302);
    assert_eq!(a.whoami().await, "alice");
    let hash = app.auth.make_password("new one").expect("a hash");
    app.sql(&format!(
        "UPDATE \"user\" SET password = '{hash}' WHERE id = {alice};"
    ));
    for browser in [&a, &b] {
        assert_eq!(browser.whoami().await, "");
        browser.get("/private/").await.expect(302);
    }
    // A new login with the new password works.
    a.login("alice", "new one").await.expect(302);
    assert_eq!(a.whoami().await, "alice");
}

#[actix_web::test]
async fn changing_ones_own_password_in_the_admin_keeps_this_session_and_ends_the_others() {
    let app = TestApp::new().await;
    let root = app.user_with("root", "right", true, true);
    let (here, elsewhere) = (app.browser(), app.browser());
    here.login("root", "right").await.expect(302);
    elsewhere.login("root", "right").await.expect(302);
    let url = format!("/admin/user/{root}/");
    let token = here.csrf(&url).await;
    here.post_form(
        &url,
        &[
            ("username", "root"),
            ("email", "root@example.com"),
            ("new_password", "brand new"),
            ("active", "1"),
            ("admin", "1"),
            ("csrf_token", &token),
        ],
    )
    .await
    .expect(303);
    assert_eq!(
        here.whoami().await,
        "root",
        "the session that changed it stays"
    );
    assert_eq!(elsewhere.whoami().await, "", "the other session ends");
    here.get("/admin/").await.expect(200);
}

#[actix_web::test]
async fn a_nul_in_the_login_form_is_400() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    let browser = app.browser();
    let token = browser.csrf("/accounts/login/").await;
    for (username, password) in [("ali\0ce", "right"), ("alice", "ri\0ght")] {
        let resp = browser
            .post_form(
                "/accounts/login/",
                &[
                    ("username", username),
                    ("password", password),
                    ("csrf_token", &token),
                ],
            )
            .await;
        assert_eq!(resp.code(), 400, "{}", resp.text());
    }
}

/// The throttle counts a username as the login looks it up: after five failures for alice,
/// her name in any compatibility form, case or surrounding spaces is throttled too, on the
/// login form and with Basic credentials.
#[actix_web::test]
async fn the_username_throttle_counts_the_name_as_the_login_looks_it_up() {
    let app = TestApp::new().await;
    app.user("alice", "right");
    let attacker = app.browser().from_address("127.0.0.2");
    for _ in 0..5 {
        attacker.login("alice", "wrong").await.expect(200);
    }
    for spelling in [
        "\u{ff41}lice",
        "\u{1d41a}lice",
        "\u{aa}lice",
        " alice",
        "ALICE",
    ] {
        let resp = attacker.login(spelling, "wrong").await;
        assert_eq!(resp.code(), 429, "{spelling:?}: {}", resp.text());
        let resp = app.send(post_from("127.0.0.2", spelling, "wrong")).await;
        assert_eq!(resp.code(), 429, "{spelling:?} with Basic credentials");
    }
    app.send(post_from("127.0.0.3", "\u{ff41}lice", "right"))
        .await
        .expect(201);
}

/// Two processes serving one database share the failure counts (on PostgreSQL by default,
/// on SQLite with `login_counts_in_database(true)`): three failures on one and two on the
/// other make the sixth attempt 429 on both, and a success on either ends the count.
#[actix_web::test]
async fn two_processes_on_one_database_share_the_failure_counts() {
    let shared = |auth: plover::prelude::Auth<plover_tests::User>| {
        if plover_tests::on_postgres() {
            auth // the default on PostgreSQL
        } else {
            auth.login_counts_in_database(true)
        }
    };
    let app = TestApp::with_auth(shared).await;
    let other = app.another_process(shared).await;
    app.user("alice", "right");
    for _ in 0..3 {
        app.send(post_from("127.0.0.2", "alice", "wrong"))
            .await
            .expect(401);
    }
    for _ in 0..2 {
        other
            .send(post_from("127.0.0.2", "alice", "wrong"))
            .await
            .expect(401);
    }
    assert_eq!(
        app.send(post_from("127.0.0.2", "alice", "right"))
            .await
            .code(),
        429
    );
    assert_eq!(
        other
            .send(post_from("127.0.0.2", "alice", "right"))
            .await
            .code(),
        429
    );
    let form = other.browser().from_address("127.0.0.2");
    assert_eq!(form.login("alice", "right").await.code(), 429);
    // Another address is not throttled; a success from 127.0.0.4 ends only its own count.
    for _ in 0..4 {
        app.send(post_from("127.0.0.4", "alice", "wrong"))
            .await
            .expect(401);
    }
    other
        .send(post_from("127.0.0.4", "alice", "right"))
        .await
        .expect(201);
    for _ in 0..5 {
        app.send(post_from("127.0.0.4", "alice", "wrong"))
            .await
            .expect(401);
    }
    assert_eq!(
        other
            .send(post_from("127.0.0.4", "alice", "right"))
            .await
            .code(),
        429
    );
}

/// A flood of wrong passwords where every request comes from an address of its own (so that
/// no per-address share can stop it) fills the shared lane of the password checks; a known
/// user's correct login, whose username has no failure, takes the reserved lane and succeeds.
#[actix_web::test]
async fn a_flood_from_many_addresses_does_not_lock_out_known_users() {
    let app = one_check_at_a_time_unthrottled().await;
    let names: Vec<String> = (0..20).map(|i| format!("user{i}")).collect();
    costly_users(&app, &names);
    let targets: Vec<String> = (0..8).map(|i| format!("target{i}")).collect();
    costly_users(&app, &targets);
    let before: Vec<Browser<'_>> = (0..10)
        .map(|_| app.browser().from_address("127.0.0.3"))
        .collect();
    let (statuses, quiet) = login_each(&before, &names[..10]).await;
    assert_eq!(statuses, vec![302; 10], "without the flood");

    // 40 connections, each request from a new address, with a new wrong password for one of
    // eight known users.
    let stop = std::cell::Cell::new(false);
    let sent = std::cell::Cell::new(0u32);
    let flood = join_all((0..40).map(|task| {
        let (stop, sent, app, targets) = (&stop, &sent, &app, &targets);
        async move {
            let mut codes = Vec::new();
            while !stop.get() {
                let n = sent.get();
                sent.set(n + 1);
                let ip = format!("127.{}.{}.{}", 1 + n / 65536 % 200, n / 256 % 256, n % 256);
                let target = &targets[(task + n as usize) % targets.len()];
                let resp = app.send(post_from(&ip, target, &format!("wrong{n}"))).await;
                codes.push(resp.code());
                if resp.code() != 401 {
                    actix_web::rt::time::sleep(Duration::from_millis(5)).await;
                }
            }
            codes
        }
    }));
    let during = async {
        actix_web::rt::time::sleep(Duration::from_millis(300)).await;
        let browsers: Vec<Browser<'_>> = (0..10)
            .map(|i| app.browser().from_address(&format!("127.0.0.{}", 10 + i)))
            .collect();
        let result = login_each(&browsers, &names[10..]).await;
        stop.set(true);
        result
    };
    let (flood_codes, (statuses, busy)) = futures_util::future::join(flood, during).await;
    let codes: Vec<u16> = flood_codes.into_iter().flatten().collect();
    eprintln!(
        "correct logins: median {quiet:?} without the flood, {busy:?} during it ({} flood \
         requests from as many addresses: {} checked 401, {} refused 503)",
        codes.len(),
        codes.iter().filter(|c| **c == 401).count(),
        codes.iter().filter(|c| **c == 503).count(),
    );
    assert!(
        codes.contains(&503),
        "the flood filled the shared lane: {codes:?}"
    );
    assert_eq!(
        statuses,
        vec![302; 10],
        "every correct login of a known user succeeds during the flood"
    );
}

/// Twelve requests at once from one address with the same correct credentials, not yet
/// verified: one password check serves them all, and none is refused for holding more than
/// the address's share of the checks.
#[actix_web::test]
async fn parallel_requests_with_one_correct_uncached_credential_all_pass() {
    let app = TestApp::new().await;
    costly_users(&app, &["alice".to_owned()]);
    let answers =
        join_all((0..12).map(|_| app.send(post_from("127.0.0.2", "alice", "right")))).await;
    let codes: Vec<u16> = answers.iter().map(|r| r.code()).collect();
    assert_eq!(codes, vec![201; 12]);
    assert_eq!(app.count("message"), 12);
}
