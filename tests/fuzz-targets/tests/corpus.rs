//! Every fuzz target over its seeds (`fuzz/seeds/TARGET`, in git), the corpus libFuzzer grew on this machine
//! (`fuzz/corpus/TARGET`, out of git, when there is one), every crash it ever found (`fuzz/regressions/TARGET`),
//! and a bounded number of seeded mutations of the seeds: the fuzzed boundaries stay fuzzed in every CI run,
//! without a sanitizer build and without depending on time (a fixed number of inputs, the same ones every run
//! on a fresh clone).

use std::path::{Path, PathBuf};

use gamefeature_fuzz_targets::{Target, TARGETS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/<kind>/<target>`, in name order.
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files.into_iter().map(|path| (path.clone(), std::fs::read(&path).unwrap())).collect()
}

/// One of libFuzzer's simpler mutations of `input`.
fn mutate(rng: &mut ChaCha8Rng, input: &[u8]) -> Vec<u8> {
    let mut bytes = input.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        match rng.random_range(0..5) {
            0 if !bytes.is_empty() => {
                let at = rng.random_range(0..bytes.len());
                bytes[at] ^= 1 << rng.random_range(0..8);
            }
            1 if !bytes.is_empty() => {
                let at = rng.random_range(0..bytes.len());
                bytes[at] = [0, 0xff, 0x7f, 0x80, b'"', b'[', b'='][rng.random_range(0..7)];
            }
            2 => bytes.truncate(rng.random_range(0..=bytes.len())),
            3 => {
                let at = rng.random_range(0..=bytes.len());
                let junk: Vec<u8> = (0..rng.random_range(1..16)).map(|_| rng.random()).collect();
                bytes.splice(at..at, junk);
            }
            _ if !bytes.is_empty() => {
                let start = rng.random_range(0..bytes.len());
                let end = rng.random_range(start..=bytes.len()).min(start + 64);
                let at = rng.random_range(0..=bytes.len());
                let copy = bytes[start..end].to_vec();
                bytes.splice(at..at, copy);
            }
            _ => bytes.push(rng.random()),
        }
    }
    bytes
}

fn run(target: &Target) {
    let seeds = inputs("seeds", target.name);
    assert!(!seeds.is_empty(), "fuzz/seeds/{} has no seeds", target.name);
    let grown = inputs("corpus", target.name);
    for (path, input) in seeds.iter().chain(&grown).chain(&inputs("regressions", target.name)) {
        let outcome = std::panic::catch_unwind(|| (target.run)(input));
        assert!(outcome.is_ok(), "{} fails on {}", target.name, path.display());
    }
    let seed = target.name.bytes().fold(0u64, |hash, b| hash.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for round in 0..target.mutations {
        let (_, base) = &seeds[rng.random_range(0..seeds.len())];
        let input = mutate(&mut rng, base);
        let outcome = std::panic::catch_unwind(|| (target.run)(&input));
        assert!(outcome.is_ok(), "{} fails on mutation {round}: {input:?}", target.name);
    }
}

macro_rules! fuzz_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run(TARGETS.iter().find(|t| t.name == stringify!($name)).expect("a target of this name"));
            }
        )*

        #[test]
        fn every_target_is_run_here() {
            let here = [$(stringify!($name)),*];
            for target in TARGETS {
                assert!(here.contains(&target.name), "{} has no test", target.name);
            }
        }
    };
}

fuzz_tests!(
    client_message,
    server_message,
    plugin_manifest,
    experience,
    host_config,
    package_archive,
    cache_entry,
    recording,
    server_frames,
    client_frames,
    replication,
    host_calls,
    live_world,
    components,
);
