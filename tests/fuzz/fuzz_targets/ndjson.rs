//! cargo-fuzz target `ndjson`: see `tai_fuzz::ndjson` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::ndjson(data));
