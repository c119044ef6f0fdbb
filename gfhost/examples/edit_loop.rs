//! Measures a modder's edit loop in each language, as the README has it: `gfhost new`, `gfhost build`, then
//! `gfhost play --watch` with the default `--plugins plugins`, and two edits of the plugin's source — the time
//! from each save until the running world logs the new version's line (built again, reloaded, activated), and
//! what each step of it took: noticing the save (the watcher waits for the file to settle), the language's
//! build, compiling and reloading the new component (its settling included), and its first line.
//!
//! ```sh
//! cargo build -p gfhost --bin gfhost --example edit_loop && target/debug/examples/edit_loop [rust|python|js|c ...] [--no-cache]
//! ```
//!
//! With `--no-cache` each language is measured a second time with `play --no-cache`: every compile from scratch,
//! as edits were before the function cache (see `host/src/runtime/function_cache.rs`).
//!
//! A measurement, not a test: the times depend on the machine and what else it runs.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn gfhost() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/gfhost")
}

/// The file `gfhost new` writes a language's plugin in.
fn source_of(language: &str) -> &'static str {
    match language {
        "rust" => "src/lib.rs",
        "python" => "plugin.py",
        "js" => "plugin.js",
        _ => "plugin.c",
    }
}

fn run(root: &Path, args: &[&str]) {
    let output = Command::new(gfhost()).args(args).current_dir(root).output().expect("running gfhost");
    assert!(output.status.success(), "gfhost {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Waits for a line containing `wanted` (at most five minutes): when it came.
fn wait_for(lines: &mpsc::Receiver<(Instant, String)>, wanted: &str) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(300);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok((at, line)) if line.contains(wanted) => return at,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no line containing {wanted:?}");
}

/// One edit, from the save to the new version's line, step by step.
struct Edit {
    noticed: Duration,
    built: Duration,
    reloaded: Duration,
    shown: Duration,
}

impl Edit {
    fn total(&self) -> Duration {
        self.noticed + self.built + self.reloaded + self.shown
    }
}

fn measure(language: &str, cached: bool) -> (Duration, Edit, Edit) {
    let root = tempfile::tempdir().expect("a folder of the modder's own");
    std::fs::create_dir(root.path().join("plugins")).unwrap();
    let name = format!("hello-{language}");
    run(root.path(), &["new", &name, "--lang", language]);
    let started = Instant::now();
    run(root.path(), &["build"]);
    let first_build = started.elapsed();
    let experience =
        format!("[experience]\nname = \"e\"\nfeatures = [\"{name}\"]\n[pawn-data]\npawn-class = \"Character\"\n");
    std::fs::write(root.path().join("e.toml"), experience).unwrap();

    let mut play = Command::new(gfhost())
        .args(["play", "e.toml", "--watch"])
        .args((!cached).then_some("--no-cache"))
        .current_dir(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("running gfhost play");
    let (sender, lines) = mpsc::channel();
    let stdout = play.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    wait_for(&lines, &format!("hello from {name}"));
    let source = root.path().join("plugins").join(&name).join(source_of(language));
    let edit = |from: &str, to: &str| {
        let text = std::fs::read_to_string(&source).unwrap();
        let saved = Instant::now();
        std::fs::write(&source, text.replace(from, to)).unwrap();
        let building = wait_for(&lines, "(its sources changed)");
        let built = wait_for(&lines, &format!("{name} built"));
        let reloaded = wait_for(&lines, &format!("{name} reloaded"));
        let shown = wait_for(&lines, &format!("{to} {name}"));
        Edit {
            noticed: building - saved,
            built: built - building,
            reloaded: reloaded - built,
            shown: shown.saturating_duration_since(reloaded),
        }
    };
    let first_edit = edit("hello from", "hello again from");
    let second_edit = edit("hello again from", "hello once more from");
    play.stdin.as_mut().unwrap().write_all(b"quit\n").unwrap();
    play.wait().unwrap();
    (first_build, first_edit, second_edit)
}

fn main() {
    let asked: Vec<String> = std::env::args().skip(1).collect();
    let baseline = asked.iter().any(|a| a == "--no-cache");
    let mut languages: Vec<&str> = asked.iter().map(String::as_str).filter(|a| *a != "--no-cache").collect();
    if languages.is_empty() {
        languages = vec!["rust", "python", "js", "c"];
    }
    let seconds = |d: Duration| format!("{:.1} s", d.as_secs_f64());
    println!("| language | cache | first build | edit | save noticed | built | compiled and reloaded | line shown | save to line |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for language in languages {
        for cached in [true, false].into_iter().filter(|cached| *cached || baseline) {
            let (build, first, second) = measure(language, cached);
            for (which, edit) in [("first", first), ("second", second)] {
                println!(
                    "| {language} | {} | {} | {which} | {} | {} | {} | {} | **{}** |",
                    if cached { "yes" } else { "--no-cache" },
                    seconds(build),
                    seconds(edit.noticed),
                    seconds(edit.built),
                    seconds(edit.reloaded),
                    seconds(edit.shown),
                    seconds(edit.total())
                );
            }
        }
    }
}
