//! Browser tests: headless Chromium driven over WebDriver (ChromeDriver, through fantoccini)
//! against the microblog example served in-process on a loopback port.
//!
//! They need `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's `chromium` and
//! `chromium-driver`), so they are `#[ignore]`d in a plain `cargo test`; `scripts/test.sh`
//! installs both and runs them with `--ignored`. Screenshots go to `target/browser/`.
//!
//! The accessibility checks run axe-core (from npm, pinned and checked by `scripts/axe-core.sh`,
//! which puts it in `target/axe-core/`) in the admin's pages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use actix_web::{App, HttpServer};
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use microblog::{create_tables, ensure_user, User};
use plover::mail::{FolderBackend, Mailer};
use plover::permissions::{self, Holder};
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
/// no internet); its pages run no script unless `script`.
async fn browser(driver: &Driver, profile: &TempDir, script: bool) -> Client {
    let mut args = vec![
        "--headless".to_owned(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--window-size=1100,800".into(),
        format!("--user-data-dir={}", profile.path().display()),
    ];
    if !script {
        args.push("--blink-settings=scriptEnabled=false".into());
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into()),
            "args": args,
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a WebDriver session")
}

/// The microblog example on a fresh SQLite database, with the user alice (password `pw`,
/// an administrator if `admin`, holding the model permissions `granted`) and the rows of
/// `seed` (SQL), served on a free loopback port; returns its base URL. Account mail goes to
/// the folder `mail` of `dir`.
fn serve_microblog(dir: &TempDir, admin: bool, granted: &[&str], seed: &str) -> String {
    let url = format!("sqlite://{}", dir.path().join("mb.db").display());
    let db = Database::from_url(&url).expect("a database");
    db.run_blocking(create_tables).expect("tables");
    let mail = FolderBackend::new(dir.path().join("mail"));
    let auth = Auth::<User>::new(db.clone())
        .cost(4)
        .mailer(Mailer::new(mail, "Microblog <noreply@example.com>"));
    ensure_user(&db, &auth, "alice", "pw", admin).expect("alice");
    db.run_blocking(|c| {
        plover::schema::create_tables(c, &permissions::models())?;
        let alice = auth.find_user(c, "alice")?.expect("alice").pk();
        for name in granted {
            permissions::grant(c, Holder::User(alice), name)?;
        }
        c.batch_execute(seed)
    })
    .expect("permissions and seed");
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

/// What a browser test keeps alive to its end: the browser's profile, ChromeDriver and the
/// database's folder (dropped in that order).
struct Session {
    _profile: TempDir,
    _driver: Driver,
    data: TempDir,
}

/// The microblog example on a fresh database (see [`serve_microblog`]) and headless Chromium
/// on it: the browser, the site's base URL and what they need kept alive.
async fn browse_microblog(admin: bool, seed: &str) -> (Client, String, Session) {
    browse_microblog_granting(admin, &[], seed).await
}

/// [`browse_microblog`], alice holding the model permissions `granted`.
async fn browse_microblog_granting(
    admin: bool,
    granted: &[&str],
    seed: &str,
) -> (Client, String, Session) {
    browse_microblog_with(admin, granted, seed, true).await
}

/// [`browse_microblog_granting`], the pages running scripts only if `script`.
async fn browse_microblog_with(
    admin: bool,
    granted: &[&str],
    seed: &str,
    script: bool,
) -> (Client, String, Session) {
    let data = TempDir::new();
    let base = serve_microblog(&data, admin, granted, seed);
    let driver = Driver::start();
    let profile = TempDir::new();
    let client = browser(&driver, &profile, script).await;
    let session = Session {
        _profile: profile,
        _driver: driver,
        data,
    };
    (client, base, session)
}

/// The microblog example on [`ADMIN_SEED`], logged in as alice (an administrator) through the
/// admin's login form, with the page `path` open.
async fn admin_at(path: &str) -> (Client, String, Session) {
    let (client, base, session) = browse_microblog(true, ADMIN_SEED).await;
    admin_login(&client, &base).await;
    open(&client, &base, path).await;
    (client, base, session)
}

/// Opens the page `path` of the site at `base`.
async fn open(client: &Client, base: &str, path: &str) {
    client.goto(&format!("{base}{path}")).await.expect("goto");
}

/// Ticks the index rows with these keys.
async fn select_rows(client: &Client, ids: &[&str]) {
    for id in ids {
        client
            .find(Locator::Css(&format!("input[name=id][value='{id}']")))
            .await
            .expect("a row's checkbox")
            .click()
            .await
            .expect("selected");
    }
}

/// Opens the index `index`, ticks the rows `ids`, chooses `action` and submits: the
/// action's confirmation page opens.
async fn choose_action(client: &Client, base: &str, index: &str, ids: &[&str], action: &str) {
    open(client, base, index).await;
    select_rows(client, ids).await;
    client
        .find(Locator::Css("#bulk-action"))
        .await
        .expect("the action select")
        .select_by_value(action)
        .await
        .expect("chosen");
    click(client, Locator::Css("form.bulk button[type=submit]")).await;
}

async fn screenshot(client: &Client, name: &str) {
    // A wide window for the admin's tables.
    let _ = client.set_window_size(1280, 860).await;
    save_screenshot(client, name).await;
}

/// Saves the window as it is (its size too) to `target/browser/{name}.png`.
async fn save_screenshot(client: &Client, name: &str) {
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
    let (client, base, _session) = browse_microblog(false, "").await;

    // The protected page sends an anonymous visitor to the login form, with `next`.
    open(&client, &base, "/post/").await;
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
    open(&client, &base, "/post/").await;
    assert!(path_and_query(&client)
        .await
        .starts_with("/accounts/login/"));
    screenshot(&client, "accounts-logged-out").await;

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn the_public_timeline_shows_new_messages_live_and_forgets_deleted_ones() {
    let seed = "INSERT INTO message (user_id, content, pub_date) \
                VALUES (1, 'already there', '2024-02-01 12:00:00');";
    let (client, base, _session) = browse_microblog(false, seed).await;
    open(&client, &base, "/").await;
    assert_eq!(
        text_of(&client, "ol.messages li .content").await,
        "already there"
    );

    // Another client posts through the REST API; the open page shows it at the top, as the
    // page itself would, without a reload.
    let posted = client
        .execute_async(
            "const done = arguments[0];
             fetch('/api/message/', {
                 method: 'POST',
                 headers: {'Authorization': 'Basic ' + btoa('alice:pw'), 'Content-Type': 'application/json'},
                 body: JSON.stringify({user_id: 1, content: 'live <b>news</b>', pub_date: '2024-03-04T05:06:07'}),
             }).then((r) => r.json()).then((m) => done(m.id));",
            vec![],
        )
        .await
        .expect("posted");
    let first = "ol.messages li:first-child";
    let mut waited = 0;
    while text_of(&client, &format!("{first} .content")).await != "live <b>news</b>" {
        assert!(waited < 200, "the new message did not appear within 5 s");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
        waited += 1;
    }
    // The same markup as the page's own item of alice's (second now).
    let rendered = text_of(&client, "ol.messages li:nth-child(2) .author").await;
    assert_eq!(
        text_of(&client, &format!("{first} .author")).await,
        rendered
    );
    assert_eq!(
        text_of(&client, &format!("{first} time")).await,
        "Mar 4, 2024 · 05:06"
    );
    let id = client
        .execute(
            &format!("return document.querySelector('{first}').dataset.id"),
            vec![],
        )
        .await
        .expect("its id");
    assert_eq!(id, json!(posted.to_string()));
    assert!(
        client
            .find(Locator::Css(&format!("{first} b")))
            .await
            .is_err(),
        "markup is text"
    );
    screenshot(&client, "microblog-live").await;

    // Deleted through the API: gone from the page.
    client
        .execute_async(
            &format!(
                "fetch('/api/message/{posted}/', {{method: 'DELETE', headers: {{'Authorization': 'Basic ' + btoa('alice:pw')}}}})
                     .then(() => arguments[0]());"
            ),
            vec![],
        )
        .await
        .expect("deleted");
    let mut waited = 0;
    while text_of(&client, &format!("{first} .content")).await != "already there" {
        assert!(waited < 200, "the deleted message stayed within 5 s");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
        waited += 1;
    }
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
    // Logged in as the administrator through the login form the admin redirects to.
    let (client, base, _session) = admin_at("/admin/").await;
    let text = body_text(&client).await;
    assert!(text.contains("New messages this week"), "{text}");
    for model in ["Messages", "Notes", "Relationships", "Users"] {
        assert!(text.contains(model), "{model}: {text}");
    }
    screenshot(&client, "admin-dashboard").await;

    // The message index: 20 a page, sorted by a click on a column title, paged.
    click(&client, Locator::LinkText("Messages")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 20);
    click(&client, Locator::LinkText("Content")).await;
    let first = text_of(&client, "tbody tr td:nth-child(4)").await;
    assert_eq!(first, "bob says 01");
    click(&client, Locator::LinkText("Content ▲")).await;
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
    open(&client, &base, "/admin/message/").await;
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
    open(&client, &base, "/admin/message/").await;
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
    open(&client, &base, "/admin/note/add/").await;
    fill(&client, "#f-message", "added from the admin").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/note/");
    assert!(body_text(&client).await.contains("added from the admin"));

    // Edit a message with an invalid date: the message next to the field, nothing lost.
    open(&client, &base, "/admin/message/26/").await;
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
    open(&client, &base, "/admin/user/3/delete/").await;
    let text = body_text(&client).await;
    assert!(text.contains("carol was here"), "{text}");
    screenshot(&client, "admin-delete").await;
    click(&client, Locator::Css("form button.danger")).await;
    assert_eq!(path_and_query(&client).await, "/admin/user/");
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The user “carol” was deleted successfully."
    );
    assert!(!text_of(&client, "tbody").await.contains("carol"));

    // Export bob's messages as CSV, through the export form.
    open(
        &client,
        &base,
        "/admin/message/export/?content__like=bob%25",
    )
    .await;
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
    open(client, base, "/admin/").await;
    assert!(path_and_query(client)
        .await
        .starts_with("/accounts/login/?next="));
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

/// axe-core's script, put in `target/axe-core/` by `scripts/axe-core.sh`.
fn axe_source() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/axe-core/axe.min.js");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run scripts/axe-core.sh first", path.display()))
}

/// Runs axe-core (its default rules: WCAG 2 A and AA, and best practices) in the page open in
/// `client`, and returns its violations of impact serious or critical, one line per element:
/// `page: rule (impact) at target: help`.
async fn axe_violations(client: &Client, axe: &str, page: &str) -> Vec<String> {
    let found = client
        .execute_async(
            &format!(
                "{axe}\n;const done = arguments[arguments.length - 1];\
                 axe.run(document, {{ resultTypes: ['violations'] }})\
                   .then(r => done(r.violations\
                     .filter(v => v.impact === 'serious' || v.impact === 'critical')\
                     .flatMap(v => v.nodes.map(n =>\
                       v.id + ' (' + v.impact + ') at ' + n.target.join(' ') + ': ' + v.help))))\
                   .catch(e => done(['axe failed: ' + e]));"
            ),
            vec![],
        )
        .await
        .expect("axe ran");
    let lines = serde_json::from_value::<Vec<String>>(found).expect("a list");
    lines.into_iter().map(|l| format!("{page}: {l}")).collect()
}

/// Presses and releases `key` on the keyboard (in whatever has the focus).
async fn press(client: &Client, key: Key) {
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key.into() })
        .then(KeyAction::Up { value: key.into() });
    client.perform_actions(keys).await.expect("a key pressed");
}

/// Presses `key` and waits until the page it leads to has replaced the current one.
async fn press_and_wait(client: &Client, key: Key) {
    let old = client.find(Locator::Css("html")).await.expect("a page");
    press(client, key).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while old.tag_name().await.is_ok() {
        assert!(Instant::now() < deadline, "the key led to no new page");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Types `text` on the keyboard (in whatever has the focus).
async fn type_text(client: &Client, text: &str) {
    let mut keys = KeyActions::new("keyboard".into());
    for c in text.chars() {
        keys = keys
            .then(KeyAction::Down { value: c })
            .then(KeyAction::Up { value: c });
    }
    client.perform_actions(keys).await.expect("text typed");
}

/// What has the focus: its tag, id, class, name and text, and whether its focus shows (an outline
/// of at least 2px, or for the skip link that it comes into view).
async fn focused(client: &Client) -> serde_json::Value {
    client
        .execute(
            "const e = document.activeElement, s = getComputedStyle(e), r = e.getBoundingClientRect();\
             return { tag: e.tagName.toLowerCase(), id: e.id, class: e.className, name: e.name || '',\
               text: (e.innerText || e.value || '').trim().slice(0, 40),\
               shown: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2\
                 && r.width > 1 && r.height > 1 && r.bottom > 0 };",
            vec![],
        )
        .await
        .expect("the focused element")
}

/// Tabs through the page from its start until the focus comes back to an element it has been on
/// (at most 300 steps): the first element reached, and one line for each one whose focus does not
/// show.
async fn tab_through(client: &Client, page: &str) -> (serde_json::Value, Vec<String>) {
    client
        .execute(
            "document.activeElement.blur(); window.scrollTo(0, 0);",
            vec![],
        )
        .await
        .expect("script ran");
    let mut seen = Vec::new();
    let mut hidden = Vec::new();
    for _ in 0..300 {
        press(client, Key::Tab).await;
        let now = focused(client).await;
        if now["tag"] == "body" || seen.contains(&now) {
            break;
        }
        if now["shown"] != json!(true) {
            hidden.push(format!("{page}: no visible focus on {now}"));
        }
        seen.push(now);
    }
    let first = seen.first().cloned().unwrap_or(json!(null));
    (first, hidden)
}

/// Checks the admin page open in `client` as `page`: axe-core's serious and critical violations,
/// the skip link first in the tab order (with `skip`), and a visible focus on every control.
async fn check_page(client: &Client, axe: &str, page: &str, skip: bool) -> Vec<String> {
    let mut problems = axe_violations(client, axe, page).await;
    let (first, hidden) = tab_through(client, page).await;
    if skip && (first["class"] != "skip-link" || first["text"] != "Skip to content") {
        problems.push(format!(
            "{page}: the first control is {first}, not the skip link"
        ));
    }
    problems.extend(hidden);
    problems
}

/// The `aria-…` attribute `name` of the element `css` (None when it has none).
async fn aria(client: &Client, css: &str, name: &str) -> Option<String> {
    client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .attr(name)
        .await
        .expect("an attribute")
}

/// Waits until the lookup list `css` shows exactly the options `want` (in order).
async fn wait_for_options(client: &Client, css: &str, want: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut texts = Vec::new();
        let list = client.find(Locator::Css(css)).await.expect(css);
        if list.is_displayed().await.expect("shown?") {
            for o in list
                .find_all(Locator::Css("[role=option]"))
                .await
                .expect("options")
            {
                texts.push(o.text().await.unwrap_or_default());
            }
        }
        if texts == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the options {texts:?}, not {want:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Presses Tab until the focus is on the element `css`, at most 40 times.
async fn tab_to(client: &Client, css: &str) {
    for _ in 0..40 {
        press(client, Key::Tab).await;
        let there = client
            .execute(
                "return document.activeElement === document.querySelector(arguments[0]);",
                vec![json!(css)],
            )
            .await
            .expect("script ran");
        if there == json!(true) {
            return;
        }
    }
    panic!("Tab never reached {css}");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_pages_pass_axe_core_and_show_the_keyboard_focus() {
    let axe = axe_source();
    let (client, base, _session) = browse_microblog(true, ADMIN_SEED).await;
    let mut problems = Vec::new();

    // The login form, then with its error.
    open(&client, &base, "/admin/").await;
    problems.extend(check_page(&client, &axe, "login", false).await);
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "wrong").await;
    submit(&client).await;
    problems.extend(check_page(&client, &axe, "login failed", false).await);
    admin_login(&client, &base).await;
    problems.extend(check_page(&client, &axe, "dashboard", true).await);

    // An index with a search and a filter; one with two filters, then its filter's lookup open.
    open(&client, &base, "/admin/user/?q=example&active=1").await;
    assert_eq!(
        text_of(&client, "tbody").await.lines().count(),
        2,
        "bob and carol"
    );
    problems.extend(check_page(&client, &axe, "user index", true).await);
    // A read-only index: the job queue's, with its state facets.
    open(&client, &base, "/admin/jobs/").await;
    problems.extend(check_page(&client, &axe, "jobs index", true).await);
    open(
        &client,
        &base,
        "/admin/message/?user=2&content__like=%25says%25",
    )
    .await;
    assert_eq!(
        client
            .find_all(Locator::Css("tbody tr"))
            .await
            .expect("rows")
            .len(),
        20
    );
    problems.extend(check_page(&client, &axe, "message index", true).await);
    client
        .find(Locator::Css("#filter-key"))
        .await
        .expect("filter select")
        .select_by_value("user")
        .await
        .expect("chosen");
    client
        .find(Locator::Css(".filter-lookup .lookup-q"))
        .await
        .expect("the filter's search")
        .click()
        .await
        .expect("focused");
    wait_for_options(
        &client,
        ".filter-lookup .lookup-results",
        &["alice (#1)", "bob (#2)", "carol (#3)"],
    )
    .await;
    problems.extend(axe_violations(&client, &axe, "index, filter lookup open").await);

    // The add form, the edit form with its lookup open, then with an error.
    open(&client, &base, "/admin/message/add/").await;
    problems.extend(check_page(&client, &axe, "add form", true).await);
    open(&client, &base, "/admin/message/26/").await;
    problems.extend(check_page(&client, &axe, "edit form", true).await);
    client
        .find(Locator::Css(".lookup .lookup-q"))
        .await
        .expect("the user's search")
        .click()
        .await
        .expect("focused");
    wait_for_options(&client, "div.lookup .lookup-results", &["carol (#3)"]).await;
    press(&client, Key::Down).await;
    problems.extend(axe_violations(&client, &axe, "edit form, lookup open").await);
    client
        .execute(
            "document.getElementById('f-pub_date').type = 'text';\
             document.getElementById('f-pub_date').value = 'yesterday';",
            vec![],
        )
        .await
        .expect("script ran");
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert!(body_text(&client)
        .await
        .contains("Please correct the errors below."));
    problems.extend(check_page(&client, &axe, "edit form, invalid", true).await);
    // A change, for the History page and the dashboard's list.
    open(&client, &base, "/admin/message/26/").await;
    fill(&client, "#f-content", "carol was here, edited").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    open(&client, &base, "/admin/message/26/history/").await;
    assert_eq!(
        client
            .find_all(Locator::Css("table.history tbody tr"))
            .await
            .expect("rows")
            .len(),
        1
    );
    problems.extend(check_page(&client, &axe, "history", true).await);
    open(&client, &base, "/admin/").await;
    problems.extend(check_page(&client, &axe, "dashboard with changes", true).await);

    // Delete and export.
    open(&client, &base, "/admin/user/3/delete/").await;
    problems.extend(check_page(&client, &axe, "delete", true).await);
    open(
        &client,
        &base,
        "/admin/message/export/?content__like=bob%25",
    )
    .await;
    problems.extend(check_page(&client, &axe, "export", true).await);

    // Import: the upload form, a preview with errors, a preview to confirm.
    open(&client, &base, "/admin/message/import/").await;
    problems.extend(check_page(&client, &axe, "import", true).await);
    let files = TempDir::new();
    let bad = files.path().join("bad.csv");
    std::fs::write(&bad, "user,content,pub_date\r\n99,nobody,yesterday\r\n").expect("the file");
    upload(&client, &bad).await;
    assert!(body_text(&client).await.contains("1 of 1 rows have errors"));
    problems.extend(check_page(&client, &axe, "import preview, errors", true).await);
    let good = files.path().join("good.csv");
    std::fs::write(
        &good,
        "user,content,pub_date\r\n2,hi,2024-04-01 09:00:00\r\n",
    )
    .expect("the file");
    upload(&client, &good).await;
    assert!(client.find(Locator::Css(".import-confirm")).await.is_ok());
    problems.extend(check_page(&client, &axe, "import preview", true).await);

    // An action's confirmation.
    choose_action(&client, &base, "/admin/user/", &["2"], "deactivate").await;
    assert_eq!(text_of(&client, "h1").await, "Deactivate");
    problems.extend(check_page(&client, &axe, "action", true).await);
    // The bulk delete's confirmation, with the rows that go with the selected ones.
    choose_action(&client, &base, "/admin/user/", &["2", "3"], "delete").await;
    assert_eq!(text_of(&client, "h1").await, "Delete the selected rows");
    problems.extend(check_page(&client, &axe, "bulk delete", true).await);

    // An error page.
    open(&client, &base, "/admin/nosuchmodel/").await;
    problems.extend(check_page(&client, &axe, "not found", true).await);

    assert!(problems.is_empty(), "{}", problems.join("\n"));
    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_foreign_key_lookup_is_a_combobox_used_with_the_keyboard_alone() {
    let (client, base, _session) = admin_at("/admin/message/26/").await;

    // The skip link comes first and leads to the page's content.
    press(&client, Key::Tab).await;
    assert_eq!(text_of(&client, ":focus").await, "Skip to content");
    press(&client, Key::Enter).await;
    assert_eq!(
        client
            .active_element()
            .await
            .expect("focus")
            .attr("id")
            .await
            .expect("id")
            .as_deref(),
        Some("content")
    );

    // To the user's search, which has carol's name and lists her on focus; no option active yet.
    tab_to(&client, "div.lookup .lookup-q").await;
    let q = "div.lookup .lookup-q";
    let list = "div.lookup .lookup-results";
    assert_eq!(aria(&client, q, "role").await.as_deref(), Some("combobox"));
    let list_id = aria(&client, list, "id").await.expect("the list has an id");
    assert_eq!(
        aria(&client, q, "aria-controls").await,
        Some(list_id.clone())
    );
    wait_for_options(&client, list, &["carol (#3)"]).await;
    assert_eq!(
        aria(&client, q, "aria-expanded").await.as_deref(),
        Some("true")
    );
    assert_eq!(aria(&client, q, "aria-activedescendant").await, None);

    // Emptied, it lists everyone; the arrows move through the options and stop at the ends.
    for _ in 0.."carol".len() {
        press(&client, Key::Backspace).await;
    }
    wait_for_options(&client, list, &["alice (#1)", "bob (#2)", "carol (#3)"]).await;
    let active = || async {
        let id = aria(&client, q, "aria-activedescendant").await?;
        let option = client
            .find(Locator::Id(&id))
            .await
            .expect("the active option");
        assert_eq!(
            option.attr("aria-selected").await.expect("attr").as_deref(),
            Some("true")
        );
        Some(option.text().await.expect("its text"))
    };
    press(&client, Key::Down).await;
    assert_eq!(active().await.as_deref(), Some("alice (#1)"));
    press(&client, Key::Down).await;
    press(&client, Key::Down).await;
    press(&client, Key::Down).await;
    assert_eq!(active().await.as_deref(), Some("carol (#3)"));
    press(&client, Key::Up).await;
    assert_eq!(active().await.as_deref(), Some("bob (#2)"));
    let selected = client
        .find_all(Locator::Css("div.lookup [aria-selected=true]"))
        .await
        .expect("options");
    assert_eq!(selected.len(), 1, "one option shown chosen");

    // Escape closes the list and chooses nothing.
    press(&client, Key::Escape).await;
    assert!(!client
        .find(Locator::Css(list))
        .await
        .expect("list")
        .is_displayed()
        .await
        .expect("shown?"));
    assert_eq!(
        aria(&client, q, "aria-expanded").await.as_deref(),
        Some("false")
    );
    assert_eq!(aria(&client, q, "aria-activedescendant").await, None);
    assert_eq!(value_of(&client, "#f-user").await.as_deref(), Some("3"));

    // Down opens it again on its first option; Enter chooses bob and sends nothing.
    press(&client, Key::Down).await;
    wait_for_options(&client, list, &["alice (#1)", "bob (#2)", "carol (#3)"]).await;
    assert_eq!(active().await.as_deref(), Some("alice (#1)"));
    press(&client, Key::Down).await;
    press(&client, Key::Enter).await;
    assert_eq!(value_of(&client, "#f-user").await.as_deref(), Some("2"));
    assert_eq!(value_of(&client, q).await.as_deref(), Some("bob"));
    assert_eq!(
        aria(&client, q, "aria-expanded").await.as_deref(),
        Some("false")
    );
    assert_eq!(path_and_query(&client).await, "/admin/message/26/");

    // With the list closed, Enter sends the form: the message is bob's now.
    press_and_wait(&client, Key::Enter).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    open(&client, &base, "/admin/message/26/").await;
    assert_eq!(value_of(&client, "#f-user").await.as_deref(), Some("2"));

    // The index's filter: the key chosen with the arrows, the user found by typing and Enter.
    open(&client, &base, "/admin/message/").await;
    tab_to(&client, "#filter-key").await;
    for _ in 0..10 {
        if value_of(&client, "#filter-key").await.as_deref() == Some("user") {
            break;
        }
        press(&client, Key::Down).await;
    }
    assert_eq!(
        value_of(&client, "#filter-key").await.as_deref(),
        Some("user")
    );
    tab_to(&client, ".filter-lookup .lookup-q").await;
    type_text(&client, "bo").await;
    wait_for_options(&client, ".filter-lookup .lookup-results", &["bob (#2)"]).await;
    press(&client, Key::Down).await;
    press(&client, Key::Enter).await;
    assert_eq!(
        value_of(&client, "#filter-value").await.as_deref(),
        Some("2")
    );
    press_and_wait(&client, Key::Enter).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/?user=2");
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 20, "bob's 26 messages, a page of them");

    client.close().await.expect("browser closed");
}

/// When the page open in `client` is wider than its viewport (it scrolls sideways): a line naming
/// the page, both widths and the elements that stick out on the right.
async fn too_wide(client: &Client, page: &str) -> Option<String> {
    let found = client
        .execute(
            "const view = document.documentElement.clientWidth;\
             const out = [...document.body.querySelectorAll('*')]\
               .filter(e => e.getBoundingClientRect().right > view + 0.5)\
               .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')\
                 + ' to ' + Math.round(e.getBoundingClientRect().right) + 'px');\
             return [document.documentElement.scrollWidth, view, out.slice(0, 8).join(', ')];",
            vec![],
        )
        .await
        .expect("script ran");
    let (width, view) = (found[0].as_u64(), found[1].as_u64());
    (width > view).then(|| {
        format!(
            "{page}: the page is {}px wide in a {}px viewport: {}",
            width.unwrap_or_default(),
            view.unwrap_or_default(),
            found[2]
        )
    })
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_pages_fit_a_phones_width() {
    let (client, base, _session) = admin_at("/admin/").await;
    client
        .set_window_size(375, 812)
        .await
        .expect("a phone's size");
    let width = client
        .execute("return window.innerWidth;", vec![])
        .await
        .expect("script ran");
    assert_eq!(width, json!(375), "the viewport is a phone's");

    let mut problems = Vec::from_iter(too_wide(&client, "dashboard").await);
    for (page, path) in [
        ("user index", "/admin/user/"),
        (
            "message index, filtered",
            "/admin/message/?user=2&content__like=%25says%25",
        ),
        ("add form", "/admin/message/add/"),
        ("edit form", "/admin/message/26/"),
        ("delete", "/admin/user/3/delete/"),
        ("export", "/admin/message/export/"),
        ("import", "/admin/message/import/"),
        ("history", "/admin/message/26/history/"),
        ("jobs index", "/admin/jobs/"),
    ] {
        open(&client, &base, path).await;
        problems.extend(too_wide(&client, page).await);
    }

    // The edit form's lookup open stays inside the page too.
    open(&client, &base, "/admin/message/26/").await;
    client
        .find(Locator::Css(".lookup .lookup-q"))
        .await
        .expect("the user's search")
        .click()
        .await
        .expect("focused");
    wait_for_options(&client, "div.lookup .lookup-results", &["carol (#3)"]).await;
    problems.extend(too_wide(&client, "edit form, lookup open").await);

    // The index: the navigation above it, its table scrolls in its own box.
    open(&client, &base, "/admin/user/").await;
    let nav = client
        .find(Locator::Css("nav.side"))
        .await
        .expect("the navigation");
    assert!(nav.is_displayed().await.expect("shown?"));
    let links = nav.find_all(Locator::Css("a")).await.expect("its links");
    assert_eq!(
        links.len(),
        6,
        "the dashboard, the four models and the jobs"
    );
    for link in links {
        assert!(link.is_displayed().await.expect("shown?"));
    }
    problems.extend(too_wide(&client, "user index").await);
    let scroll = client
        .execute(
            "const box = document.querySelector('form.bulk'), table = box.querySelector('table');\
             return [table.scrollWidth > box.clientWidth, getComputedStyle(box).overflowX];",
            vec![],
        )
        .await
        .expect("script ran");
    assert_eq!(
        scroll,
        json!([true, "auto"]),
        "the table is wider and scrolls in its box"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    save_screenshot(&client, "admin-phone").await;
    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_import_a_file_with_a_bad_row_then_the_corrected_file() {
    // From the message index to its import page.
    let (client, base, _session) = admin_at("/admin/message/").await;
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
    assert_eq!(notice, "Imported 3 messages: 3 added, 0 updated.");
    open(
        &client,
        &base,
        "/admin/message/?content__like=%25imports%25",
    )
    .await;
    let rows = client
        .find_all(Locator::Css("tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 2);
    open(&client, &base, "/admin/message/?content__like=%3D1%25").await;
    assert_eq!(
        text_of(&client, "tbody tr td:nth-child(4)").await,
        "=1+1 stays text"
    );

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_action_confirms_the_selected_rows_then_runs() {
    // Select alice (an administrator) and bob, choose "Deactivate" with the keyboard.
    let (client, base, _session) = admin_at("/admin/user/").await;
    select_rows(&client, &["1", "2"]).await;
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
    choose_action(&client, &base, "/admin/user/", &["2"], "deactivate").await;
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
    // The row count, and the facets without counts until asked for.
    let (client, _base, _session) = admin_at("/admin/message/").await;
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
    let (client, base, _session) = admin_at("/admin/").await;
    assert!(body_text(&client)
        .await
        .contains("No changes recorded yet."));

    // Two edits of carol's message: its text, then its author and date.
    open(&client, &base, "/admin/message/26/").await;
    fill(&client, "#f-content", "carol was here <and> edited").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    open(&client, &base, "/admin/message/26/").await;
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
    open(&client, &base, "/admin/message/26/").await;
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
    assert!(newest.contains("User") && newest.contains("3") && newest.contains("2"));
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
    let (client, base, _session) = browse_microblog(false, ADMIN_SEED).await;

    // Join from the navigation; a mismatched password first: the message, the values kept.
    open(&client, &base, "/").await;
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

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_inline_save_with_a_child_error_then_corrected() {
    // Carol's page lists her message, then one empty row.
    let (client, base, _session) = admin_at("/admin/user/3/").await;
    assert_eq!(
        value_of(&client, "#f-message-0-content").await.as_deref(),
        Some("carol was here")
    );
    assert_eq!(
        value_of(&client, "#f-message-1-content").await.as_deref(),
        Some("")
    );
    // Edit it, write a new one in the empty row, add a row with the button and give it a date
    // that is not one.
    fill(&client, "#f-message-0-content", "carol was here, edited").await;
    fill(&client, "#f-message-1-content", "a new message").await;
    client
        .find(Locator::Css("button[data-inline-add]"))
        .await
        .expect("the Add another button")
        .click()
        .await
        .expect("clicked");
    fill(&client, "#f-message-2-content", "one more <b>message</b>").await;
    client
        .execute(
            "document.getElementById('f-message-2-pub_date').type = 'text';\
             document.getElementById('f-message-2-pub_date').value = 'yesterday';",
            vec![],
        )
        .await
        .expect("script ran");
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;

    // The form again: the error beside the third row, everything typed kept, nothing saved.
    assert_eq!(path_and_query(&client).await, "/admin/user/3/");
    let text = body_text(&client).await;
    assert!(text.contains("Please correct the errors below."), "{text}");
    assert!(!text_of(&client, "#e-message-2-pub_date").await.is_empty());
    assert!(client
        .find(Locator::Css("#e-message-0-content"))
        .await
        .is_err());
    assert_eq!(
        value_of(&client, "#f-message-0-content").await.as_deref(),
        Some("carol was here, edited")
    );
    assert_eq!(
        value_of(&client, "#f-message-2-content").await.as_deref(),
        Some("one more <b>message</b>")
    );
    client
        .execute(
            "document.querySelector('.inline-group').scrollIntoView();",
            vec![],
        )
        .await
        .expect("script ran");
    screenshot(&client, "admin-inline").await;

    // Corrected, the user and the three messages are saved.
    client
        .execute(
            "const input = document.getElementById('f-message-2-pub_date');\
             input.type = 'text'; input.value = '2024-03-05T10:00:00';",
            vec![],
        )
        .await
        .expect("script ran");
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/user/");
    client
        .goto(&format!("{base}/admin/user/3/"))
        .await
        .expect("goto");
    let mut saved = Vec::new();
    for n in 0..3 {
        saved.push(
            value_of(&client, &format!("#f-message-{n}-content"))
                .await
                .unwrap_or_default(),
        );
    }
    assert_eq!(
        saved,
        [
            "carol was here, edited",
            "a new message",
            "one more <b>message</b>"
        ]
    );
    assert_eq!(
        value_of(&client, "#f-message-2-pub_date").await.as_deref(),
        Some("2024-03-05 10:00:00")
    );

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_inline_row_with_blank_content_is_refused_and_recent_changes_name_blank_rows() {
    let axe = axe_source();
    // Carol's message blanked (spaces only: `content` is not_blank), and a new message beside it.
    let (client, base, _session) = admin_at("/admin/user/3/").await;
    fill(&client, "#f-message-0-content", "   ").await;
    fill(&client, "#f-message-1-content", "a new message").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;

    // The form again: the error beside the blanked row only, what was typed kept.
    assert_eq!(path_and_query(&client).await, "/admin/user/3/");
    let error = text_of(&client, "#e-message-0-content").await;
    assert!(error.contains("must not be blank"), "{error}");
    assert_eq!(
        aria(&client, "#f-message-0-content", "aria-describedby")
            .await
            .as_deref(),
        Some("e-message-0-content")
    );
    assert!(client
        .find(Locator::Css("#e-message-1-content"))
        .await
        .is_err());
    assert_eq!(
        value_of(&client, "#f-message-1-content").await.as_deref(),
        Some("a new message")
    );
    let problems = check_page(&client, &axe, "edit form, inline error", true).await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Nothing written: carol still has her one message, as it was.
    open(&client, &base, "/admin/message/?user=3").await;
    assert_eq!(text_of(&client, "#row-count").await, "1 message");
    assert!(text_of(&client, "tbody").await.contains("carol was here"));

    // A note whose text is blank (notes allow it): the dashboard's recent changes name it by
    // its model and key, and no link there is empty.
    open(&client, &base, "/admin/note/add/").await;
    fill(&client, "#f-message", " ").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/note/");
    open(&client, &base, "/admin/").await;
    let links = texts_of(&client, ".recent-list li a").await;
    assert_eq!(links, ["note #2"], "{links:?}");
    let problems = check_page(&client, &axe, "dashboard, a blank row changed", true).await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    click(&client, Locator::LinkText("note #2")).await;
    assert_eq!(path_and_query(&client).await, "/admin/note/2/history/");

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_index_shows_all_rows_under_the_bound_and_refuses_a_limit_over_it() {
    let axe = axe_source();
    // 26 messages: 20 a page, and "Show all" since they are at most 200.
    let (client, base, _session) = admin_at("/admin/message/?q=says").await;
    let rows = |client: Client| async move {
        client
            .find_all(Locator::Css("tbody tr"))
            .await
            .expect("rows")
            .len()
    };
    assert_eq!(rows(client.clone()).await, 20);
    click(&client, Locator::LinkText("Show all")).await;
    assert_eq!(
        path_and_query(&client).await,
        "/admin/message/?q=says&limit=200"
    );
    assert_eq!(text_of(&client, "#row-count").await, "25 messages");
    assert_eq!(rows(client.clone()).await, 25);
    assert!(client.find(Locator::LinkText("Next →")).await.is_err());
    assert!(client.find(Locator::LinkText("Show all")).await.is_err());

    // A smaller limit pages by it; the page links keep it.
    open(&client, &base, "/admin/message/?limit=7").await;
    assert_eq!(rows(client.clone()).await, 7);
    click(&client, Locator::Css("a[rel=next]")).await;
    assert_eq!(
        path_and_query(&client).await,
        "/admin/message/?limit=7&page=2"
    );

    // Over the bound: refused on the page (400), which shows 20 rows and links without it.
    assert_eq!(status_of(&client, "/admin/message/?limit=500").await, 400);
    open(&client, &base, "/admin/message/?limit=500").await;
    let refused = text_of(&client, "p.error[role=alert]").await;
    assert!(
        refused.contains("limit=500") && refused.contains("at most 200"),
        "{refused}"
    );
    assert_eq!(rows(client.clone()).await, 20);
    let next = client
        .find(Locator::Css("a[rel=next]"))
        .await
        .expect("the next page")
        .attr("href")
        .await
        .expect("its href")
        .unwrap_or_default();
    assert!(!next.contains("limit"), "{next}");
    let problems = check_page(&client, &axe, "index, limit refused", true).await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_date_times_are_typed_straight_through_in_the_format_the_help_shows() {
    // The edit form shows the stored value in the format its help and placeholder name.
    let (client, base, _session) = admin_at("/admin/message/26/").await;
    assert_eq!(
        value_of(&client, "#f-pub_date").await.as_deref(),
        Some("2024-03-01 08:00:00")
    );
    let help = text_of(&client, "#f-pub_date + .help").await;
    assert_eq!(help, "YYYY-MM-DD HH:MM:SS");
    assert_eq!(
        aria(&client, "#f-pub_date", "placeholder").await.as_deref(),
        Some("YYYY-MM-DD HH:MM:SS")
    );

    // Typed on the keyboard as the help says: saved as typed.
    fill(&client, "#f-pub_date", "2024-03-02 09:30:15").await;
    assert_eq!(
        value_of(&client, "#f-pub_date").await.as_deref(),
        Some("2024-03-02 09:30:15")
    );
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert!(path_and_query(&client).await.starts_with("/admin/message/"));
    open(&client, &base, "/admin/message/26/").await;
    assert_eq!(
        value_of(&client, "#f-pub_date").await.as_deref(),
        Some("2024-03-02 09:30:15")
    );

    // In an inline row too, without the seconds: they are zero.
    open(&client, &base, "/admin/user/3/").await;
    assert_eq!(
        value_of(&client, "#f-message-0-pub_date").await.as_deref(),
        Some("2024-03-02 09:30:15")
    );
    fill(&client, "#f-message-1-content", "typed date").await;
    fill(&client, "#f-message-1-pub_date", "2024-04-05 06:07").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    open(&client, &base, "/admin/user/3/").await;
    assert_eq!(
        value_of(&client, "#f-message-1-pub_date").await.as_deref(),
        Some("2024-04-05 06:07:00")
    );

    client.close().await.expect("browser closed");
}

/// The words of the page's table cells (`th`, `td`) that are laid out on more than one line,
/// found with a Range over each word of their text nodes.
async fn broken_words(client: &Client) -> Vec<String> {
    let found = client
        .execute(
            "const broken = [];\
             for (const cell of document.querySelectorAll('th, td')) {\
               const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);\
               for (let n = walk.nextNode(); n; n = walk.nextNode()) {\
                 for (const m of n.data.matchAll(/\\S+/g)) {\
                   const r = document.createRange();\
                   r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);\
                   const lines = new Set([...r.getClientRects()]\
                     .filter(x => x.width > 1).map(x => Math.round(x.top)));\
                   if (lines.size > 1) broken.push(m[0]);\
                 }\
               }\
             }\
             return broken;",
            vec![],
        )
        .await
        .expect("script ran");
    serde_json::from_value(found).expect("a list")
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_layout_keeps_words_whole_and_puts_rows_first_on_a_phone() {
    let (client, base, _session) = admin_at("/admin/").await;
    client
        .set_window_size(1280, 860)
        .await
        .expect("a laptop's size");
    let mut problems = Vec::new();
    for path in [
        "/admin/user/",
        "/admin/message/",
        "/admin/message/?_facets=1",
        "/admin/note/",
        "/admin/relationship/",
        "/admin/jobs/",
        "/admin/user/3/",
    ] {
        open(&client, &base, path).await;
        let broken = broken_words(&client).await;
        if !broken.is_empty() {
            problems.push(format!("{path}: words broken across lines: {broken:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // The password input looks like the others.
    open(&client, &base, "/admin/user/3/").await;
    let style = |css: &'static str| {
        let client = client.clone();
        async move {
            client
                .execute(
                    "const s = getComputedStyle(document.querySelector(arguments[0]));\
                     return [s.borderTopWidth, s.borderTopColor, s.borderRadius, s.paddingLeft, s.minWidth];",
                    vec![json!(css)],
                )
                .await
                .expect("script ran")
        }
    };
    assert_eq!(style("#f-new_password").await, style("#f-username").await);

    // A phone: the facets are a closed toggle, the first rows show on the first screen; the
    // toggle opens them (with the keyboard too).
    client
        .set_window_size(390, 844)
        .await
        .expect("a phone's size");
    open(&client, &base, "/admin/message/").await;
    let facets = client
        .find(Locator::Css("details.facets"))
        .await
        .expect("the facets");
    assert_eq!(facets.attr("open").await.expect("open?"), None);
    let first_row = client
        .execute(
            "return document.querySelector('tbody tr').getBoundingClientRect().bottom\
               <= window.innerHeight;",
            vec![],
        )
        .await
        .expect("script ran");
    assert_eq!(
        first_row,
        json!(true),
        "the first row is on the first screen"
    );
    save_screenshot(&client, "admin-index-phone").await;
    tab_to(&client, "details.facets summary").await;
    press(&client, Key::Enter).await;
    assert!(facets.attr("open").await.expect("open?").is_some());
    assert!(client
        .find(Locator::LinkText("bob"))
        .await
        .expect("a facet")
        .is_displayed()
        .await
        .expect("shown?"));

    // A laptop: open beside the rows.
    client
        .set_window_size(1280, 860)
        .await
        .expect("a laptop's size");
    open(&client, &base, "/admin/message/").await;
    assert!(client
        .find(Locator::Css("details.facets"))
        .await
        .expect("the facets")
        .attr("open")
        .await
        .expect("open?")
        .is_some());
    save_screenshot(&client, "admin-index-wide").await;
    // The edit page, at both widths (docs/images).
    open(&client, &base, "/admin/message/26/").await;
    save_screenshot(&client, "admin-edit-wide").await;
    client
        .set_window_size(390, 844)
        .await
        .expect("a phone's size");
    open(&client, &base, "/admin/message/26/").await;
    save_screenshot(&client, "admin-edit-phone").await;

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_search_box_finds_rows_and_the_search_stays_through_sorting_and_export() {
    let (client, _base, _session) = admin_at("/admin/message/").await;
    fill(&client, "#search-q", "says 2").await;
    click(&client, Locator::Css(".search-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/?q=says+2");
    // "bob says 02", "... 12", "... 20" to "... 25": every word is found (inside a word
    // too), and the count says so.
    assert_eq!(text_of(&client, "#row-count").await, "8 messages");
    assert_eq!(
        value_of(&client, "#search-q").await.as_deref(),
        Some("says 2")
    );
    screenshot(&client, "admin-search").await;
    // Sorting by a column keeps the search, and so does the export's link.
    click(&client, Locator::LinkText("Content")).await;
    let sorted = path_and_query(&client).await;
    assert!(
        sorted.contains("q=says+2") && sorted.contains("ordering=content"),
        "{sorted}"
    );
    assert_eq!(text_of(&client, "#row-count").await, "8 messages");
    let export = client
        .find(Locator::LinkText("Export"))
        .await
        .expect("the export link")
        .attr("href")
        .await
        .expect("its href")
        .unwrap_or_default();
    assert!(export.contains("q=says+2"), "{export}");
    client.close().await.expect("browser closed");
}

/// The microblog example on [`ADMIN_SEED`], logged in through the admin's login form as
/// alice, a user without the admin flag who holds the model permissions `granted`.
async fn staff_admin(granted: &[&str]) -> (Client, String, Session) {
    let (client, base, session) = browse_microblog_granting(false, granted, ADMIN_SEED).await;
    admin_login(&client, &base).await;
    (client, base, session)
}

/// The HTTP status of a GET of `path`, fetched by the page open in `client` (with its
/// session): what a link or a typed address would meet.
async fn status_of(client: &Client, path: &str) -> u64 {
    client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             fetch(arguments[0]).then(r => done(r.status)).catch(e => done(String(e)));",
            vec![json!(path)],
        )
        .await
        .expect("fetched")
        .as_u64()
        .expect("a status")
}

/// The visible texts of the elements `css`, in the page's order.
async fn texts_of(client: &Client, css: &str) -> Vec<String> {
    let mut texts = Vec::new();
    for e in client.find_all(Locator::Css(css)).await.expect(css) {
        texts.push(e.text().await.expect("its text"));
    }
    texts
}

/// The controls of the page's main part that take input (neither hidden, disabled nor
/// read-only), by id or name; the index's row checkboxes and its search and filter forms
/// aside (they change nothing).
async fn editable_controls(client: &Client) -> Vec<String> {
    let found = client
        .execute(
            "return [...document.querySelectorAll('main input, main select, main textarea')]\
               .filter(e => e.type !== 'hidden' && !e.disabled && !e.readOnly)\
               .map(e => e.id || e.name || e.tagName.toLowerCase());",
            vec![],
        )
        .await
        .expect("script ran");
    serde_json::from_value(found).expect("a list")
}

/// Whether the page has an element `css`.
async fn has(client: &Client, css: &str) -> bool {
    !client
        .find_all(Locator::Css(css))
        .await
        .expect(css)
        .is_empty()
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_for_a_staff_user_who_may_only_view_messages() {
    let axe = axe_source();
    let (client, base, _session) = staff_admin(&["message.view"]).await;
    let mut problems = check_page(&client, &axe, "staff dashboard", true).await;

    // The dashboard and the navigation name messages alone, with no way to add one; the
    // panel is for superusers.
    assert_eq!(
        texts_of(&client, "nav.side a").await,
        ["Dashboard", "Messages"]
    );
    assert_eq!(texts_of(&client, ".cards li").await, ["Messages"]);
    assert!(!has(&client, "a[href$='/add/']").await, "no add link");
    let text = body_text(&client).await;
    assert!(!text.contains("New messages this week"), "{text}");
    screenshot(&client, "admin-staff-view-dashboard").await;

    // The index: rows to view, nothing to add, import or delete.
    click(&client, Locator::LinkText("Messages")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    for absent in [
        "a[href='/admin/message/add/']",
        "a[href='/admin/message/import/']",
        "#bulk-action",
    ] {
        assert!(!has(&client, absent).await, "{absent} on the index");
    }
    assert_eq!(
        text_of(&client, "tbody tr:first-child td:last-child").await,
        "View"
    );
    problems.extend(check_page(&client, &axe, "staff view-only index", true).await);

    // The detail page shows the row: nothing to type in, no save, no delete.
    open(&client, &base, "/admin/message/26/").await;
    assert_eq!(text_of(&client, "h1").await, "View carol was here");
    assert_eq!(
        value_of(&client, "#f-content").await.as_deref(),
        Some("carol was here")
    );
    assert_eq!(editable_controls(&client).await, Vec::<String>::new());
    assert!(!has(&client, "main button").await, "no save button");
    assert!(!has(&client, "a[href='/admin/message/26/delete/']").await);
    problems.extend(check_page(&client, &axe, "staff view-only detail", true).await);
    screenshot(&client, "admin-staff-view-detail").await;

    // Pages of other models, and those that write, are refused.
    for path in [
        "/admin/message/add/",
        "/admin/message/26/delete/",
        "/admin/message/import/",
        "/admin/user/",
        "/admin/note/1/",
    ] {
        assert_eq!(status_of(&client, path).await, 403, "GET {path}");
    }
    open(&client, &base, "/admin/message/add/").await;
    assert!(text_of(&client, "h1").await.starts_with("403"));
    problems.extend(check_page(&client, &axe, "staff refused", true).await);

    assert!(problems.is_empty(), "{}", problems.join("\n"));
    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_for_a_staff_user_who_may_only_change_messages() {
    let axe = axe_source();
    let (client, base, _session) = staff_admin(&["message.change"]).await;
    assert_eq!(
        texts_of(&client, "nav.side a").await,
        ["Dashboard", "Messages"]
    );
    assert!(!has(&client, "a[href$='/add/']").await, "no add link");

    // The index links each row's edit page; no add button, no bulk delete.
    open(&client, &base, "/admin/message/").await;
    assert!(!has(&client, "a[href='/admin/message/add/']").await);
    assert!(!has(&client, "#bulk-action").await, "no bulk delete");
    assert_eq!(
        text_of(&client, "tbody tr:first-child td:last-child").await,
        "Edit"
    );
    let mut problems = check_page(&client, &axe, "staff change-only index", true).await;

    // The edit page saves; it offers no delete.
    open(&client, &base, "/admin/message/26/").await;
    assert!(
        has(&client, ".edit-form button[type=submit]").await,
        "a save button"
    );
    assert!(!has(&client, "a[href='/admin/message/26/delete/']").await);
    problems.extend(check_page(&client, &axe, "staff change-only edit", true).await);
    fill(&client, "#f-content", "carol was here, says staff").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    open(&client, &base, "/admin/message/26/").await;
    assert_eq!(
        value_of(&client, "#f-content").await.as_deref(),
        Some("carol was here, says staff")
    );
    screenshot(&client, "admin-staff-change-edit").await;

    // The add and delete pages are refused, typed in the address bar too.
    for path in ["/admin/message/add/", "/admin/message/26/delete/"] {
        assert_eq!(status_of(&client, path).await, 403, "GET {path}");
    }
    open(&client, &base, "/admin/message/add/").await;
    assert!(text_of(&client, "h1").await.starts_with("403"));
    assert!(!has(&client, "#f-content").await, "no add form");

    assert!(problems.is_empty(), "{}", problems.join("\n"));
    client.close().await.expect("browser closed");
}

/// The one link under `/accounts/{kind}/` in the newest mail of `dir`'s mail folder.
fn mailed_link(dir: &TempDir, kind: &str) -> String {
    let folder = dir.path().join("mail");
    let newest = std::fs::read_dir(&folder)
        .expect("the mail folder")
        .filter_map(Result::ok)
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .expect("a mail");
    let text = std::fs::read_to_string(newest.path()).expect("a mail file");
    let start = text
        .find("http://")
        .filter(|at| text[*at..].contains(&format!("/accounts/{kind}/")))
        .unwrap_or_else(|| panic!("a {kind} link in {text}"));
    let rest = &text[start..];
    rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())].to_owned()
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn reset_a_forgotten_password_through_the_mailed_link() {
    let address = "UPDATE \"user\" SET email = 'alice@example.com' WHERE username = 'alice'";
    let (client, base, session) = browse_microblog(false, address).await;
    let axe = axe_source();

    // From the login form to the reset form, by its link.
    open(&client, &base, "/accounts/login/").await;
    click(&client, Locator::LinkText("Forgot your password?")).await;
    assert_eq!(path_and_query(&client).await, "/accounts/password_reset/");
    assert_eq!(
        axe_violations(&client, &axe, "reset request").await,
        Vec::<String>::new()
    );
    fill(&client, "#username_or_email", "alice").await;
    submit(&client).await;
    assert_eq!(
        path_and_query(&client).await,
        "/accounts/password_reset/done/"
    );
    assert!(body_text(&client).await.contains("Check your mail"));

    // The mail's link opens the form for the new password.
    let link = mailed_link(&session.data, "reset");
    assert!(link.starts_with(&base), "{link} is on {base}");
    client.goto(&link).await.expect("the link opens");
    assert_eq!(
        axe_violations(&client, &axe, "new password").await,
        Vec::<String>::new()
    );
    fill(&client, "#new_password1", "a new secret").await;
    fill(&client, "#new_password2", "another").await;
    submit(&client).await;
    assert!(body_text(&client).await.contains("didn't match"));
    fill(&client, "#new_password1", "a new secret").await;
    fill(&client, "#new_password2", "a new secret").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/accounts/login/");
    screenshot(&client, "accounts-reset-done").await;

    // The new password logs in; the link is spent.
    fill(&client, "#username", "alice").await;
    fill(&client, "#password", "a new secret").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/");
    client.goto(&link).await.expect("the link opens");
    assert!(body_text(&client).await.contains("This link is not valid"));
}

/// The texts of the breadcrumbs, in order.
async fn breadcrumbs(client: &Client) -> Vec<String> {
    texts_of(client, "nav.breadcrumbs li").await
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_names_models_and_fields_as_people_read_them() {
    // The model's plural heads the index and the navigation; fields read their verbose names.
    let (client, base, _session) = admin_at("/admin/message/").await;
    assert_eq!(text_of(&client, "h1").await, "Messages");
    assert!(texts_of(&client, "nav.side a")
        .await
        .contains(&"Messages".to_owned()));
    let heads = texts_of(&client, "thead th").await;
    assert!(
        heads.iter().any(|h| h == "Date published") && heads.iter().any(|h| h == "Content"),
        "{heads:?}"
    );
    assert!(!heads.iter().any(|h| h.contains("pub_date")), "{heads:?}");
    let facets = texts_of(&client, ".facets h2").await;
    assert!(
        facets.contains(&"By date published".to_owned()),
        "{facets:?}"
    );
    assert_eq!(text_of(&client, ".toolbar a.button").await, "Add message");

    // The forms' labels; the inputs keep the API names.
    open(&client, &base, "/admin/message/1/").await;
    assert_eq!(
        text_of(&client, "label[for=f-pub_date]").await,
        "Date published"
    );
    open(&client, &base, "/admin/user/2/").await;
    assert_eq!(
        text_of(&client, "label[for=f-join_date]").await,
        "Date joined"
    );
    assert!(client
        .find(Locator::Css("input[name=join_date]"))
        .await
        .is_ok());

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_says_once_what_a_save_or_a_delete_did() {
    let axe = axe_source();
    let (client, base, _session) = admin_at("/admin/message/26/").await;
    fill(&client, "#f-content", "carol <b>was</b> here").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    let notice = text_of(&client, "p.notice[role=status]").await;
    assert_eq!(
        notice,
        "The message “carol <b>was</b> here” was changed successfully."
    );
    // The object links to its edit page; the text is escaped, not markup.
    let link = client
        .find(Locator::Css("p.notice a"))
        .await
        .expect("the object's link")
        .attr("href")
        .await
        .expect("its href")
        .unwrap_or_default();
    assert_eq!(link, "/admin/message/26/");
    assert!(client.find(Locator::Css("p.notice b")).await.is_err());
    let problems = check_page(&client, &axe, "index with a message", true).await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Shown once.
    open(&client, &base, "/admin/message/").await;
    assert!(client.find(Locator::Css("p.notice")).await.is_err());

    // Deleted: the index says so, without a link.
    open(&client, &base, "/admin/message/26/delete/").await;
    submit(&client).await;
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The message “carol <b>was</b> here” was deleted successfully."
    );
    assert!(client.find(Locator::Css("p.notice a")).await.is_err());

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_list_keeps_its_search_filters_ordering_and_page_after_a_save_and_a_delete() {
    let place = "/admin/message/?q=says&ordering=-pub_date&page=2";
    let (client, base, _session) = admin_at(place).await;
    // Page 2 of 25 newest first: bob says 05 down to 01.
    click(&client, Locator::Css("tbody tr:first-child a")).await;
    assert_eq!(text_of(&client, "h1").await, "Edit bob says 05");
    fill(&client, "#f-content", "bob says 05, edited").await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, place);
    assert!(text_of(&client, "p.notice").await.contains("was changed"));

    // Cancel and the delete lead back there too.
    click(&client, Locator::Css("tbody tr:nth-child(2) a")).await;
    click(&client, Locator::LinkText("Cancel")).await;
    assert_eq!(path_and_query(&client).await, place);
    click(&client, Locator::Css("tbody tr:nth-child(2) a")).await;
    click(&client, Locator::Css("a.danger-link")).await;
    submit(&client).await;
    assert_eq!(path_and_query(&client).await, place);
    assert!(text_of(&client, "p.notice").await.contains("was deleted"));

    // Another site, or another page, is never followed: the plain index.
    for evil in [
        "https://evil.example/",
        "//evil.example/admin/message/",
        "/admin/user/",
    ] {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("_changelist", evil)
            .finish();
        open(&client, &base, &format!("/admin/message/3/?{query}")).await;
        submit(&client).await;
        assert_eq!(path_and_query(&client).await, "/admin/message/", "{evil}");
    }

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_save_and_continue_editing_and_save_and_add_another() {
    let (client, _base, _session) = admin_at("/admin/message/add/").await;
    fill(&client, "#f-user", "3").await;
    fill(&client, "#f-content", "first of two").await;
    click(&client, Locator::Css("button[name=_addanother]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/add/");
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The message “first of two” was added successfully. You may add another message below."
    );
    assert_eq!(value_of(&client, "#f-content").await.as_deref(), Some(""));

    fill(&client, "#f-user", "3").await;
    fill(&client, "#f-content", "second of two").await;
    click(&client, Locator::Css("button[name=_continue]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/28/");
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The message “second of two” was added successfully. You may edit it again below."
    );
    fill(&client, "#f-content", "second of two, again").await;
    click(&client, Locator::Css("button[name=_continue]")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/28/");
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The message “second of two, again” was changed successfully. You may edit it again below."
    );
    assert_eq!(
        value_of(&client, "#f-content").await.as_deref(),
        Some("second of two, again")
    );

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_breadcrumbs_on_every_page_and_the_history_link_at_the_top() {
    let axe = axe_source();
    let (client, base, _session) = admin_at("/admin/message/").await;
    assert_eq!(breadcrumbs(&client).await, ["Home", "Messages"]);
    for (path, trail) in [
        (
            "/admin/message/add/",
            vec!["Home", "Messages", "Add message"],
        ),
        ("/admin/message/1/", vec!["Home", "Messages", "bob says 01"]),
        (
            "/admin/message/1/delete/",
            vec!["Home", "Messages", "bob says 01", "Delete"],
        ),
        (
            "/admin/message/1/history/",
            vec!["Home", "Messages", "bob says 01", "History"],
        ),
        ("/admin/message/export/", vec!["Home", "Messages", "Export"]),
        ("/admin/message/import/", vec!["Home", "Messages", "Import"]),
    ] {
        open(&client, &base, path).await;
        assert_eq!(breadcrumbs(&client).await, trail, "{path}");
        let current = text_of(&client, "nav.breadcrumbs [aria-current=page]").await;
        assert_eq!(&current, trail.last().expect("a last crumb"), "{path}");
    }
    // The edit page: the history link comes before the form.
    open(&client, &base, "/admin/message/1/").await;
    let problems = check_page(&client, &axe, "edit with breadcrumbs", true).await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let first = client
        .find(Locator::Css("main a:not(nav.breadcrumbs a)"))
        .await
        .expect("a link in the page")
        .text()
        .await
        .expect("its text");
    assert_eq!(first, "History");
    click(&client, Locator::LinkText("History")).await;
    assert_eq!(path_and_query(&client).await, "/admin/message/1/history/");
    // Up the trail.
    click(
        &client,
        Locator::Css("nav.breadcrumbs a[href='/admin/message/']"),
    )
    .await;
    assert_eq!(path_and_query(&client).await, "/admin/message/");
    click(&client, Locator::LinkText("Home")).await;
    assert_eq!(path_and_query(&client).await, "/admin/");

    client.close().await.expect("browser closed");
}

/// [`ADMIN_SEED`] and twelve more users, `u01` to `u12` (keys 10 to 21), each with the message
/// `uNN says hi`: more authors than the message index's facet lists (ten).
fn many_authors_seed() -> String {
    let mut seed = ADMIN_SEED.to_owned();
    for n in 1..=12 {
        seed.push_str(&format!(
            "INSERT INTO \"user\" (id, username, password, email, join_date, active, admin)
                 VALUES ({id}, 'u{n:02}', '', 'u{n:02}@example.com', '2024-01-03 00:00:00', 1, 0);
             INSERT INTO message (user_id, content, pub_date)
                 VALUES ({id}, 'u{n:02} says hi', '2024-04-{n:02} 12:00:00');\n",
            id = n + 9
        ));
    }
    seed
}

#[actix_web::test]
#[ignore = "needs chromium, chromedriver and axe-core; scripts/test.sh runs it"]
async fn admin_facet_search_finds_an_author_beyond_the_listed_ones() {
    let axe = axe_source();
    let (client, base, _session) = browse_microblog(true, &many_authors_seed()).await;
    admin_login(&client, &base).await;
    client
        .set_window_size(1280, 860)
        .await
        .expect("a laptop's size");
    let place = "/admin/message/?q=says&ordering=-pub_date";
    open(&client, &base, place).await;
    // Ten authors, then "and more", which leads to the facet's search box.
    let more = client
        .find(Locator::LinkText("and more"))
        .await
        .expect("and more");
    assert_eq!(
        more.attr("href").await.expect("href").as_deref(),
        Some("#facet-q-user")
    );
    let label = client
        .find(Locator::Css("label[for=facet-q-user]"))
        .await
        .expect("the search box's label")
        .prop("textContent")
        .await
        .expect("its text");
    assert_eq!(label.as_deref(), Some("Search user"));

    // What the form sends lists the matches as links (with the script too); axe-core finds
    // nothing to say, on that page and with the type-ahead open.
    open(&client, &base, &format!("{place}&_facet_q_user=u1")).await;
    assert_eq!(
        texts_of(&client, ".facet-matches a").await,
        ["u10", "u11", "u12"]
    );
    let mut problems = check_page(&client, &axe, "index, facet search", true).await;
    client
        .execute("window.scrollTo(0, 0);", vec![])
        .await
        .expect("script ran");
    fill(&client, "#facet-q-user", "u12").await;
    wait_for_options(&client, ".facet-search .lookup-results", &["u12 (#21)"]).await;
    press(&client, Key::Down).await;
    assert_eq!(
        aria(&client, "#facet-q-user", "aria-expanded")
            .await
            .as_deref(),
        Some("true")
    );
    problems.extend(axe_violations(&client, &axe, "index, facet type-ahead open").await);
    save_screenshot(&client, "admin-facet-search").await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Enter chooses: the index filtered by the author, its search and ordering kept.
    press_and_wait(&client, Key::Enter).await;
    assert_eq!(path_and_query(&client).await, format!("{place}&user=21"));
    assert_eq!(text_of(&client, "#row-count").await, "1 message");
    assert_eq!(text_of(&client, ".facets a[aria-current]").await, "u12");

    // At a phone's width, the facets opened, the box and its matches stay inside the page.
    client
        .set_window_size(390, 844)
        .await
        .expect("a phone's size");
    open(&client, &base, &format!("{place}&_facet_q_user=u1")).await;
    click_in_page(&client, "details.facets summary").await;
    assert!(client
        .find(Locator::Css("#facet-q-user"))
        .await
        .expect("the facet's search")
        .is_displayed()
        .await
        .expect("shown?"));
    let wide = too_wide(&client, "index at 390 px, facet search").await;
    assert!(wide.is_none(), "{wide:?}");

    client.close().await.expect("browser closed");
}

/// Clicks the element `css`, which leads to no other page.
async fn click_in_page(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .click()
        .await
        .expect("clicked");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_facet_search_works_without_javascript() {
    let (client, base, _session) =
        browse_microblog_with(true, &[], &many_authors_seed(), false).await;
    admin_login(&client, &base).await;
    let place = "/admin/message/?q=says&ordering=-pub_date";
    open(&client, &base, place).await;
    assert_eq!(
        aria(&client, "#facet-q-user", "role").await,
        None,
        "no script made it a combobox"
    );
    fill(&client, "#facet-q-user", "u1").await;
    click(&client, Locator::Css(".facet-search button[type=submit]")).await;
    assert_eq!(
        path_and_query(&client).await,
        format!("{place}&_facet_q_user=u1")
    );
    assert_eq!(
        value_of(&client, "#facet-q-user").await.as_deref(),
        Some("u1")
    );
    assert_eq!(
        texts_of(&client, ".facet-matches a").await,
        ["u10", "u11", "u12"]
    );
    // The list is not filtered by the search itself.
    assert_eq!(text_of(&client, "#row-count").await, "37 messages");
    click(&client, Locator::LinkText("u12")).await;
    assert_eq!(path_and_query(&client).await, format!("{place}&user=21"));
    assert_eq!(text_of(&client, "#row-count").await, "1 message");
    assert_eq!(
        text_of(&client, "tbody tr td:nth-child(4)").await,
        "u12 says hi"
    );

    client.close().await.expect("browser closed");
}

#[actix_web::test]
#[ignore = "needs chromium and chromedriver; scripts/test.sh runs it"]
async fn admin_add_link_leads_back_to_the_same_list_page_after_the_save() {
    let place = "/admin/message/?q=says&ordering=-pub_date&page=2";
    let (client, _base, _session) = admin_at(place).await;
    click(&client, Locator::LinkText("Add message")).await;
    assert!(path_and_query(&client)
        .await
        .starts_with("/admin/message/add/?_changelist="));
    fill(&client, "#f-user", "3").await;
    fill(&client, "#f-content", "carol says hi").await;
    click(&client, Locator::Css(".edit-form button[type=submit]")).await;
    assert_eq!(path_and_query(&client).await, place);
    assert_eq!(
        text_of(&client, "p.notice").await,
        "The message “carol says hi” was added successfully."
    );
    assert!(body_text(&client).await.contains("Page 2"));

    client.close().await.expect("browser closed");
}
