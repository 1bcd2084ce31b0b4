//! The management commands of `plover::manage`, run as a user runs them: the small
//! application of `tests/commands_app.rs` as a process, on SQLite or PostgreSQL.

use std::process::{Command, Output};

use plover::accounts::{User, UserModel};
use plover::prelude::*;
use plover_tests::*;

/// The notes application's program, run in `dir` (where its `migrations/` is) on `url`.
fn run(dir: &TempDir, url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let program = env!("CARGO_BIN_EXE_plover-tests-commands");
    run_program(program, dir, url, args, env, "")
}

/// The microblog's command line (its user model requires an e-mail address), `input` piped to
/// its standard input.
fn microblog(url: &str, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let program = env!("CARGO_BIN_EXE_plover-tests-microblog-commands");
    run_program(program, &TempDir::new(), url, args, env, input)
}

fn run_program(
    program: &str,
    dir: &TempDir,
    url: &str,
    args: &[&str],
    env: &[(&str, &str)],
    input: &str,
) -> Output {
    use std::io::Write;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir.path())
        .env("DATABASE_URL", url)
        .env_remove("PLOVER_SUPERUSER_PASSWORD")
        .env_remove("PLOVER_SUPERUSER_USERNAME")
        .env_remove("PLOVER_SUPERUSER_EMAIL")
        .env_remove("PLOVER_NEW_PASSWORD")
        .env_remove("SECRET_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the commands' application runs");
    let mut stdin = child.stdin.take().expect("a pipe");
    // The program may stop before it reads everything: a closed pipe is no failure here.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("the program ends")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_every_command_and_a_wrong_one_is_a_usage_error() {
    let dir = TempDir::new();
    let out = run(&dir, "sqlite://unused.db", &["--help"], &[]);
    assert!(out.status.success());
    for command in [
        "serve",
        "check",
        "makemigrations",
        "migrate",
        "createsuperuser",
        "changepassword",
        "grant",
        "revoke",
        "openapi",
        "routes",
        "worker",
    ] {
        assert!(
            stdout(&out).contains(command),
            "{command}: {}",
            stdout(&out)
        );
    }
    let out = run(
        &dir,
        "sqlite://unused.db",
        &["makemigrations", "--help"],
        &[],
    );
    assert!(stdout(&out).contains("--empty"), "{}", stdout(&out));
    // Each command's own help, with its options and the global ones, exit status 0.
    for (command, option) in [
        ("serve", "--bind"),
        ("check", "--database"),
        ("migrate", "--database"),
        ("createsuperuser", "--username"),
        ("grant", "--in-group"),
        ("revoke", "--group"),
        ("openapi", "--prefix"),
        ("routes", "--database"),
        ("worker", "--once"),
    ] {
        let out = run(&dir, "sqlite://unused.db", &[command, "--help"], &[]);
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(&format!(" {command} [OPTIONS]")), "{text}");
        assert!(text.contains(option), "{command}: {text}");
    }
    assert!(
        !dir.path().join("unused.db").exists(),
        "--help opens no database"
    );
    let out = run(&dir, "sqlite://unused.db", &["serve-all"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn createsuperuser_makes_an_administrator_who_can_log_in_once() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    let password = [("PLOVER_SUPERUSER_PASSWORD", "a long passphrase")];
    let args = ["createsuperuser", "--username", "root"];
    let out = run(&dir, &url, &args, &password);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("created root (id "),
        "{}",
        stdout(&out)
    );

    let auth = Auth::<User>::new(db.clone());
    let root = db
        .run_blocking(|c| auth.find_user(c, "root"))
        .unwrap()
        .expect("the user exists");
    assert!(root.admin && root.active && root.is_admin());
    assert!(root.check_password("a long passphrase"));
    assert!(root.password.starts_with("$2"), "stored as a bcrypt hash");

    // The username rules hold here as for every writer.
    let out = run(
        &dir,
        &url,
        &["createsuperuser", "--username", "ROOT"],
        &password,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("a user named 'root' exists"),
        "{}",
        stderr(&out)
    );
    // No password and no terminal: a clear refusal, nothing written.
    let out = run(&dir, &url, &["createsuperuser", "--username", "other"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("PLOVER_SUPERUSER_PASSWORD"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM users").as_deref(),
        Some("1")
    );
}

/// The permissions the user named `name` holds, directly and through groups.
fn held(db: &Database, name: &str) -> Vec<String> {
    let auth = Auth::<User>::new(db.clone());
    db.run_blocking(|c| {
        let user = auth.find_user(c, name)?.expect("the user exists");
        plover::permissions::Held::of_user_id(c, user.id.into())
    })
    .expect("permissions read")
    .names()
    .map(str::to_owned)
    .collect()
}

#[test]
fn grant_revoke_and_changepassword_change_roles_and_passwords_all_or_nothing() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    let password = [("PLOVER_SUPERUSER_PASSWORD", "a long passphrase")];
    let out = run(
        &dir,
        &url,
        &["createsuperuser", "--username", "staff"],
        &password,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let grant_group = [
        "grant",
        "--group",
        "--create",
        "support",
        "note.view",
        "note.change",
    ];
    let out = run(&dir, &url, &grant_group, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "group support: note.view granted\ngroup support: note.change granted\n"
    );
    let out = run(
        &dir,
        &url,
        &["grant", "staff", "note.delete", "--in-group", "support"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).ends_with("user staff: joined group support\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        held(&db, "staff"),
        ["note.change", "note.delete", "note.view"]
    );

    // An unknown user, group or permission: exit status 1, a message, nothing written.
    for (args, message) in [
        (
            &["grant", "nobody", "note.add"][..],
            "no user is named \"nobody\"",
        ),
        (
            &["grant", "staff", "note.add", "--in-group", "ghosts"],
            "no group is named \"ghosts\"",
        ),
        (
            &["grant", "--group", "ghosts", "note.add"],
            "no group is named \"ghosts\"",
        ),
        (
            &["grant", "staff", "note.add", "note.fly"],
            "no permission is named \"note.fly\"",
        ),
        (
            &["revoke", "staff", "notebook.view"],
            "no permission is named \"notebook.view\"",
        ),
        (
            &["revoke", "nobody", "note.view"],
            "no user is named \"nobody\"",
        ),
        (
            &["revoke", "--group", "ghosts", "note.view"],
            "no group is named \"ghosts\"",
        ),
        (
            &["revoke", "staff", "note.delete", "--in-group", "ghosts"],
            "no group is named \"ghosts\"",
        ),
    ] {
        let out = run(&dir, &url, args, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        // One line, the message: no internal error, nothing of what was done before it.
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("notes: {message}")),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    assert_eq!(
        held(&db, "staff"),
        ["note.change", "note.delete", "note.view"]
    );

    let out = run(
        &dir,
        &url,
        &["revoke", "staff", "note.delete", "--in-group", "support"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "user staff: note.delete revoked\nuser staff: left group support\n"
    );
    assert!(held(&db, "staff").is_empty());

    let new = [("PLOVER_NEW_PASSWORD", "another passphrase")];
    let out = run(&dir, &url, &["changepassword", "staff"], &new);
    assert!(out.status.success(), "{}", stderr(&out));
    let auth = Auth::<User>::new(db.clone());
    let staff = db
        .run_blocking(|c| auth.find_user(c, "staff"))
        .unwrap()
        .unwrap();
    assert!(staff.check_password("another passphrase"));
    assert!(!staff.check_password("a long passphrase"));
    // Without the variable and a terminal, the password comes from the standard input twice.
    let out = run_program(
        env!("CARGO_BIN_EXE_plover-tests-commands"),
        &dir,
        &url,
        &["changepassword", "staff"],
        &[],
        "third passphrase\nthird passphrase\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let staff = db
        .run_blocking(|c| auth.find_user(c, "staff"))
        .unwrap()
        .unwrap();
    assert!(staff.check_password("third passphrase"));
    let out = run(&dir, &url, &["changepassword", "nobody"], &new);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no user is named \"nobody\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn routes_and_openapi_print_what_plover_mounts() {
    let (dir, url) = (TempDir::new(), "sqlite://unused.db");
    let out = run(&dir, url, &["routes"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let routes = stdout(&out);
    // Columns are padded to the longest path: compare with the runs of spaces squeezed.
    let squeezed: Vec<String> = routes
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for line in [
        "GET, POST /api/note/ REST list of note",
        "GET, PUT, DELETE /api/note/{pk}/ REST detail of note",
        "GET, POST /accounts/login/ the login form",
        "GET, POST /admin/user/{pk}/ the admin's edit form of user",
    ] {
        assert!(squeezed.iter().any(|l| l == line), "{line}: {routes}");
    }
    let out = run(&dir, url, &["openapi"], &[]);
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(document["openapi"], "3.1.0");
    assert!(document["paths"]["/api/note/"].is_object(), "{document}");
    let out = run(&dir, url, &["openapi", "--prefix", "/v2"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("this application has: /api"),
        "{}",
        stderr(&out)
    );
}

/// The notes table as the first release made it: no `title`.
const OLD_NOTES: &str = "CREATE TABLE cmd_note (id INTEGER PRIMARY KEY, text TEXT NOT NULL); \
     INSERT INTO cmd_note (id, text) VALUES (7, 'kept');";

#[test]
fn drift_then_makemigrations_and_migrate_then_a_clean_start_with_the_data_kept() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    db.run_blocking(|c| c.batch_execute(OLD_NOTES)).unwrap();

    // The server does not start on the old table: the report, as plain lines.
    let out = run(&dir, &url, &["serve", "--bind", "127.0.0.1:0"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stderr(&out);
    assert!(report.starts_with("notes: the database does not match the models (1 difference):\n  - table \"cmd_note\": column \"title\" is missing\n"), "{report}");
    let out = run(&dir, &url, &["check"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("ADD COLUMN \"title\" TEXT"),
        "{}",
        stdout(&out)
    );

    let out = run(&dir, &url, &["makemigrations", "add_title"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("wrote migrations/"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("_add_title"), "{}", stdout(&out));
    let out = run(&dir, &url, &["check"], &[]);
    assert!(
        stdout(&out).contains("_add_title is not applied: run `migrate`"),
        "{}",
        stdout(&out)
    );

    let out = run(&dir, &url, &["migrate"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("applied "), "{}", stdout(&out));
    assert!(
        stdout(&out).trim_end().ends_with("_add_title"),
        "{}",
        stdout(&out)
    );
    let out = run(&dir, &url, &["migrate"], &[]);
    assert_eq!(stdout(&out), "no migrations to apply\n");
    let out = run(&dir, &url, &["check"], &[]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = run(&dir, &url, &["makemigrations", "again"], &[]);
    assert_eq!(
        stdout(&out),
        "no changes: the database matches the models\n"
    );

    // The start goes through now (it stops at the address it cannot bind), the row kept.
    let out = run(&dir, &url, &["serve", "--bind", "256.0.0.1:1"], &[]);
    assert!(!stderr(&out).contains("does not match"), "{}", stderr(&out));
    let kept = scalar(&db, "SELECT text FROM cmd_note WHERE id = 7");
    assert_eq!(kept.as_deref(), Some("kept"));
    // The admin's history table is there, though the application lists only its own models.
    let history = scalar(&db, "SELECT COUNT(*) FROM plover_history");
    assert_eq!(history.as_deref(), Some("0"));
}

/// The microblog's user with its e-mail address, if it exists.
fn microblog_user(db: &Database, name: &str) -> Option<microblog::User> {
    let auth = Auth::<microblog::User>::new(db.clone());
    db.run_blocking(|c| auth.find_user(c, name)).unwrap()
}

#[test]
fn createsuperuser_takes_the_fields_the_user_model_requires() {
    let (db, store) = fresh_database("");
    let url = store.url();
    let password = ("PLOVER_SUPERUSER_PASSWORD", "a long passphrase");
    // `--help` names the option of the e-mail the model requires.
    let out = microblog(&url, &["createsuperuser", "--help"], &[], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("--email <EMAIL>"), "{}", stdout(&out));

    // From the options.
    let args = [
        "createsuperuser",
        "--username",
        "root",
        "--email",
        "root@example.com",
    ];
    let out = microblog(&url, &args, &[password], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let root = microblog_user(&db, "root").expect("created");
    assert_eq!(root.email, "root@example.com");
    assert!(root.admin && root.active && root.password.starts_with("$2"));

    // From the environment.
    let env = [
        password,
        ("PLOVER_SUPERUSER_USERNAME", "env"),
        ("PLOVER_SUPERUSER_EMAIL", "env@example.com"),
    ];
    let out = microblog(&url, &["createsuperuser"], &env, "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        microblog_user(&db, "env").expect("created").email,
        "env@example.com"
    );

    // Asked, as Django's asks: the username, the e-mail, then the password twice.
    let input = "asked\nasked@example.com\nsecret words\nsecret words\n";
    let out = microblog(&url, &["createsuperuser"], &[], input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Username: Email: Password: Password (again): "),
        "{}",
        stderr(&out)
    );
    let asked = microblog_user(&db, "asked").expect("created");
    assert_eq!(asked.email, "asked@example.com");
    assert!(asked.check_password("secret words"));

    // Nothing to ask on: a refusal that says where the e-mail comes from, nothing written.
    let out = microblog(
        &url,
        &["createsuperuser", "--username", "none"],
        &[password],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("give --email or set PLOVER_SUPERUSER_EMAIL"),
        "{}",
        stderr(&out)
    );
    assert!(microblog_user(&db, "none").is_none());
}

#[test]
fn createsuperuser_refuses_a_blank_password_and_asks_again_three_times() {
    let (db, store) = fresh_database("");
    let url = store.url();
    let name = |n| {
        [
            "createsuperuser",
            "--username",
            n,
            "--email",
            "x@example.com",
        ]
    };
    // From the environment: blank is a refusal, nothing written.
    for blank in ["", "   "] {
        let out = microblog(
            &url,
            &name("blank"),
            &[("PLOVER_SUPERUSER_PASSWORD", blank)],
            "",
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("PLOVER_SUPERUSER_PASSWORD is blank"),
            "{}",
            stderr(&out)
        );
    }
    assert!(microblog_user(&db, "blank").is_none());

    // Typed: a blank one and a mismatch are asked again; the third try counts.
    let input = "  \nfirst words\nother words\nthird words\nthird words\n";
    let out = microblog(&url, &name("third"), &[], input);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("Blank passwords are not allowed.").count(),
        1,
        "{err}"
    );
    assert_eq!(err.matches("The two passwords differ.").count(), 1, "{err}");
    let third = microblog_user(&db, "third").expect("created");
    assert!(third.check_password("third words"));

    // Three failed tries: a refusal, nothing written, a fourth pair never read.
    let input = "a\nb\n\nc\nd\nfour\nfour\n";
    let out = microblog(&url, &name("never"), &[], input);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no password after 3 tries"),
        "{}",
        stderr(&out)
    );
    assert!(microblog_user(&db, "never").is_none());
}

#[test]
fn a_removed_field_is_seen_by_check_and_dropped_only_when_asked() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    db.run_blocking(|c| {
        c.batch_execute(
            "CREATE TABLE cmd_note (id INTEGER PRIMARY KEY, text TEXT NOT NULL, title TEXT, \
             obsolete TEXT); INSERT INTO cmd_note (id, text, obsolete) VALUES (7, 'kept', 'x');",
        )
    })
    .unwrap();
    let out = run(&dir, &url, &["check"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("column \"obsolete\" is in the table, not in the model"),
        "{}",
        stdout(&out)
    );
    // No name needed; no drop unless asked.
    let out = run(&dir, &url, &["makemigrations"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--allow-drop"), "{}", stderr(&out));
    let out = run(&dir, &url, &["makemigrations", "--allow-drop"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Named from its changes: the missing tables first, then the drop.
    let folder = stdout(&out)
        .trim_end()
        .trim_start_matches("wrote ")
        .to_owned();
    assert!(folder.ends_with("_plover_history_and_more"), "{folder}");
    let up = std::fs::read_to_string(dir.path().join(&folder).join("up.sql")).unwrap();
    assert!(
        up.contains("ALTER TABLE \"cmd_note\" DROP COLUMN \"obsolete\";"),
        "{up}"
    );
    let out = run(&dir, &url, &["migrate"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&dir, &url, &["check"], &[]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let kept = scalar(&db, "SELECT text FROM cmd_note WHERE id = 7");
    assert_eq!(kept.as_deref(), Some("kept"));
}

#[test]
fn two_worker_processes_run_each_job_exactly_once() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    let out = run(&dir, &url, &["worker", "--once"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ran 0 jobs\n");
    db.run_blocking(|conn| {
        conn.transaction(|conn| {
            for n in 0..60 {
                plover::jobs::enqueue(conn, "note", &format!("job {n}"))?;
            }
            Ok(())
        })
    })
    .unwrap();
    // Two processes claim from the same database at once.
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (dir, url) = (dir.path().to_owned(), url.clone());
            std::thread::spawn(move || {
                Command::new(env!("CARGO_BIN_EXE_plover-tests-commands"))
                    .args(["worker", "--once"])
                    .current_dir(dir)
                    .env("DATABASE_URL", url)
                    .output()
                    .expect("the worker runs")
            })
        })
        .collect();
    let mut ran = 0;
    for worker in workers {
        let out = worker.join().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        ran += text
            .trim_start_matches("ran ")
            .trim_end_matches(" jobs\n")
            .parse::<usize>()
            .unwrap_or_else(|_| panic!("{text}"));
    }
    assert_eq!(ran, 60);
    let notes = |sql: &str| scalar(&db, sql).unwrap_or_default();
    assert_eq!(notes("SELECT COUNT(*) FROM cmd_note"), "60");
    assert_eq!(notes("SELECT COUNT(DISTINCT text) FROM cmd_note"), "60");
    assert_eq!(notes("SELECT COUNT(*) FROM plover_job"), "0");
}

/// A request a receiver got: its headers (names lower-cased) and body.
type Request = (Vec<(String, String)>, Vec<u8>);

/// A webhook receiver on a free port of 127.0.0.1 (one request per connection): each request's
/// headers and body, answered 204. Its URL, and the requests as they come.
fn webhook_receiver() -> (String, std::sync::mpsc::Receiver<Request>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let (sender, requests) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some((name, value)) = line.trim_end().split_once(':') {
                    headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                }
                line.clear();
            }
            let length = (headers.iter())
                .find(|(name, _)| name == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let answer = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
            stream.write_all(answer.as_bytes()).unwrap();
            if sender.send((headers, body)).is_err() {
                return;
            }
        }
    });
    (url, requests)
}

#[test]
fn a_served_microblog_sends_a_signed_webhook_for_a_user_another_process_creates() {
    let (_db, store) = fresh_database("");
    let url = store.url();
    let (hook, requests) = webhook_receiver();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let webhook = [
        ("WEBHOOK_URL", hook.as_str()),
        ("WEBHOOK_SECRET", secret),
        ("WEBHOOK_TARGETS", "any"),
    ];
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = TempDir::new();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_plover-tests-microblog-commands"))
        .arg("serve")
        .current_dir(dir.path())
        .env("DATABASE_URL", &url)
        .env("BIND", format!("127.0.0.1:{port}"))
        .envs(webhook)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "serve did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // A user made by another process with the same configuration (the command line): the
    // serving process delivers it.
    let password = ("PLOVER_SUPERUSER_PASSWORD", "a long passphrase");
    let args = [
        "createsuperuser",
        "--username",
        "hooked",
        "--email",
        "h@example.com",
    ];
    let env = [webhook[0], webhook[1], webhook[2], password];
    let out = microblog(&url, &args, &env, "");
    assert!(out.status.success(), "{}", stderr(&out));
    let delivered = requests.recv_timeout(std::time::Duration::from_secs(20));
    let _ = serve.kill();
    let _ = serve.wait();
    let (headers, body) = delivered.expect("a delivery within 20 s");
    let header = |name: &str| {
        let found = headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.clone()).unwrap_or_default()
    };
    let payload: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(payload["event"], "created");
    assert_eq!(payload["resource"], "user");
    assert_eq!(payload["object"]["username"], "hooked");
    let object = payload["object"].as_object().unwrap();
    assert!(
        !object.contains_key("password") && !object.contains_key("email"),
        "{object:?}"
    );
    let endpoint = plover::webhooks::Endpoint::new(&hook, secret, plover::webhooks::Targets::Any);
    let timestamp: i64 = header("webhook-timestamp").parse().unwrap();
    let signature = endpoint
        .unwrap()
        .signature(&header("webhook-id"), timestamp, &body);
    assert_eq!(header("webhook-signature"), signature);
}
