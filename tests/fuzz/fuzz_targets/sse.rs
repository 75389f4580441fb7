//! cargo-fuzz target `sse`: see `tai_fuzz::sse` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::sse(data));
