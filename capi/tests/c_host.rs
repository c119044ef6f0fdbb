//! The C ABI as a C or C++ engine uses it: `tests/c/host.c`, a C11 program, is compiled with the machine's clang
//! against the static library and the generated header, and plays the embedded game's experience under
//! AddressSanitizer (memory errors and leaks both fail it): it loads the experience, spawns a player, steps
//! frames, hears the events sent to the player's pawn, reads the score a plugin keeps, reloads that plugin (the
//! score carries on), ends play and frees everything.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The static library cargo built with this test: beside the test binary, in `target/<profile>/deps` (the copy
/// in `target/<profile>` is refreshed by `cargo build` only, not by `cargo test`).
fn static_library() -> PathBuf {
    let test = std::env::current_exe().unwrap();
    test.parent().expect("a test runs from target/<profile>/deps").join("libgamefeature_capi.a")
}

#[test]
fn a_c_program_embeds_the_host_under_address_sanitizer() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repository = crate_dir.join("..");
    let library = static_library();
    assert!(library.is_file(), "{} was not built", library.display());
    let work = tempfile::tempdir().unwrap();
    let program = work.path().join("host");
    let compiled = Command::new("clang")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-fsanitize=address"])
        .arg("-fno-omit-frame-pointer")
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/host.c"))
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
        .arg(&program)
        .output()
        .expect("clang runs (./dev setup installs it, and AddressSanitizer's runtime)");
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));

    // The plugins built from source for the tests (`./dev setup` builds the repository's own).
    use gamefeature_plugin_artifacts::{PluginDir, LYRA_CHARACTER, SCORE_KEEPER};
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let ran = Command::new(&program)
        .arg(plugins.path())
        .arg(repository.join("gfhost.toml"))
        .arg(repository.join("target/embedded-game-cache"))
        .arg(repository.join("host/examples/embedded_game.toml"))
        .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&ran.stdout), String::from_utf8_lossy(&ran.stderr));
    assert!(!err.contains("Sanitizer"), "AddressSanitizer found something:\n{err}");
    assert_eq!(ran.status.code(), Some(0), "{out}\n{err}");
    // The events sent to the pawn (the game's own as it possesses it, then a plugin's), in order.
    let heard: Vec<&str> = out.lines().filter(|l| l.starts_with("heard ")).collect();
    assert!(heard.iter().any(|l| l.starts_with("heard BindInputsNow on actor ")), "{out}");
    assert!(out.contains("missing property: not found"), "an error a game can match on:\n{out}");
    assert!(out.contains("destroyed twice: not found"), "{out}");
    assert!(out.contains("reload of nobody: not found, blamed on no plugin"), "{out}");
    assert!(out.contains("class with an unknown parent: invalid"), "{out}");
    assert!(out.contains("events heard: ") && out.ends_with("failures: 0\n"), "{out}");
}
