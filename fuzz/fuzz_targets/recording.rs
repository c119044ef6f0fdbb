#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gamefeature_fuzz_targets::recording(data));
