//! The cost of `ModelPermissions` on a request in steady state, in instructions: a GET of one
//! ticket with Basic credentials (verified once, then from the cache) through two APIs on the
//! same model and authentication, one requiring the model permission (kept by the process
//! under the permissions stamp, which the user's look-up reads), the other not.
//!
//! `cargo bench -p plover-benches --bench permission_cost` runs itself under valgrind's
//! cachegrind, which counts the instructions a run executes whatever else the machine does:
//! each API serves `N` and `2N` requests in a process of its own, and the difference over `N`
//! is the instructions of one request, setup and warm-up cancelled out. Without valgrind it
//! says so and stops.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use actix_web::http::Method;
use plover::auth::UserAuthentication;
use plover::permissions::{self, Holder, ModelPermissions};
use plover::rest::{Resource, RestApi};
use plover_tests::{TestApp, TestService, Ticket, User};

/// Requests in the shorter run.
const N: u64 = 2_000;

/// The variable that makes this binary serve requests instead of measuring.
const RUN: &str = "PLOVER_PERMISSION_COST_RUN";

/// Serves `requests` GETs through the API `name` (`plain` or `checked`).
fn serve(name: &str, requests: u64) {
    let rt = actix_web::rt::System::new();
    let app = rt.block_on(TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened) \
         VALUES (1, 't1', 1, 'open', '', 's', '2020-01-01')",
    ));
    let staff = app.user("staff", "pw");
    app.db
        .run_blocking(|c| permissions::grant(c, Holder::User(staff), "ticket.view"))
        .unwrap();
    let auth = plover::accounts::Auth::<User>::new(app.db.clone()).cost(4);
    let every = vec![Method::GET, Method::POST, Method::PUT, Method::DELETE];
    let mut api = RestApi::new(app.db.clone())
        .prefix(&format!("/{name}"))
        .name(name)
        .default_auth(UserAuthentication::with_methods(&auth, every));
    let resource = Resource::<Ticket>::new();
    api.register_resource(match name {
        "checked" => resource.permissions(ModelPermissions),
        _ => resource,
    });
    let service = rt.block_on(TestService::new(
        actix_web::App::new().configure(api.setup()),
    ));
    let path = format!("/{name}/ticket/1/");
    for _ in 0..requests {
        let req = actix_web::test::TestRequest::get()
            .uri(&path)
            .insert_header(plover_tests::basic("staff", "pw"));
        let resp = rt.block_on(service.send(req));
        assert_eq!(resp.code(), 200);
    }
}

/// The instructions a run of this binary serving `requests` through `name` executes.
fn instructions(name: &str, requests: u64) -> Option<u64> {
    let me = std::env::current_exe().ok()?;
    let out = Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
        ])
        .arg(me)
        .env(RUN, format!("{name}:{requests}"))
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| l.contains("I") && l.contains("refs:"))?;
    line.split_whitespace()
        .last()?
        .replace(',', "")
        .parse()
        .ok()
}

fn main() {
    if let Ok(run) = std::env::var(RUN) {
        let (name, requests) = run.split_once(':').unwrap();
        serve(name, requests.parse().unwrap());
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks what there is
    }
    let mut per_request = Vec::new();
    for name in ["plain", "checked"] {
        let (Some(short), Some(long)) = (instructions(name, N), instructions(name, 2 * N)) else {
            println!("permission_cost: valgrind is not available; nothing measured");
            return;
        };
        let one = long.saturating_sub(short) / N;
        println!("permission_cost/{name}: {one} instructions a request");
        per_request.push(one as f64);
    }
    let extra = (per_request[1] / per_request[0] - 1.0) * 100.0;
    println!("permission_cost: ModelPermissions adds {extra:+.2} % a request");
}
