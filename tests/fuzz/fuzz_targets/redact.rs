//! cargo-fuzz target `redact`: see `tai_fuzz::redact` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::redact(data));
