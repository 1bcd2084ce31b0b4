//! The conformance app's command line answers `--help` without serving or opening a database.

#![allow(clippy::expect_used)]

use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plover-conformance-app"))
        .args(args)
        // A database it must not open: `--help` stops before.
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the conformance app runs")
}

#[test]
fn help_prints_every_option_and_exits_0() {
    for flag in ["--help", "-h"] {
        let out = run(&[flag]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        for option in [
            "--bind",
            "--database",
            "--admin",
            "--secret-key",
            "--max-body-bytes",
            "--body-timeout",
            "--send-timeout",
            "--response-memory",
            "--mail-dir",
            "--unthrottled-logins",
        ] {
            assert!(text.contains(option), "{option}: {text}");
        }
    }
    // An unknown argument is a failure that points to the help.
    let out = run(&["--serve-all"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("unknown argument --serve-all (see --help)"),
        "{text}"
    );
}
