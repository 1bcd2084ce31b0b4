//! Fixtures shared by Plover's integration tests.
