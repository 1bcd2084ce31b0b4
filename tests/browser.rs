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

/// The microblog example on a fresh SQLite database, with the user alice (password `pw`,
/// an administrator if `admin`) and the rows of `seed` (SQL), served on a free loopback port;
/// returns its base URL.
fn serve_microblog(dir: &TempDir, admin: bool, seed: &str) -> String {
    let url = format!("sqlite://{}", dir.path().join("mb.db").display());
    let db = Database::from_url(&url).expect("a database");
    db.run_blocking(create_tables).expect("tables");
    let auth = Auth::<User>::new(db.clone()).cost(4);
    ensure_user(&db, &auth, "alice", "pw", admin).expect("alice");
    db.run_blocking(|c| c.batch_execute(seed)).expect("seed");
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
    // A wide window for the admin's tables.
    let _ = client.set_window_size(1280, 860).await;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&dir).expect("target/browser");
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("screenshot saved");
}

async fn body_text(client: &Client) -> String {
    text_of(client, "body").await
}

/// The `value` property of the element `css` (what the input holds now).
async fn value_of(client: &Client, css: &str) -> Option<String> {
    client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .prop("value")
        .await
        .expect("its value")
}

/// The visible text of the element `css`.
async fn text_of(client: &Client, css: &str) -> String {
    client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .text()
        .await
        .expect("its text")
}

async fn fill(client: &Client, css: &str, text: &str) {
    let field = client.find(Locator::Css(css)).await.expect(css);
    field.clear().await.expect("cleared");
    field.send_keys(text).await.expect("typed");
}

/// Clicks the element `locator` and waits until the page it leads to has replaced the
/// current one (a click returns before a form submission has navigated).
async fn click(client: &Client, locator: Locator<'_>) {
    let old = client.find(Locator::Css("html")).await.expect("a page");
    client
        .find(locator)
        .await
        .expect("an element to click")
        .click()
        .await
        .expect("clicked");
    let deadline = Instant::now() + Duration::from_secs(20);
    // The old document's root goes stale when the new page replaces it.
    while old.tag_name().await.is_ok() {
        assert!(Instant::now() < deadline, "the click led to no new page");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Submits the page's form and waits for the answer.
async fn submit(client: &Client) {
    click(client, Locator::Css("button[type=submit]")).await;
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
    let base = serve_microblog(&data, false, "");
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;

    // The protected page sends an anonymous visitor to the login form, with `next`.
    client.goto(&format!("{base}/post/")).await.expect("goto");
    assert_eq!(
        path_and_query(&client).await,
        "/accounts/login/?next=%2Fpost%2F"
    );
    let next = value_of(&client, "input[name=next]").await;
    assert_eq!(next.as_deref(), Some("/post/"));

    // A wrong password: the form again, with the error, the username kept.
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "wrong").await;
    submit(&client).await;
    assert!(body_text(&client)
        .await
        .contains("Incorrect username or password."));
    let kept = value_of(&client, "#username").await;
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
    click(&client, Locator::LinkText("Log out")).await;
    assert_eq!(path_and_query(&client).await, "/");
    assert!(body_text(&client).await.contains("Log in"));
    client.goto(&format!("{base}/post/")).await.expect("goto");
    assert!(path_and_query(&client)
        .await
        .starts_with("/accounts/login/"));
    screenshot(&client, "accounts-logged-out").await;

    client.close().await.expect("browser closed");
}

/// Rows for the admin walk: bob with 25 messages (two index pages), a note.
const ADMIN_SEED: &str = "
INSERT INTO \"user\" (id, username, password, email, join_date, active, admin)
    VALUES (2, 'bob', '', 'bob@example.com', '2024-01-01 00:00:00', 1, 0),
           (3, 'carol', '', 'carol@example.com', '2024-01-02 00:00:00', 1, 0);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25)
INSERT INTO message (user_id, content, pub_date)
    SELECT 2, printf('bob says %02d', i), printf('2024-02-%02d 12:00:00', i) FROM n;
INSERT INTO message (user_id, content, pub_date) VALUES (3, 'carol was here', '2024-03-01 08:00:00');
INSERT INTO note (message, created) VALUES ('remember the milk', '2024-01-05 09:00:00');
";

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_walk_sort_filter_page_add_edit_delete_export() {
    let data = TempDir::new();
    let base = serve_microblog(&data, true, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;

    // Log in as the administrator through the login form the admin redirects to.
    client.goto(&format!("{base}/admin/")).await.expect("goto");
    assert!(path_and_query(&client)
        .await
        .starts_with("/accounts/login/?next="));
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "pw").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/admin/");
    let text = body_text(&client).await;
    assert!(text.contains("New messages this week"), "{text}");
    for model in ["message", "note", "relationship", "user"] {
        assert!(text.contains(model), "{model}: {text}");
    }
    screenshot(&client, "admin-dashboard").await;

    // The message index: 20 a page, sorted by a click on a column title, paged.
    click(&client, Locator::LinkText("message")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 20);
    click(&client, Locator::LinkText("content")).await;
    let first = text_of(&client, "tbody tr td:nth-child(4)").await;
    assert_eq!(first, "bob says 01");
    click(&client, Locator::LinkText("content ▲")).await;
    let first = text_of(&client, "tbody tr td:nth-child(4)").await;
    assert_eq!(first, "carol was here", "descending");
    click(&client, Locator::Css("a[rel=next]")).await;
    assert!(body_text(&client).await.contains("Page 2"));
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 6);

    // A filter through the filter form, in REST syntax.
    client
        .goto(&format!("{base}/admin/message/"))
        .await
        .expect("goto");
    client
        .find(Locator::Css("#filter-key"))
        .await
        .expect("filter select")
        .select_by_value("content__like")
        .await
        .expect("chosen");
    fill(&client, "#filter-value", "%1_").await;
    click(&client, Locator::Css(".filter-form button")).await;
    assert!(path_and_query(&client)
        .await
        .contains("content__like=%251_"));
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 10, "bob says 10 to 19");
    screenshot(&client, "admin-index").await;

    // A filter on the user through the filter form's type-ahead: the search shows for the key
    // `user` only, and the chosen user's key becomes the value.
    client
        .goto(&format!("{base}/admin/message/"))
        .await
        .expect("goto");
    let search = client
        .find(Locator::Css(".filter-lookup"))
        .await
        .expect("the filter's search");
    assert!(
        !search.is_displayed().await.expect("shown?"),
        "not for `id`"
    );
    client
        .find(Locator::Css("#filter-key"))
        .await
        .expect("filter select")
        .select_by_value("user")
        .await
        .expect("chosen");
    assert!(search.is_displayed().await.expect("shown?"), "for `user`");
    fill(&client, ".filter-lookup .lookup-q", "CAR").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let carol = loop {
        let found = client
            .find_all(Locator::Css(".filter-lookup .lookup-results li"))
            .await
            .expect("results");
        if let [only] = &found[..] {
            if only.text().await.is_ok_and(|t| t == "carol (#3)") {
                break only.clone();
            }
        }
        assert!(Instant::now() < deadline, "carol alone in the results");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    };
    screenshot(&client, "admin-filter-lookup").await;
    carol.click().await.expect("carol chosen");
    assert_eq!(
        value_of(&client, "#filter-value").await.as_deref(),
        Some("3")
    );
    click(&client, Locator::Css(".filter-form button")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/?user=3");
    assert_eq!(
        text_of(&client, "tbody tr td:nth-child(4)").await,
        "carol was here"
    );
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 1);

    // Add a note.
    client
        .goto(&format!("{base}/admin/note/add/"))
        .await
        .expect("goto");
    fill(&client, "#f-message", "added from the admin").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/note/");
    assert!(body_text(&client).await.contains("added from the admin"));

    // Edit a message with an invalid date: the message next to the field, nothing lost.
    client
        .goto(&format!("{base}/admin/message/26/"))
        .await
        .expect("goto");
    fill(&client, "#f-content", "carol edited").await;
    client
        .execute(
            "document.getElementById('f-pub_date').type = 'text';\
             document.getElementById('f-pub_date').value = 'yesterday';",
            vec![],
        )
        .await
        .expect("script ran");
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    let text = body_text(&client).await;
    assert!(text.contains("Please correct the errors below."), "{text}");
    let error = text_of(&client, "#e-pub_date").await;
    assert!(!error.is_empty());
    let kept = value_of(&client, "#f-content").await;
    assert_eq!(
        kept.as_deref(),
        Some("carol edited"),
        "the submitted text is kept"
    );
    screenshot(&client, "admin-edit-invalid").await;

    // Delete carol: the page lists her message, which goes with her.
    client
        .goto(&format!("{base}/admin/user/3/delete/"))
        .await
        .expect("goto");
    let text = body_text(&client).await;
    assert!(text.contains("carol was here"), "{text}");
    screenshot(&client, "admin-delete").await;
    click(&client, Locator::Css("form button.danger")).await;
    assert_eq!(path_and_query(&client).await, "/admin/user/");
    assert!(!body_text(&client).await.contains("carol"));

    // Export bob's messages as CSV, through the export form.
    client
        .goto(&format!(
            "{base}/admin/message/export/?content__like=bob%25"
        ))
        .await
        .expect("goto");
    screenshot(&client, "admin-export").await;
    let csv = client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             const form = document.querySelector('form.export-form');\
             fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)) })\
               .then(r => r.text()).then(done);",
            vec![],
        )
        .await
        .expect("the export");
    let csv = csv.as_str().expect("text").to_owned();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "id,user,content,pub_date");
    assert_eq!(lines.len(), 26, "a header and 25 rows");
    assert_eq!(lines[1], "1,2,bob says 01,2024-02-01 12:00:00");

    client.close().await.expect("browser closed");
}

/// Logs in as alice (an administrator) through the form the admin redirects to.
async fn admin_login(client: &Client, base: &str) {
    client.goto(&format!("{base}/admin/")).await.expect("goto");
    fill(client, "#username", "alice").await;
    fill(client, "#password", "pw").await;
    submit(client).await;
    assert_eq!(path_and_query(client).await, "/admin/");
}

/// Chooses `file` in the import page's file input and sends it for the preview.
async fn upload(client: &Client, file: &std::path::Path) {
    client
        .find(Locator::Css("#import-file"))
        .await
        .expect("the file input")
        .send_keys(&file.display().to_string())
        .await
        .expect("file chosen");
    click(client, Locator::Css(".import-form button[type=submit]")).await;
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_import_a_file_with_a_bad_row_then_the_corrected_file() {
    let data = TempDir::new();
    let base = serve_microblog(&data, true, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;
    admin_login(&client, &base).await;

    // From the message index to its import page.
    client
        .goto(&format!("{base}/admin/message/"))
        .await
        .expect("goto");
    click(&client, Locator::LinkText("Import")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/import/");

    // A file with an unknown user and a date that is not one: the preview names both, in
    // their rows, and offers no import.
    let files = TempDir::new();
    let bad = files.path().join("messages.csv");
    std::fs::write(
        &bad,
        "user,content,pub_date\r\n\
         2,bob imports this,2024-04-01 09:00:00\r\n\
         99,nobody wrote this,2024-04-01 10:00:00\r\n\
         3,carol imports this,yesterday\r\n\
         3,=1+1 stays text,2024-04-01 11:00:00\r\n",
    )
    .expect("the file");
    upload(&client, &bad).await;
    let text = body_text(&client).await;
    assert!(text.contains("2 of 4 rows have errors"), "{text}");
    let row = text_of(&client, "#row-2").await;
    assert!(
        row.contains("user") && row.contains("no user with id 99"),
        "{row}"
    );
    let row = text_of(&client, "#row-3").await;
    assert!(row.contains("pub_date"), "{row}");
    assert!(client.find(Locator::Css(".import-confirm")).await.is_err());
    screenshot(&client, "admin-import").await;

    // The corrected file, sent from the same page: the preview, then the import.
    let good = files.path().join("messages-fixed.csv");
    std::fs::write(
        &good,
        "user,content,pub_date\r\n\
         2,bob imports this,2024-04-01 09:00:00\r\n\
         3,carol imports this,2024-04-01 10:00:00\r\n\
         3,=1+1 stays text,2024-04-01 11:00:00\r\n",
    )
    .expect("the file");
    upload(&client, &good).await;
    let text = body_text(&client).await;
    assert!(text.contains("3 to add, 0 to update"), "{text}");
    click(&client, Locator::Css(".import-confirm button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    let notice = text_of(&client, ".notice").await;
    assert_eq!(notice, "Imported 3 message rows: 3 added, 0 updated.");
    client
        .goto(&format!(
            "{base}/admin/message/?content__like=%25imports%25"
        ))
        .await
        .expect("goto");
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 2);
    client
        .goto(&format!("{base}/admin/message/?content__like=%3D1%25"))
        .await
        .expect("goto");
    assert_eq!(
        text_of(&client, "tbody tr td:nth-child(4)").await,
        "=1+1 stays text"
    );

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_action_confirms_the_selected_rows_then_runs() {
    let data = TempDir::new();
    let base = serve_microblog(&data, true, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;
    admin_login(&client, &base).await;

    // Select alice (an administrator) and bob, choose "Deactivate" with the keyboard.
    client
        .goto(&format!("{base}/admin/user/"))
        .await
        .expect("goto");
    for id in ["1", "2"] {
        client
            .find(Locator::Css(&format!("input[name=id][value='{id}']")))
            .await
            .expect("a row's checkbox")
            .click()
            .await
            .expect("selected");
    }
    client
        .find(Locator::Css("#bulk-action"))
        .await
        .expect("the action select")
        .send_keys("Deactivate")
        .await
        .expect("chosen");
    assert_eq!(
        value_of(&client, "#bulk-action").await.as_deref(),
        Some("deactivate")
    );
    click(&client, Locator::Css("form.bulk button[type=submit]")).await;

    // The confirmation lists both; confirming is refused for alice, and nothing changes.
    let items = client
        .find_all(Locator::Css(".selected-rows li"))
        .await
        .expect("rows");
    assert_eq!(items.len(), 2);
    assert!(body_text(&client).await.contains("bob"));
    click(&client, Locator::Css("main form button[type=submit]")).await;
    let error = text_of(&client, "p.error").await;
    assert!(
        error.contains("alice is an administrator: take the admin flag away first."),
        "{error}"
    );
    assert!(error.contains("Nothing was changed."), "{error}");

    // Bob alone: the confirmation page, then the index says what was done.
    client
        .goto(&format!("{base}/admin/user/"))
        .await
        .expect("goto");
    client
        .find(Locator::Css("input[name=id][value='2']"))
        .await
        .expect("bob's checkbox")
        .click()
        .await
        .expect("selected");
    client
        .find(Locator::Css("#bulk-action"))
        .await
        .expect("the action select")
        .select_by_value("deactivate")
        .await
        .expect("chosen");
    click(&client, Locator::Css("form.bulk button[type=submit]")).await;
    assert_eq!(text_of(&client, "h1").await, "Deactivate");
    assert_eq!(text_of(&client, ".selected-rows").await, "bob (#2)");
    screenshot(&client, "admin-action").await;
    click(&client, Locator::Css("main form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/user/");
    assert_eq!(text_of(&client, ".notice").await, "Deactivated: bob.");
    let bob = text_of(&client, "tbody tr:nth-child(2)").await;
    assert!(bob.contains("bob") && bob.contains("No"), "{bob}");

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_facets_count_then_filter_by_a_click() {
    let data = TempDir::new();
    let base = serve_microblog(&data, true, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;
    admin_login(&client, &base).await;

    // The row count, and the facets without counts until asked for.
    client
        .goto(&format!("{base}/admin/message/"))
        .await
        .expect("goto");
    assert_eq!(text_of(&client, "#row-count").await, "26 messages");
    assert!(client
        .find_all(Locator::Css(".facet-count"))
        .await
        .expect("counts")
        .is_empty());
    click(&client, Locator::LinkText("Show counts")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/?_facets=1");
    let words = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let facets = words(text_of(&client, ".facets").await);
    assert!(
        facets.contains("bob 25") && facets.contains("carol 1"),
        "{facets}"
    );

    // Clicking a value filters the index, keeps the counts, and marks the value.
    click(&client, Locator::LinkText("bob")).await;
    assert_eq!(
        path_and_query(&client).await,
        "/admin/message/?_facets=1&user=2"
    );
    assert_eq!(text_of(&client, "#row-count").await, "25 messages");
    assert_eq!(text_of(&client, ".facets a[aria-current]").await, "bob");
    click(&client, Locator::LinkText("2024")).await;
    assert_eq!(text_of(&client, "#row-count").await, "25 messages");
    let facets = words(text_of(&client, ".facets").await);
    assert!(facets.contains("February 2024 25"), "{facets}");
    assert!(
        !facets.contains("March 2024"),
        "carol's month is filtered out: {facets}"
    );
    screenshot(&client, "admin-facets").await;

    // "All" removes the author's filter, and only it.
    click(&client, Locator::Css(".facets ul li:first-child a")).await;
    assert_eq!(
        path_and_query(&client).await,
        "/admin/message/?_facets=1&pub_date__gte=2024-01-01&pub_date__lt=2025-01-01"
    );
    assert_eq!(text_of(&client, "#row-count").await, "26 messages");

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_history_of_an_edited_message_and_the_dashboards_recent_changes() {
    let data = TempDir::new();
    let base = serve_microblog(&data, true, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;
    client.goto(&format!("{base}/admin/")).await.expect("goto");
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "pw").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/admin/");
    assert!(body_text(&client)
        .await
        .contains("No changes recorded yet."));

    // Two edits of carol's message: its text, then its author and date.
    client
        .goto(&format!("{base}/admin/message/26/"))
        .await
        .expect("goto");
    fill(&client, "#f-content", "carol was here <and> edited").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    client
        .goto(&format!("{base}/admin/message/26/"))
        .await
        .expect("goto");
    fill(&client, "#f-user", "2").await;
    client
        .execute(
            "document.getElementById('f-pub_date').value = '2024-03-02T09:30:00';",
            vec![],
        )
        .await
        .expect("script ran");
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");

    // The edit page leads to the History page: newest first, who, and from what to what.
    client
        .goto(&format!("{base}/admin/message/26/"))
        .await
        .expect("goto");
    click(&client, Locator::LinkText("History")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/26/history/");
    let rows = client
        .find_all(Locator::Css("table.history tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 2);
    let newest = rows[0].text().await.expect("its text");
    assert!(
        newest.contains("alice") && newest.contains("Changed"),
        "{newest}"
    );
    assert!(newest.contains("user") && newest.contains("3") && newest.contains("2"));
    assert!(newest.contains("2024-03-01 08:00:00") && newest.contains("2024-03-02 09:30:00"));
    let oldest = rows[1].text().await.expect("its text");
    assert!(
        oldest.contains("carol was here") && oldest.contains("carol was here <and> edited"),
        "{oldest}"
    );
    screenshot(&client, "admin-history").await;

    // The dashboard lists both changes, newest first, each leading to the History page.
    click(&client, Locator::LinkText("Dashboard")).await;
    let recent = client
        .find_all(Locator::Css(".recent-list li"))
        .await
        .expect("the latest changes");
    assert_eq!(recent.len(), 2);
    let first = recent[0].text().await.expect("its text");
    assert!(
        first.contains("carol was here <and> edited") && first.contains("changed by alice"),
        "{first}"
    );
    screenshot(&client, "admin-recent-changes").await;
    click(&client, Locator::Css(".recent-list li a")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/26/history/");

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn microblog_join_log_in_post_follow_and_page_through_the_timelines() {
    // alice, and bob with 25 messages and carol with one: two pages of public timeline.
    let data = TempDir::new();
    let base = serve_microblog(&data, false, ADMIN_SEED);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile).await;

    // Join from the navigation; a mismatched password first: the message, the values kept.
    client.goto(&base).await.expect("goto");
    click(&client, Locator::LinkText("Join")).await;
    assert_eq!(path_and_query(&client).await, "/join/");
    fill(&client, "#username", "dora").await;
    fill(&client, "#email", "dora@example.com").await;
    fill(&client, "#password", "correct horse").await;
    fill(&client, "#password2", "correct hose").await;
    submit(&client).await;
    let error = text_of(&client, "#password2-error").await;
    assert_eq!(error, "The two passwords differ.");
    assert_eq!(
        value_of(&client, "#username").await.as_deref(),
        Some("dora")
    );
    assert_eq!(
        value_of(&client, "#email").await.as_deref(),
        Some("dora@example.com")
    );
    assert_eq!(value_of(&client, "#password").await.as_deref(), Some(""));
    screenshot(&client, "microblog-join-invalid").await;
    fill(&client, "#password", "correct horse").await;
    fill(&client, "#password2", "correct horse").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/");
    assert!(body_text(&client).await.contains("Logged in as dora"));

    // Log out, and in again through the login form.
    click(&client, Locator::LinkText("Log out")).await;
    assert_eq!(path_and_query(&client).await, "/");
    let text = body_text(&client).await;
    assert!(text.contains("Log in") && !text.contains("dora"), "{text}");
    click(&client, Locator::LinkText("Log in")).await;
    fill(&client, "#username", "dora").await;
    fill(&client, "#password", "correct horse").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/");
    assert!(body_text(&client).await.contains("Logged in as dora"));

    // Post a message: the newest on the public timeline.
    click(&client, Locator::LinkText("Post")).await;
    assert_eq!(path_and_query(&client).await, "/post/");
    fill(&client, "#content", "Hello from <dora>'s browser").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/");
    let first = text_of(&client, ".message .content").await;
    assert_eq!(first, "Hello from <dora>'s browser");

    // Follow bob from his profile, found on the user list.
    click(&client, Locator::LinkText("Users")).await;
    click(&client, Locator::Css("a[href=\"/users/bob/\"]")).await;
    assert_eq!(path_and_query(&client).await, "/users/bob/");
    assert_eq!(text_of(&client, "#followers").await, "0 followers");
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/users/bob/");
    assert_eq!(text_of(&client, "#followers").await, "1 follower");
    assert_eq!(text_of(&client, "button[type=submit]").await, "Unfollow");
    screenshot(&client, "microblog-profile").await;

    // The private timeline: bob's messages only, newest first, in two pages.
    click(&client, Locator::LinkText("Private timeline")).await;
    assert_eq!(path_and_query(&client).await, "/private/");
    assert_eq!(text_of(&client, ".message .content").await, "bob says 25");
    let text = body_text(&client).await;
    assert!(text.contains("page 1 of 2"), "{text}");
    assert!(
        !text.contains("carol was here") && !text.contains("Hello from"),
        "{text}"
    );
    screenshot(&client, "microblog-private").await;

    // The public timeline: 27 messages; the next page, then back.
    click(&client, Locator::LinkText("Public")).await;
    assert!(body_text(&client).await.contains("page 1 of 2"));
    click(&client, Locator::Css("a[rel=next]")).await;
    assert_eq!(path_and_query(&client).await, "/?page=2");
    assert!(body_text(&client).await.contains("page 2 of 2"));
    let rows = client
        .find_all(Locator::Css(".message"))
        .await
        .expect("messages");
    assert_eq!(rows.len(), 7);
    assert_eq!(text_of(&client, ".message .content").await, "bob says 07");
    screenshot(&client, "microblog-public-page-2").await;
    click(&client, Locator::Css("a[rel=prev]")).await;
    assert_eq!(path_and_query(&client).await, "/?page=1");
    let rows = client
        .find_all(Locator::Css(".message"))
        .await
        .expect("messages");
    assert_eq!(rows.len(), 20);
    screenshot(&client, "microblog-public").await;

    client.close().await.expect("browser closed");
}
