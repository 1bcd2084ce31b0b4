//! Criterion benchmarks of Plover's hot paths: `cargo bench -p plover-benches`.
