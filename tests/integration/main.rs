//! Integration tests: one binary, one module per area of SPEC.md.
