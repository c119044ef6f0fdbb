//! What the tests of `gfhost` processes share: the default experience's set-up, a `gfhost` command, and a
//! running process read line by line.

#![allow(dead_code)] // Each test file uses its part.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use gamefeature_plugin_artifacts::*;

/// The default experience with its data, and a plugin folder of the plugins it plays.
pub fn setup() -> (PluginDir, ExperienceDir) {
    (PluginDir::with(&DEFAULT_PLUGINS), default_experience())
}

/// `gfhost` over a plugin folder and a cache, configured by the repository's `gfhost.toml`.
pub fn gfhost(plugins: &Path, cache: &Path) -> Command {
    gfhost_configured(plugins, cache, &Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml"))
}

/// The repository's host configuration, as text to add to.
pub fn repository_config() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml")).unwrap()
}

/// `gfhost` over a plugin folder and a cache, configured by `config`.
pub fn gfhost_configured(plugins: &Path, cache: &Path, config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gfhost"));
    command
        .arg("--plugins")
        .arg(plugins)
        .arg("--cache-dir")
        .arg(cache)
        // CPU-time deadlines generous enough for the unoptimised test build on a busy machine.
        .args(["--call-deadline-ms", "1000", "--config"])
        .arg(config)
        .env_remove("GFHOST_LOG");
    command
}

/// A child process whose standard output is read line by line; killed if the test ends early.
pub struct Running {
    pub child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    pub fn start(command: Command) -> Running {
        Running::start_answering(command, None)
    }

    /// [`start`](Self::start), typing `input` on its standard input (a player answering a question), which then
    /// stays open.
    pub fn start_answering(mut command: Command, input: Option<&str>) -> Running {
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("starting gfhost");
        if let (Some(input), Some(stdin)) = (input, child.stdin.as_mut()) {
            std::io::Write::write_all(stdin, input.as_bytes()).expect("typing into gfhost");
        }
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, lines, seen: Vec::new() }
    }

    /// Waits for a line (bounded: the bound only stops a broken build from hanging the suite).
    pub fn wait_for(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("the line never came; output so far:\n{}", self.seen.join("\n"));
    }

    /// Waits for the process to exit; everything it printed.
    pub fn finish(mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (status, self.seen.join("\n"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// Starts a `gfhost server` command and waits until it has loaded its experience: the process, the address it
/// listens on and the certificate sha256 clients pin.
pub fn start_server(command: Command) -> (Running, String, String) {
    let mut server = Running::start(command);
    let listening = server.wait_for(|l| l.starts_with("listening on "));
    let addr = listening.trim_start_matches("listening on ").split_whitespace().next().unwrap().to_string();
    let pin = server.wait_for(|l| l.starts_with("certificate sha256: "));
    let pin = pin.trim_start_matches("certificate sha256: ").to_string();
    server.wait_for(|l| l.starts_with("ready: "));
    (server, addr, pin)
}

impl Running {
    /// Sends the process a signal, as an orchestrator or a terminal does.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }
}

/// A service the test started (Prometheus, a WebDriver server...), stopped when the test ends however it ends.
pub struct Service(pub Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port free on loopback now (bound, then released) for a service that cannot report the one it picked.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The program `name` as `./dev setup` installs it: under `toolchains/UNDER_TOOLCHAINS`, or on the PATH.
pub fn installed(name: &str, under_toolchains: &str) -> std::path::PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let local = repository.join("toolchains").join(under_toolchains).join(name);
    if local.is_file() {
        return local;
    }
    let on_path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join(name)).find(|p| p.is_file()));
    on_path.unwrap_or_else(|| panic!("{name} is not installed: run ./dev setup"))
}
