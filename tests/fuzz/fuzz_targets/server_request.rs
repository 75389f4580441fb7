//! cargo-fuzz target `server_request`: see `tai_fuzz::server_request` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::server_request(data));
