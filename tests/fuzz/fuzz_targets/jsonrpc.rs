//! cargo-fuzz target `jsonrpc`: see `tai_fuzz::jsonrpc` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::jsonrpc(data));
