//! Measures a modder's edit loop in each language, as the README has it: `gfhost new`, `gfhost build`, then
//! `gfhost play --watch` with the default `--plugins plugins`, and two edits of the plugin's source — the time
//! from each save until the running world logs the new version's line (built again, reloaded, activated).
//!
//! ```sh
//! cargo build -p gfhost && cargo run -p gfhost --example edit_loop [rust|python|js|c ...]
//! ```
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

/// Waits for a line containing `wanted` (at most five minutes).
fn wait_for(lines: &mpsc::Receiver<String>, wanted: &str) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(wanted) => return,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no line containing {wanted:?}");
}

fn measure(language: &str) -> (Duration, Duration, Duration) {
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
            if sender.send(line).is_err() {
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
        wait_for(&lines, &format!("{to} {name}"));
        saved.elapsed()
    };
    let first_edit = edit("hello from", "hello again from");
    let second_edit = edit("hello again from", "hello once more from");
    play.stdin.as_mut().unwrap().write_all(b"quit\n").unwrap();
    play.wait().unwrap();
    (first_build, first_edit, second_edit)
}

fn main() {
    let asked: Vec<String> = std::env::args().skip(1).collect();
    let languages: Vec<&str> =
        if asked.is_empty() { vec!["rust", "python", "js", "c"] } else { asked.iter().map(String::as_str).collect() };
    println!("{:8} {:>12} {:>12} {:>12}", "language", "first build", "first edit", "second edit");
    for language in languages {
        let (build, first, second) = measure(language);
        println!(
            "{language:8} {:>11.1}s {:>11.1}s {:>11.1}s",
            build.as_secs_f64(),
            first.as_secs_f64(),
            second.as_secs_f64()
        );
    }
}
