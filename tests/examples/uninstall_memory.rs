//! Installs plugins into a running world and uninstalls them again, cycle after cycle, reporting the process's
//! resident memory with the plugins installed and after they are gone: uninstalling frees a plugin's compiled
//! code, so memory returns (and does not creep up cycle after cycle).
//!
//! Each installed plugin is `base-gameplay`'s component with a custom section of its own appended, so that each
//! is a distinct component compiled on its own, as distinct mods would be.
//!
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example uninstall_memory [PLUGINS] [CYCLES]`

use gamefeature_host::world::NetMode;
use gamefeature_tests::*;

/// A component's bytes with a custom section appended: the same code, a different component to the cache.
fn distinct(component: &[u8], tag: usize) -> Vec<u8> {
    let name = b"gamefeature-variant";
    let payload = tag.to_le_bytes();
    let mut section = vec![name.len() as u8];
    section.extend(name);
    section.extend(payload);
    let mut bytes = component.to_vec();
    bytes.push(0); // custom section id
    bytes.push(section.len() as u8); // its size (one LEB128 byte: under 128)
    bytes.extend(section);
    bytes
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let count = args.next().flatten().unwrap_or(20);
    let cycles = args.next().flatten().unwrap_or(5);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character"]));
    let session = session(&plugins);
    // A bounded timeline, kept small so that its filling up is not mistaken for memory held by plugins.
    session.timeline().set_retention(Some(1_000));
    let mut manager = session.create_world("w", NetMode::Standalone);
    tokio.block_on(manager.load(&path)).unwrap();
    manager.with_world(|w| {
        w.set_recording(false);
        for _ in 0..100 {
            w.spawn("Character").unwrap();
        }
    });
    let component = std::fs::read(BASE_GAMEPLAY.component).unwrap();
    let mods = ExperienceDir::new();
    let mut tag = 0;
    let mut cycle = |manager: &mut gamefeature_host::ExperienceManager| -> u64 {
        let mut names = Vec::new();
        for _ in 0..count {
            tag += 1;
            let name = format!("mod-{tag}");
            let folder = mods.path().join(&name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("m.wasm"), distinct(&component, tag)).unwrap();
            let manifest =
                format!("[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"m.wasm\"\n");
            std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
            manager.install_plugin(&folder).unwrap();
            assert!(tokio.block_on(manager.activate_feature(&name)).is_ok());
            names.push(name);
        }
        let installed = resident_kib();
        assert_eq!(session.runtime().compiled_components(), 1 + count);
        for name in &names {
            tokio.block_on(manager.uninstall_plugin(name)).unwrap();
            std::fs::remove_dir_all(mods.path().join(name)).unwrap();
        }
        assert_eq!(session.runtime().compiled_components(), 1, "only lyra-character's code is held");
        installed
    };
    // One cycle first, so allocator pools and the runtime's own first-use memory are not counted.
    cycle(&mut manager);
    let start = resident_kib();
    let mut installed = Vec::new();
    let mut after = Vec::new();
    for _ in 0..cycles {
        installed.push(cycle(&mut manager));
        after.push(resident_kib());
    }
    let mib = |kib: u64| format!("{:.1}", kib as f64 / 1024.0);
    let shown = |values: &[u64]| values.iter().map(|v| mib(*v)).collect::<Vec<_>>().join(", ");
    println!(
        "{cycles} cycles of installing, activating and uninstalling {count} distinct plugins in a world of 100 \
         characters: resident {} MiB at the start; with the plugins installed: {} MiB; after each uninstall: {} MiB",
        mib(start),
        shown(&installed),
        shown(&after)
    );
}
