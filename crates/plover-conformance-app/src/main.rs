//! The conformance app of `shared/conformance/APP.md`.
//!
//! ```text
//! plover-conformance-app --bind HOST:PORT --database URL [--admin USER:PASSWORD]
//!                        [--secret-key KEY] [--max-body-bytes N]
//!                        [--body-timeout SECS] [--send-timeout SECS]
//!                        [--response-memory BYTES] [--unthrottled-logins]
//!                        [--event-retention-seconds N]
//!
//! `--unthrottled-logins` turns the throttle of failed logins off: for a schema-driven tester
//! that sends thousands of wrong credentials from one address and expects a 401 for each.
//! ```

use actix_web::App;

/// What `--help` prints: the usage of the module documentation above.
const USAGE: &str = "\
The conformance app of Plover: the REST API, accounts and admin the black-box suite tests.

Usage: plover-conformance-app [OPTIONS]

Options:
  --bind HOST:PORT          the address to serve on (default 127.0.0.1:8000)
  --database URL            sqlite://FILE or postgres://... (default sqlite://conformance.db)
  --admin USER:PASSWORD     creates this administrator if missing
  --secret-key KEY          the session cookies' key (at least 32 bytes; default: random)
  --max-body-bytes N        the largest request body
  --body-timeout SECS       how long a request body may take to arrive
  --send-timeout SECS       how long an answer may take to be read
  --response-memory BYTES   the memory all answers being built may hold at once
  --unthrottled-logins      no throttle of failed logins (for schema-driven testers)
  --event-retention-seconds N  keep change-feed events N seconds (default 7 days)
  -h, --help                prints this help
";
use microblog::{ensure_user, User};
use plover::prelude::*;
use plover_conformance_app::{api, models, v2};

/// Command-line options.
struct Args {
    bind: String,
    database: String,
    admin: Option<(String, String)>,
    secret_key: Option<String>,
    max_body_bytes: usize,
    body_timeout: Option<f64>,
    send_timeout: Option<f64>,
    response_memory: Option<usize>,
    unthrottled_logins: bool,
    event_retention: Option<f64>,
}

/// The options, or `None` when `--help` asks for the usage.
fn parse_args() -> Result<Option<Args>, String> {
    let mut args = Args {
        bind: "127.0.0.1:8000".into(),
        database: "sqlite://conformance.db".into(),
        admin: None,
        secret_key: None,
        max_body_bytes: plover::rest::DEFAULT_MAX_BODY_BYTES,
        body_timeout: None,
        send_timeout: None,
        response_memory: None,
        unthrottled_logins: false,
        event_retention: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bind" => args.bind = value()?,
            "--database" => args.database = value()?,
            "--admin" => {
                let v = value()?;
                let (user, password) = v.split_once(':').ok_or("--admin takes USER:PASSWORD")?;
                args.admin = Some((user.to_owned(), password.to_owned()));
            }
            "--secret-key" => {
                let key = value()?;
                if key.len() < 32 {
                    return Err("--secret-key needs at least 32 bytes".into());
                }
                args.secret_key = Some(key);
            }
            "--max-body-bytes" => {
                args.max_body_bytes = value()?
                    .parse()
                    .map_err(|_| "--max-body-bytes takes a number")?
            }
            "--body-timeout" => args.body_timeout = Some(seconds(&value()?)?),
            "--send-timeout" => args.send_timeout = Some(seconds(&value()?)?),
            "--response-memory" => {
                let bytes = value()?;
                let bytes = bytes
                    .parse()
                    .map_err(|_| "--response-memory takes a number")?;
                args.response_memory = Some(bytes);
            }
            "--unthrottled-logins" => args.unthrottled_logins = true,
            "--event-retention-seconds" => args.event_retention = Some(seconds(&value()?)?),
            "--help" | "-h" => return Ok(None),
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    Ok(Some(args))
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(format!("expected a number of seconds above 0, not {text}")),
    }
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args =
        parse_args().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let Some(args) = args else {
        print!("{USAGE}");
        return Ok(());
    };
    if let Some(keep) = args.event_retention {
        plover::changes::retain(std::time::Duration::from_secs_f64(keep));
    }
    let db = Database::from_url(&args.database).map_err(std::io::Error::other)?;
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models::models()))
        .map_err(std::io::Error::other)?;
    let mut auth = Auth::<User>::new(db.clone()).cost(4);
    if let Some(key) = &args.secret_key {
        auth = auth.secret_key(key.as_bytes());
    }
    if args.unthrottled_logins {
        auth = auth.login_limits(plover::accounts::LoginLimits {
            per_username: u32::MAX,
            per_address: u32::MAX,
            ..Default::default()
        });
    }
    if let Some((user, password)) = &args.admin {
        ensure_user(&db, &auth, user, password, true).map_err(std::io::Error::other)?;
    }
    let api = api(db.clone(), &auth, args.max_body_bytes).setup();
    let v2 = v2(db, &auth, args.max_body_bytes).setup();
    let accounts = auth.setup();
    let admin = plover_conformance_app::admin(&auth).setup();
    let mut limits = plover::server::ServerLimits::default();
    limits.max_body_bytes = args.max_body_bytes;
    if let Some(s) = args.send_timeout {
        limits.send_timeout = std::time::Duration::from_secs_f64(s);
    }
    let mut guard = plover::server::Guard::default();
    if let Some(s) = args.body_timeout {
        guard = guard.body_timeout(std::time::Duration::from_secs_f64(s));
    }
    if let Some(bytes) = args.response_memory {
        guard = guard.response_memory(plover::server::ResponseMemory::new(bytes));
    }
    let server = plover::server::Server::new(move || {
        App::new()
            .wrap(auth.session_middleware())
            .wrap(guard.clone())
            .configure(accounts.clone())
            .configure(api.clone())
            .configure(v2.clone())
            .configure(admin.clone())
            .configure(plover_conformance_app::pages)
    })
    .limits(limits)
    .bind(&args.bind)?;
    eprintln!("plover-conformance-app listening on {}", args.bind);
    server.run().await
}
