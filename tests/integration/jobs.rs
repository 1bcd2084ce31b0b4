//! The job queue (docs/changes.md#jobs): enqueued with the write's transaction, claimed once
//! across workers and pools, retried with backoff, failed after its attempts, claimed again
//! when its worker died.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use chrono::NaiveDateTime;
use plover::jobs::{self, JobResult, Jobs, NewJob};
use plover::prelude::*;
use plover_tests::*;
use serde_json::{json, Value};

fn database() -> (Database, Store) {
    let (db, store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &[plover::jobs::Job::meta()]))
        .expect("schema");
    (db, store)
}

fn count(db: &Database, filter: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM plover_job WHERE {filter}");
    scalar(db, &sql)
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

fn column(db: &Database, column: &str) -> String {
    scalar(db, &format!("SELECT {column} FROM plover_job")).unwrap_or_default()
}

fn time(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").expect("a timestamp")
}

fn enqueue(db: &Database, job: NewJob) -> i64 {
    db.run_blocking(|conn| conn.transaction(|conn| job.enqueue(conn)))
        .expect("enqueued")
}

/// A queue whose `kind` handler records each payload's `n`, then answers `outcome`.
fn recording(db: &Database, seen: &Arc<Mutex<Vec<i64>>>, outcome: fn() -> JobResult) -> Jobs {
    let seen = seen.clone();
    Jobs::new(db.clone()).handle("record", move |payload: Value| {
        let seen = seen.clone();
        async move {
            let n = payload["n"].as_i64().unwrap_or(-1);
            seen.lock().unwrap().push(n);
            outcome()
        }
    })
}

fn new_job(n: i64) -> NewJob {
    NewJob::new("record", &json!({ "n": n })).expect("a job")
}

#[actix_web::test]
async fn a_job_exists_only_if_its_transaction_commits_and_runs_once() {
    let (db, _store) = database();
    let rolled_back = db.run_blocking(|conn| {
        conn.transaction(|conn| {
            jobs::enqueue(conn, "record", &json!({"n": 1}))?;
            Err::<(), _>(Error::Internal("the write failed".into()))
        })
    });
    assert!(rolled_back.is_err());
    assert_eq!(count(&db, "1 = 1"), 0);

    enqueue(&db, new_job(2));
    assert_eq!(column(&db, "state"), "queued");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let queue = recording(&db, &seen, || Ok(()));
    assert_eq!(queue.run_due().await.unwrap(), 1);
    assert_eq!(*seen.lock().unwrap(), [2]);
    assert_eq!(count(&db, "1 = 1"), 0, "a job that succeeded is deleted");
    assert_eq!(queue.run_due().await.unwrap(), 0);
}

#[actix_web::test]
async fn a_delayed_job_and_a_job_of_another_kind_are_not_claimed() {
    let (db, _store) = database();
    enqueue(&db, new_job(1).delay(Duration::from_secs(3600)));
    let other = NewJob::new("someone_elses", &json!({})).unwrap();
    enqueue(&db, other);
    let seen = Arc::new(Mutex::new(Vec::new()));
    assert_eq!(recording(&db, &seen, || Ok(())).run_due().await.unwrap(), 0);
    assert_eq!(count(&db, "state = 'queued'"), 2);
}

#[test]
fn each_job_is_claimed_exactly_once_by_concurrent_workers_of_two_pools() {
    let (db, store) = database();
    let ids: Vec<i64> = (0..40).map(|n| enqueue(&db, new_job(n))).collect();
    assert_eq!(ids.len(), 40);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let start = Arc::new(Barrier::new(2));
    // Two "processes": each its own pool and runtime, three workers each, one database.
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (url, seen, start) = (store.url(), seen.clone(), start.clone());
            std::thread::spawn(move || {
                let db = Database::from_url(&url).expect("the same database");
                actix_web::rt::System::new().block_on(async move {
                    let queue = recording(&db, &seen, || Ok(()));
                    start.wait();
                    let runs = (0..3).map(|_| {
                        let queue = queue.clone();
                        async move { queue.run_due().await.expect("claims") }
                    });
                    futures_util::future::join_all(runs).await
                })
            })
        })
        .collect();
    let ran: usize = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a worker thread"))
        .sum();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..40).collect::<Vec<i64>>(), "each job ran once");
    assert_eq!(ran, 40);
    assert_eq!(count(&db, "1 = 1"), 0);
}

#[actix_web::test]
async fn a_failing_job_waits_longer_after_each_attempt_then_fails() {
    let (db, _store) = database();
    enqueue(&db, new_job(1).max_attempts(3));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hour = Duration::from_secs(3600);
    let failing = recording(&db, &seen, || Err("the mail server said no".into()));
    let before = chrono::Utc::now().naive_utc();
    assert_eq!(
        failing
            .clone()
            .retry(hour, 4 * hour)
            .run_due()
            .await
            .unwrap(),
        1
    );
    assert_eq!(column(&db, "state"), "queued");
    assert_eq!(column(&db, "attempts"), "1");
    assert_eq!(column(&db, "last_error"), "the mail server said no");
    // Equal jitter: between half the wait and the whole of it.
    let wait = time(&column(&db, "run_after")) - before;
    assert!(wait >= chrono::Duration::minutes(30) - chrono::Duration::seconds(1));
    assert!(wait <= chrono::Duration::minutes(60) + chrono::Duration::seconds(5));

    // Due again: the second wait is longer.
    db.run_blocking(|conn| conn.batch_execute("UPDATE plover_job SET run_after = created"))
        .unwrap();
    let before = chrono::Utc::now().naive_utc();
    assert_eq!(
        failing
            .clone()
            .retry(hour, 4 * hour)
            .run_due()
            .await
            .unwrap(),
        1
    );
    let wait = time(&column(&db, "run_after")) - before;
    assert!(wait >= chrono::Duration::minutes(60) - chrono::Duration::seconds(1));
    assert_eq!(column(&db, "attempts"), "2");

    // The last attempt fails the job, which is kept with its error.
    db.run_blocking(|conn| conn.batch_execute("UPDATE plover_job SET run_after = created"))
        .unwrap();
    assert_eq!(failing.run_due().await.unwrap(), 1);
    assert_eq!(column(&db, "state"), "failed");
    assert_eq!(column(&db, "attempts"), "3");
    assert_eq!(column(&db, "last_error"), "the mail server said no");
    assert_eq!(*seen.lock().unwrap(), [1, 1, 1]);
}

#[actix_web::test]
async fn with_no_wait_a_failing_job_runs_its_attempts_in_a_row() {
    let (db, _store) = database();
    enqueue(&db, new_job(5).max_attempts(4));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let failing = recording(&db, &seen, || Err("no".into())).retry(Duration::ZERO, Duration::ZERO);
    assert_eq!(failing.run_due().await.unwrap(), 4);
    assert_eq!(count(&db, "state = 'failed' AND attempts = 4"), 1);

    // Retried: all its attempts again; a job in another state is left alone.
    let id: i64 = column(&db, "id").parse().unwrap();
    assert!(db.run_blocking(|conn| jobs::retry(conn, id)).unwrap());
    assert_eq!(count(&db, "state = 'queued' AND attempts = 0"), 1);
    assert!(!db.run_blocking(|conn| jobs::retry(conn, id)).unwrap());
    assert_eq!(failing.run_due().await.unwrap(), 4);
    assert_eq!(count(&db, "state = 'failed' AND attempts = 4"), 1);
}

#[actix_web::test]
async fn a_job_whose_worker_died_runs_again_once_its_claim_lapses() {
    let (db, _store) = database();
    enqueue(&db, new_job(7));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let queue = recording(&db, &seen, || Ok(()));
    // A worker claimed it and died: its claim still holds for an hour.
    let claim = |from_now: i64| {
        let until = chrono::Utc::now().naive_utc() + chrono::Duration::seconds(from_now);
        let sql = format!(
            "UPDATE plover_job SET state = 'running', attempts = attempts + 1, \
             locked_until = '{}'",
            until.format("%Y-%m-%d %H:%M:%S%.6f")
        );
        db.run_blocking(|conn| conn.batch_execute(&sql)).unwrap();
    };
    claim(3600);
    assert_eq!(queue.run_due().await.unwrap(), 0, "the claim still holds");
    claim(-1);
    assert_eq!(queue.run_due().await.unwrap(), 1, "the claim lapsed");
    assert_eq!(*seen.lock().unwrap(), [7]);
    assert_eq!(count(&db, "1 = 1"), 0);

    // A lapsed claim on the last attempt fails the job.
    enqueue(&db, new_job(8).max_attempts(1));
    claim(-1);
    assert_eq!(queue.run_due().await.unwrap(), 0);
    assert_eq!(column(&db, "state"), "failed");
    assert!(column(&db, "last_error").contains("worker stopped"));
}

#[actix_web::test]
async fn a_handler_that_panics_or_overruns_fails_its_attempt() {
    let (db, _store) = database();
    enqueue(
        &db,
        NewJob::new("panics", &json!(null)).unwrap().max_attempts(1),
    );
    enqueue(
        &db,
        NewJob::new("hangs", &json!(null)).unwrap().max_attempts(1),
    );
    enqueue(
        &db,
        NewJob::new("typed", &json!("not a number"))
            .unwrap()
            .max_attempts(1),
    );
    let queue = Jobs::new(db.clone())
        .timeout(Duration::from_millis(200))
        .handle("panics", |_: Value| async { panic!("a bug") })
        .handle("hangs", |_: Value| std::future::pending::<JobResult>())
        .handle("typed", |_: i64| async { Ok(()) });
    assert_eq!(queue.run_due().await.unwrap(), 3);
    let error = |kind: &str| {
        scalar(
            &db,
            &format!(
                "SELECT last_error FROM plover_job WHERE kind = '{kind}' AND state = 'failed'"
            ),
        )
        .unwrap_or_default()
    };
    assert!(error("panics").contains("panicked"), "{}", error("panics"));
    assert!(
        error("hangs").contains("ran longer than"),
        "{}",
        error("hangs")
    );
    assert!(error("typed").contains("payload"), "{}", error("typed"));
}

#[actix_web::test]
async fn started_workers_run_what_is_enqueued_until_stopped() {
    let (db, _store) = database();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let workers = recording(&db, &seen, || Ok(())).start(2);
    for n in 0..5 {
        enqueue(&db, new_job(n));
    }
    for _ in 0..500 {
        if seen.lock().unwrap().len() == 5 && count(&db, "1 = 1") == 0 {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    workers.stop().await;
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    assert_eq!(count(&db, "1 = 1"), 0);
}

#[actix_web::test]
async fn jobs_with_a_serial_key_run_one_at_a_time_in_order_and_a_failed_one_lets_go() {
    let (db, _store) = database();
    let serial = |n: i64, key: &str| new_job(n).serial(key);
    for n in [1, 2, 3] {
        enqueue(&db, serial(n, "endpoint 1"));
    }
    enqueue(&db, serial(10, "endpoint 2"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let failed_once = Arc::new(Mutex::new(false));
    let queue = {
        let (seen, failed_once) = (seen.clone(), failed_once.clone());
        Jobs::new(db.clone())
            .retry(Duration::from_secs(3600), Duration::from_secs(3600))
            .handle("record", move |payload: Value| {
                let (seen, failed_once) = (seen.clone(), failed_once.clone());
                async move {
                    let n = payload["n"].as_i64().unwrap_or(-1);
                    seen.lock().unwrap().push(n);
                    let mut failed = failed_once.lock().unwrap();
                    if (n == 1 && !*failed) || n == 20 {
                        *failed = *failed || n == 1;
                        return Err("not now".into());
                    }
                    Ok(())
                }
            })
    };
    // Job 1 fails and waits an hour: 2 and 3 wait behind it; endpoint 2's job does not.
    assert_eq!(queue.run_due().await.unwrap(), 2);
    assert_eq!(*seen.lock().unwrap(), [1, 10]);
    db.run_blocking(|conn| conn.batch_execute("UPDATE plover_job SET run_after = created"))
        .unwrap();
    // Two workers at once still run them one at a time, in order.
    let (a, b) = futures_util::future::join(queue.run_due(), queue.run_due()).await;
    assert_eq!(a.unwrap() + b.unwrap(), 3);
    assert_eq!(*seen.lock().unwrap(), [1, 10, 1, 2, 3]);

    // A job that failed for good no longer holds the next one back.
    enqueue(&db, serial(20, "endpoint 3").max_attempts(1));
    enqueue(&db, serial(21, "endpoint 3"));
    assert_eq!(queue.run_due().await.unwrap(), 2);
    assert_eq!(seen.lock().unwrap()[5..], [20, 21]);
    assert_eq!(count(&db, "state = 'failed'"), 1);
}
