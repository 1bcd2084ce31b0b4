//! The conformance app of `shared/conformance/APP.md`.
//!
//! ```text
//! plover-conformance-app --bind HOST:PORT --database URL [--admin USER:PASSWORD]
//!                        [--secret-key KEY] [--max-body-bytes N]
//!                        [--body-timeout SECS] [--send-timeout SECS]
//!                        [--response-memory BYTES] [--unthrottled-logins]
//!                        [--event-retention-seconds N]
//!                        [--webhook URL [--webhook-secret SECRET] [--webhook-retry-base-ms N]]
//!                        [--mail-dir DIR] [--rate-limit N]
//!
//! `PLOVER_DATABASE_REPLICAS` (comma-separated PostgreSQL URLs) names streaming replicas of
//! `--database` that may serve reads (docs/deployment.md#read-replicas).
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
  --webhook URL             sends every event of message, ticket and sample to URL
                            (loopback allowed), from job workers and a dispatcher
  --webhook-secret SECRET   signs the webhooks (default whsec_Y29uZm9ybWFuY2Utc2VjcmV0LWtleQ==)
  --webhook-retry-base-ms N the first retry's delay of a failed webhook (default 5000);
                            later ones double, for at least 24 h
  --mail-dir DIR            writes each account mail (password reset, sign-up) as a .eml
                            file in DIR (default: mail is dropped)
  --rate-limit N            serves /limited/sample/ (read-only, open), at most N requests
                            an hour per client address, counted in the database (for the
                            scale-out test: the limit holds across processes)
  -h, --help                prints this help

Environment:
  PLOVER_DATABASE_REPLICAS  PostgreSQL URLs (comma-separated) of streaming replicas of
                            --database that may serve reads
";
use std::time::Duration;

use microblog::{ensure_user, User};
use plover::jobs::Jobs;
use plover::mail::{FolderBackend, MailBackend, MailError, Mailer, Message};
use plover::prelude::*;
use plover::webhooks::{Endpoint, Running, Targets, Webhooks};
use plover_conformance_app::{api, models, v2, v3};

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
    webhook: Option<String>,
    webhook_secret: String,
    webhook_retry_base: Option<Duration>,
    mail_dir: Option<String>,
    rate_limit: Option<u32>,
}

/// The mail backend without `--mail-dir`: every message is dropped.
struct Dropped;

impl MailBackend for Dropped {
    fn send(&self, _message: &Message) -> Result<(), MailError> {
        Ok(())
    }
}

/// The secret of `--webhook-secret` unless given (the key `conformance-secret-key`).
const WEBHOOK_SECRET: &str = "whsec_Y29uZm9ybWFuY2Utc2VjcmV0LWtleQ==";

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
        webhook: None,
        webhook_secret: WEBHOOK_SECRET.into(),
        webhook_retry_base: None,
        mail_dir: None,
        rate_limit: None,
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
            "--webhook" => args.webhook = Some(value()?),
            "--webhook-secret" => args.webhook_secret = value()?,
            "--mail-dir" => args.mail_dir = Some(value()?),
            "--rate-limit" => {
                let n = value()?;
                args.rate_limit = Some(n.parse().map_err(|_| "--rate-limit takes a number")?);
            }
            "--webhook-retry-base-ms" => {
                let ms = value()?;
                let ms = ms
                    .parse()
                    .map_err(|_| "--webhook-retry-base-ms takes a number")?;
                args.webhook_retry_base = Some(Duration::from_millis(ms));
            }
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
    // PLOVER_DATABASE_REPLICAS: streaming replicas that may serve reads (APP.md section 8).
    let config = plover::db::Config::from_url(&args.database).map_err(std::io::Error::other)?;
    let db = Database::open(&config.replicas_from_env()).map_err(std::io::Error::other)?;
    let mut tables = models::models();
    tables.push(plover::jobs::Job::meta());
    db.run_blocking(|conn| plover::schema::create_tables(conn, &tables))
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
    let from = "Plover conformance <noreply@example.com>";
    let mailer = match &args.mail_dir {
        Some(dir) => Mailer::new(FolderBackend::new(dir), from),
        None => Mailer::new(Dropped, from),
    };
    auth = auth.mailer(mailer).signup(true);
    if let Some((user, password)) = &args.admin {
        ensure_user(&db, &auth, user, password, true).map_err(std::io::Error::other)?;
    }
    let api = api(db.clone(), &auth, args.max_body_bytes);
    let hooks = webhooks(&api, &args)?;
    let api = api.setup();
    let v2 = v2(db.clone(), &auth, args.max_body_bytes).setup();
    let v3 = v3(db.clone(), &auth, args.max_body_bytes).setup();
    let limited = args.rate_limit.map(|n| limited(db.clone(), n).setup());
    let accounts = auth.setup();
    let mut admin = plover_conformance_app::admin(&auth);
    if let Some(hooks) = &hooks {
        admin.jobs().webhooks(hooks); // the deliveries and dead letters of `--webhook`
    }
    let admin = admin.setup();
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
            .configure(v3.clone())
            .configure(|cfg| {
                if let Some(limited) = &limited {
                    limited(cfg);
                }
            })
            .configure(admin.clone())
            .configure(plover_conformance_app::pages)
    })
    .limits(limits)
    .bind(&args.bind)?;
    let running = match &hooks {
        Some(hooks) => Some(start_webhooks(hooks, &db, &args)?),
        None => None,
    };
    eprintln!("plover-conformance-app listening on {}", args.bind);
    let served = server.run().await;
    if let Some(running) = running {
        running.stop().await;
    }
    served
}

/// The API of `--rate-limit`: `/limited/sample/`, read-only and open, at most `n` requests an
/// hour per client address, counted in the database that every process shares.
fn limited(db: Database, n: u32) -> RestApi {
    let mut api = RestApi::new(db)
        .prefix("/limited")
        .name("limited")
        .rate_limit(plover::rest::RateLimit::new(n, Duration::from_secs(3600)).in_database());
    api.register_resource(
        Resource::<models::Sample>::new()
            .allowed_methods([actix_web::http::Method::GET])
            .auth(Authentication::new(vec![])),
    );
    api
}

/// The webhooks of `--webhook`: one endpoint wanting every event of `message`, `ticket` and
/// `sample`, loopback targets allowed.
fn webhooks(api: &RestApi, args: &Args) -> std::io::Result<Option<Webhooks>> {
    let Some(url) = &args.webhook else {
        return Ok(None);
    };
    let invalid = |e: Error| {
        let message = format!("--webhook: {}", e.field_lines("; "));
        std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
    };
    let endpoint = Endpoint::new(url, &args.webhook_secret, Targets::Any).map_err(invalid)?;
    let mut hooks =
        Webhooks::new(api).endpoint(endpoint.resources(&["message", "ticket", "sample"]));
    if let Some(base) = args.webhook_retry_base {
        hooks = hooks.retry(base, Duration::from_secs(3600));
    }
    Ok(Some(hooks))
}

/// Starts two job workers (which send the deliveries) and the dispatcher. With a short first
/// retry, idle workers look for due retries as often (from 50 ms to 1 s).
fn start_webhooks(hooks: &Webhooks, db: &Database, args: &Args) -> std::io::Result<Running> {
    let poll = (args.webhook_retry_base)
        .unwrap_or(Duration::from_secs(1))
        .clamp(Duration::from_millis(50), Duration::from_secs(1));
    let jobs = Jobs::new(db.clone()).poll(poll);
    hooks
        .start_with_workers(jobs, 2)
        .map_err(std::io::Error::other)
}
