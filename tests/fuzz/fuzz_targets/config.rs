//! cargo-fuzz target `config`: see `tai_fuzz::config` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tai_fuzz::config(data));
