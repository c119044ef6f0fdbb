//! `include/gamefeature.h` is what cbindgen generates from the crate now: a change to the C ABI that did not
//! regenerate it fails here. `GAMEFEATURE_BLESS=1 cargo test -p gamefeature-capi --test header` writes it.

use std::path::Path;

#[test]
fn the_committed_header_is_the_generated_one() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let committed_path = crate_dir.join("include/gamefeature.h");
    if std::env::var_os("GAMEFEATURE_BLESS").is_some() {
        std::fs::write(&committed_path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == generated,
        "capi/include/gamefeature.h is not what cbindgen generates from capi/src/lib.rs: regenerate it with \
         GAMEFEATURE_BLESS=1 cargo test -p gamefeature-capi --test header"
    );
}
