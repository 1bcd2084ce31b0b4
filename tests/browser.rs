//! Browser tests: headless Chromium driven over WebDriver (ChromeDriver, through fantoccini)
//! against the microblog example served in-process on a loopback port.
//!
//! They need `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's `chromium` and
//! `chromium-driver`), so they are `#[ignore]`d in a plain `cargo test`; `scripts/test.sh`
//! installs both and runs them with `--ignored`. Screenshots go to `target/browser/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use actix_web::{App, HttpServer};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use microblog::{create_tables, ensure_user, User};
use plover::prelude::*;
use plover_tests::TempDir;
use serde_json::json;

/// A ChromeDriver process on a free port, killed on drop.
struct Driver(Child, u16);

impl Driver {
    fn start() -> Driver {
        let port = free_port();
        let child = Command::new(std::env::var("CHROMEDRIVER").unwrap_or("chromedriver".into()))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian package chromium-driver) starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver(child, port)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Headless Chromium with a fresh profile and no background networking (the machine may have
/// no internet).
async fn browser(driver: &Driver, profile: &TempDir) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into()),
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-quic", "--no-first-run",
                "--window-size=1100,800",
                format!("--user-data-dir={}", profile.path().display()),
            ],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a WebDriver session")
}

/// The microblog example on a fresh SQLite database, with users alice (password `pw`) and
/// bob, served on a free loopback port; returns its base URL.
fn serve_microblog(dir: &TempDir) -> String {
    let url = format!("sqlite://{}", dir.path().join("mb.db").display());
    let db = Database::from_url(&url).expect("a database");
    db.run_blocking(|c| create_tables(c, "", ""))
        .expect("tables");
    let auth = Auth::<User>::new(db.clone()).cost(4);
    ensure_user(&db, &auth, "alice", "pw", false).expect("alice");
    let routes = microblog::routes(&db, &auth);
    let server = HttpServer::new(move || {
        App::new()
            .wrap(auth.session_middleware())
            .configure(routes.clone())
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .expect("a port");
    let addr = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{addr}")
}

async fn screenshot(client: &Client, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&dir).expect("target/browser");
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("screenshot saved");
}

async fn body_text(client: &Client) -> String {
    client
        .find(Locator::Css("body"))
        .await
        .expect("a body")
        .text()
        .await
        .expect("its text")
}

async fn fill(client: &Client, css: &str, text: &str) {
    let field = client.find(Locator::Css(css)).await.expect(css);
    field.clear().await.expect("cleared");
    field.send_keys(text).await.expect("typed");
}

async fn submit(client: &Client) {
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .expect("a submit button")
        .click()
        .await
        .expect("clicked");
}

async fn path_and_query(client: &Client) -> String {
    let url = client.current_url().await.expect("a URL");
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    }
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn log_in_through_the_form_post_a_message_and_log_out() {
    let data = TempDir::new();
    let base = serve_microblog(&data);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;

    // The protected page sends an anonymous visitor to the login form, with `next`.
    client.goto(&format!("{base}/post/")).await.expect("goto");
    assert_eq!(
        path_and_query(&client).await,
        "/accounts/login/?next=%2Fpost%2F"
    );
    let next = client
        .find(Locator::Css("input[name=next]"))
        .await
        .expect("next")
        .prop("value")
        .await
        .expect("its value");
    assert_eq!(next.as_deref(), Some("/post/"));

    // A wrong password: the form again, with the error, the username kept.
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "wrong").await;
    submit(&client).await;
    assert!(body_text(&client)
        .await
        .contains("Incorrect username or password."));
    let kept = client
        .find(Locator::Css("#username"))
        .await
        .expect("username")
        .prop("value")
        .await
        .expect("value");
    assert_eq!(kept.as_deref(), Some("alice"));
    screenshot(&client, "accounts-login-failed").await;

    // The right one: back to the protected page.
    fill(&client, "#password", "pw").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/post/");
    let text = body_text(&client).await;
    assert!(text.contains("Logged in as alice"), "{text}");
    assert!(text.contains("Post a message"), "{text}");

    // Post a message; the homepage lists it.
    fill(&client, "#content", "Hello from headless Chromium").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/");
    let text = body_text(&client).await;
    assert!(text.contains("Hello from headless Chromium"), "{text}");
    screenshot(&client, "accounts-posted").await;

    // The session cookie is HttpOnly: page scripts cannot read it.
    let cookies = client
        .execute("return document.cookie", vec![])
        .await
        .expect("script ran");
    assert_eq!(cookies, json!(""));

    // Log out: anonymous again, and the protected page asks for a login.
    client
        .find(Locator::LinkText("Log out"))
        .await
        .expect("a logout link")
        .click()
        .await
        .expect("clicked");
    assert_eq!(path_and_query(&client).await, "/");
    assert!(body_text(&client).await.contains("Log in"));
    client.goto(&format!("{base}/post/")).await.expect("goto");
    assert!(path_and_query(&client)
        .await
        .starts_with("/accounts/login/"));
    screenshot(&client, "accounts-logged-out").await;

    client.close().await.expect("browser closed");
}
