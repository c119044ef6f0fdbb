//! The `call-fuzzer` plugin (`tests/plugins/call-fuzzer`) beside lyra-character: the experience that hands it
//! a program, as the host-call fuzz target and the plugin's own test use it.

use std::path::PathBuf;

use crate::{experience_with_features, ExperienceDir};

/// Writes an experience playing call-fuzzer and lyra-character, with the program call-fuzzer runs as its
/// `program` asset (set with [`set_program`]); returns its path.
pub fn experience(experiences: &ExperienceDir) -> PathBuf {
    let text = experience_with_features(&["call-fuzzer", "lyra-character"])
        + "[bundles.Equipped]\nprogram = \"program.bin\"\n";
    set_program(experiences, &[]);
    experiences.write("call-fuzzer.toml", &text)
}

/// The program the next load of the experience hands call-fuzzer.
pub fn set_program(experiences: &ExperienceDir, program: &[u8]) {
    std::fs::write(experiences.path().join("program.bin"), program).expect("writing the program");
}

/// A program calling every import once: a repeating timer first (so what activation leaves runs over the
/// frames that follow), then each kind of instruction with zeros for arguments (spare zeros are calls of the
/// net mode).
pub fn every_import_program() -> Vec<u8> {
    let mut program = vec![0, 39, 1, 1, 0];
    for kind in 0..44 {
        program.push(kind);
        program.extend([0; 8]);
    }
    program
}
