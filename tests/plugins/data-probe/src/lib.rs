//! A plugin granted a data directory. Its component imports `wasi:filesystem/types`, whose functions may wait,
//! so the host calls it on a fiber (wasmtime's async API) rather than directly: the tests run what a direct
//! plugin does on that path too. Its `behaviour` asset names what it does in `on-activating`:
//! - `fs-probe` (also with no behaviour): writes a file of its own under `/data`, then tries paths that escape
//!   it, logging each outcome;
//! - `sleep-activating`: sleeps for a minute; `nap-activating`: sleeps 2 ms (within its deadline);
//! - `fill-data`: writes two files of 1 MiB under `/data`.

use gamefeature_sdk::{export_plugin, log, world, ActivationContext, Plugin};

#[derive(Default)]
struct DataProbe;

fn outcome(result: std::io::Result<usize>) -> String {
    match result {
        Ok(bytes) => format!("READ {bytes} bytes"),
        Err(e) => format!("refused ({e})"),
    }
}

fn fs_probe() {
    let own = std::fs::write("/data/own.txt", b"mine").and_then(|()| std::fs::read_to_string("/data/own.txt"));
    log::info(&format!("fs own /data/own.txt: {}", outcome(own.map(|text| text.len()))));
    for path in ["/data/../outside.txt", "/outside.txt", "/etc/passwd", "../outside.txt", "/data/link/outside.txt"] {
        log::info(&format!("fs escape {path}: {}", outcome(std::fs::read_to_string(path).map(|t| t.len()))));
    }
    let write = std::fs::write("/data/../written-outside.txt", b"escaped");
    log::info(&format!("fs escape write /data/../written-outside.txt: {}", outcome(write.map(|()| 0))));
}

impl Plugin for DataProbe {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        let behaviour = world::read_asset_text("behaviour").unwrap_or_default();
        match behaviour.trim() {
            "sleep-activating" => std::thread::sleep(std::time::Duration::from_secs(60)),
            "fill-data" => {
                for file in ["/data/fill-1", "/data/fill-2"] {
                    if let Err(e) = std::fs::write(file, vec![7u8; 1 << 20]) {
                        log::warn(&format!("could not write {file}: {e}"));
                    }
                }
            }
            "nap-activating" => {
                let started = std::time::Instant::now();
                std::thread::sleep(std::time::Duration::from_millis(2));
                log::info(&format!("napped {} ms", started.elapsed().as_millis()));
            }
            _ => fs_probe(),
        }
        Ok(())
    }
}

export_plugin!(DataProbe);
