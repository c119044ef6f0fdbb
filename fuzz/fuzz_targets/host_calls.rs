#![no_main]

libfuzzer_sys::fuzz_target!(
    // The target's fixture (a session, its plugins compiled) is made once, before the per-input timeout runs.
    init: gamefeature_fuzz_targets::host_calls(&[]),
    |data: &[u8]| gamefeature_fuzz_targets::host_calls(data)
);
