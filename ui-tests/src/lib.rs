//! trybuild tests of the oxla macros: `tests/pass/` must compile and run,
//! `tests/fail/<category>/` must fail with the checked-in `.stderr`.
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p oxla-ui-tests`.
