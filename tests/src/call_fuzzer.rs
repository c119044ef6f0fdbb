//! The `call-fuzzer` plugins (`tests/plugins/call-fuzzer`, and `call-fuzzer-legacy` for the 0.1.0 imports)
//! beside lyra-character: the experience that hands them a program, as the host-call fuzz target and the
//! plugins' own test use it.

use std::path::PathBuf;

use crate::{experience_with_features, ExperienceDir};

/// Writes an experience playing both call-fuzzers and lyra-character, with the program the call-fuzzers run as
/// its `program` asset (set with [`set_program`]); returns its path.
pub fn experience(experiences: &ExperienceDir) -> PathBuf {
    let text = experience_with_features(&["call-fuzzer", "call-fuzzer-legacy", "lyra-character"])
        + "[bundles.Equipped]\nprogram = \"program.bin\"\n";
    set_program(experiences, &[]);
    experiences.write("call-fuzzer.toml", &text)
}

/// The program the next load of the experience hands the call-fuzzers.
pub fn set_program(experiences: &ExperienceDir, program: &[u8]) {
    std::fs::write(experiences.path().join("program.bin"), program).expect("writing the program");
}

/// A program calling every import of each version once: a repeating timer first (so what activation leaves runs over the
/// frames that follow), then each kind of instruction with zeros for arguments (spare zeros are calls of the
/// net mode).
pub fn every_import_program() -> Vec<u8> {
    let mut program = vec![0, 39, 1, 1, 0];
    for kind in 0..46 {
        program.push(kind);
        program.extend([0; 8]);
    }
    program
}
