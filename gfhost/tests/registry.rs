//! Packages through a real OCI registry (Debian's docker-registry, the CNCF distribution registry, started on
//! loopback by the test): publish two versions, install by semver range with a lock file, reinstall exactly
//! what the lock says, and refuse a missing version, a tampered blob and an untrusted publisher by name.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{gfhost_configured, repository_config};
use gamefeature_plugin_artifacts::*;

/// A registry process on a free loopback port, storing into a temporary folder; stopped when dropped.
struct TestRegistry {
    child: Child,
    port: u16,
    storage: tempfile::TempDir,
}

impl TestRegistry {
    fn start() -> TestRegistry {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = storage.path().join("config.yml");
        let root = storage.path().join("store");
        let yaml = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            root.display()
        );
        std::fs::write(&config, yaml).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry is not installed: run ./dev setup");
        let registry = TestRegistry { child, port, storage };
        // Bounded: a registry that never answers fails the test rather than hanging it.
        for _ in 0..600 {
            if ureq::get(&format!("http://127.0.0.1:{port}/v2/")).call().is_ok() {
                return registry;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the registry never answered on port {port}");
    }

    fn location(&self) -> String {
        format!("127.0.0.1:{}/studio", self.port)
    }

    /// The file holding the blob of `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage.path().join(format!("store/docker/registry/v2/blobs/sha256/{}/{hex}/data", &hex[..2]))
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(mut command: Command) -> (bool, String) {
    let output = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// In `work`: the repository's configuration (`plain.toml`), the studio's key made with `keygen`
/// (`studio.pem`), and a configuration trusting it as "studio" (`studio.toml`).
fn studio_configs(work: &Path, gfhost: impl Fn(&Path) -> Command) -> (PathBuf, PathBuf) {
    let plain = work.join("plain.toml");
    std::fs::write(&plain, repository_config()).unwrap();
    let mut keygen = gfhost(&plain);
    keygen.arg("keygen").arg(work.join("studio.pem"));
    let (ok, text) = run(keygen);
    assert!(ok, "{text}");
    let key = text.lines().find_map(|l| l.strip_prefix("public key: ")).unwrap().to_string();
    let studio = work.join("studio.toml");
    std::fs::write(&studio, format!("{}\n[publishers.studio]\nkey = \"{key}\"\n", repository_config())).unwrap();
    (plain, studio)
}

fn installed_digest(plugins: &Path, name: &str) -> String {
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plugins.join(name).join(".gfpackage.json")).unwrap()).unwrap();
    record["package"]["digest"].as_str().unwrap().to_string()
}

#[test]
fn publish_install_by_range_lock_and_reinstall_exactly_against_a_real_registry() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let built = PluginDir::with(&[LYRA_CHARACTER]);
    let cache = shared_cache();
    let gfhost = |config: &Path| {
        let mut command = gfhost_configured(built.path(), &cache, config);
        command.current_dir(work.path());
        command
    };

    // The studio's key, and two versions of lyra-character signed with it.
    let (plain, studio) = studio_configs(work.path(), gfhost);
    let newer = PluginDir::with(&[LYRA_CHARACTER]);
    newer.edit_manifest(&LYRA_CHARACTER, |text| text.replace("version = \"0.1.0\"", "version = \"0.2.0\""));
    for folder in [built.folder(&LYRA_CHARACTER), newer.folder(&LYRA_CHARACTER)] {
        let mut pack = gfhost(&plain);
        pack.arg("pack").arg(folder).arg("--key").arg(work.path().join("studio.pem")).args(["--out", "packages"]);
        let (ok, text) = run(pack);
        assert!(ok, "{text}");
    }
    for version in ["0.1.0", "0.2.0"] {
        let mut publish = gfhost(&plain);
        publish.arg("publish").arg(format!("packages/lyra-character-{version}.gfpkg"));
        publish.args(["--registry", &registry.location()]);
        let (ok, text) = run(publish);
        assert!(ok && text.contains(&format!("published lyra-character {version}")), "{text}");
    }

    let install = |config: &Path, spec: Option<&str>, into: &str| {
        let mut command = gfhost(config);
        command.arg("install");
        if let Some(spec) = spec {
            command.arg(spec).args(["--registry", &registry.location()]);
        }
        command.args(["--into", into]);
        run(command)
    };
    // By range: the newest version the range allows, recorded in the lock file.
    let (ok, text) = install(&studio, Some("lyra-character@^0.1"), "server-plugins");
    assert!(ok && text.contains("installed lyra-character 0.1.0") && text.contains("published by studio"), "{text}");
    let lock = std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap();
    assert!(lock.contains("version = \"0.1.0\"") && lock.contains("publisher = \"studio\""), "{lock}");
    let (ok, text) = install(&studio, Some("lyra-character@>=0.1"), "server-plugins");
    assert!(ok && text.contains("installed lyra-character 0.2.0"), "{text}");
    let tested = installed_digest(&work.path().join("server-plugins"), "lyra-character");

    // Another machine installs exactly what the lock file says.
    let (ok, text) = install(&studio, None, "fleet-plugins");
    assert!(ok, "{text}");
    assert_eq!(installed_digest(&work.path().join("fleet-plugins"), "lyra-character"), tested);

    // A version the registry does not hold is named, with those it holds.
    let (ok, text) = install(&studio, Some("lyra-character@^9"), "server-plugins");
    assert!(
        !ok && text.contains("installing lyra-character@^9 from")
            && text.contains("lyra-character has no such version (published: 0.1.0, 0.2.0)"),
        "{text}"
    );
    // A host that does not trust the studio refuses its package.
    let (ok, text) = install(&plain, Some("lyra-character@^0.2"), "stranger-plugins");
    assert!(!ok && text.contains("does not trust"), "{text}");
    assert!(!work.path().join("stranger-plugins/lyra-character").exists());

    // A tag re-pointed at an older package (to downgrade its users) is refused: the tag is the registry's
    // word, the version inside is the publisher's.
    let manifests = format!("http://127.0.0.1:{}/v2/studio/lyra-character/manifests", registry.port);
    let accept = gamefeature_host::package::MANIFEST_MEDIA_TYPE;
    let old = ureq::get(&format!("{manifests}/0.1.0")).header("Accept", accept).call().unwrap();
    let old = old.into_body().read_to_vec().unwrap();
    ureq::put(&format!("{manifests}/0.9.0")).header("Content-Type", accept).send(&old[..]).unwrap();
    let (ok, text) = install(&studio, Some("lyra-character@=0.9.0"), "server-plugins");
    assert!(!ok && text.contains("holds lyra-character 0.1.0") && text.contains("not version 0.9.0"), "{text}");
    assert_eq!(installed_digest(&work.path().join("server-plugins"), "lyra-character"), tested);

    // The version locked, republished with other bytes, is refused with both digests; the lock keeps its own.
    let republished = PluginDir::with(&[LYRA_CHARACTER]);
    republished.edit_manifest(&LYRA_CHARACTER, |text| {
        text.replace("version = \"0.1.0\"", "version = \"0.2.0\"")
            .replace("Lyra's PawnExtension", "Republished: Lyra's")
    });
    let mut pack = gfhost(&plain);
    pack.arg("pack").arg(republished.folder(&LYRA_CHARACTER)).arg("--key").arg(work.path().join("studio.pem"));
    pack.args(["--out", "republished"]);
    assert!(run(pack).0);
    let mut publish = gfhost(&plain);
    publish.arg("publish").arg("republished/lyra-character-0.2.0.gfpkg").args(["--registry", &registry.location()]);
    assert!(run(publish).0);
    let lock_before = std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap();
    let (ok, text) = install(&studio, Some("lyra-character@^0.2"), "server-plugins");
    assert!(!ok && text.contains(&tested) && text.contains("now serves sha256:"), "{text}");
    assert_eq!(std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap(), lock_before);
    assert_eq!(installed_digest(&work.path().join("server-plugins"), "lyra-character"), tested);
    // Put the locked bytes back for what follows.
    let mut publish = gfhost(&plain);
    publish.arg("publish").arg("packages/lyra-character-0.2.0.gfpkg").args(["--registry", &registry.location()]);
    assert!(run(publish).0);

    // A blob changed in the registry's storage is refused, and what was installed stays.
    let component = std::fs::read(work.path().join("server-plugins/lyra-character/lyra_character.wasm")).unwrap();
    let blob = registry.blob_file(&gamefeature_host::package::sha256_digest(&component));
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[1000] ^= 0x55;
    std::fs::write(&blob, bytes).unwrap();
    let (ok, text) = install(&studio, None, "fleet-plugins");
    assert!(!ok && text.contains("refused"), "{text}");
    assert_eq!(installed_digest(&work.path().join("fleet-plugins"), "lyra-character"), tested);
}

/// Installs in several processes at once, into one folder with one lock file (a deploy script installing a
/// server's mods in parallel): each waits for the one before to finish with the lock file, so every package is
/// installed and every one is in the lock.
#[test]
fn installs_in_several_processes_at_once_each_keep_their_entry_in_the_lock_file() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let plugins = &DEFAULT_PLUGINS[..4];
    let built = PluginDir::with(plugins);
    let cache = shared_cache();
    let gfhost = |config: &Path| {
        let mut command = gfhost_configured(built.path(), &cache, config);
        command.current_dir(work.path());
        command
    };
    let (plain, studio) = studio_configs(work.path(), gfhost);
    for plugin in plugins {
        let mut pack = gfhost(&plain);
        pack.arg("pack").arg(built.folder(plugin)).arg("--key").arg(work.path().join("studio.pem"));
        pack.args(["--out", "packages"]);
        let (ok, text) = run(pack);
        assert!(ok, "{text}");
    }
    for package in std::fs::read_dir(work.path().join("packages")).unwrap() {
        let mut publish = gfhost(&plain);
        publish.arg("publish").arg(package.unwrap().path());
        publish.args(["--registry", &registry.location()]);
        let (ok, text) = run(publish);
        assert!(ok, "{text}");
    }
    for round in 0..2 {
        let (into, lock) = (format!("plugins-{round}"), format!("round-{round}.lock"));
        let installs: Vec<std::process::Child> = plugins
            .iter()
            .map(|plugin| {
                let mut install = gfhost(&studio);
                install.arg("install").arg(plugin.name).args(["--registry", &registry.location(), "--into", &into]);
                install.args(["--lock", &lock]);
                install.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for install in installs {
            let output = install.wait_with_output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        }
        let lock = std::fs::read_to_string(work.path().join(&lock)).unwrap();
        for plugin in plugins {
            assert!(lock.contains(&format!("name = \"{}\"", plugin.name)), "round {round}: {lock}");
            assert!(work.path().join(&into).join(plugin.name).join(".gfpackage.json").is_file());
        }
    }
}

/// Installing a plugin with dependencies from an empty folder installs the closure the ranges allow (one
/// resolution, every package locked by digest), and the plugin plays; requirements that cannot all hold are
/// explained in words, and nothing is installed.
#[test]
fn install_resolves_the_dependencies_and_explains_a_conflict_against_a_real_registry() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let cache = shared_cache();
    // shooter-core 0.1.0 needs base-gameplay ^0.1; 0.2.0 needs ^2, which is not published.
    let first = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let ranged = |range: &str| {
        let range = range.to_string();
        move |text: String| text.replace("activate = true", &format!("activate = true\nversion = \"{range}\""))
    };
    first.edit_manifest(&SHOOTER_CORE, ranged("^0.1"));
    let second = PluginDir::with(&[SHOOTER_CORE]);
    second
        .edit_manifest(&SHOOTER_CORE, |text| ranged("^2")(text.replace("version = \"0.1.0\"", "version = \"0.2.0\"")));
    let gfhost = |config: &Path| {
        let mut command = gfhost_configured(first.path(), &cache, config);
        command.current_dir(work.path());
        command
    };
    let (plain, studio) = studio_configs(work.path(), gfhost);
    for folder in [first.folder(&BASE_GAMEPLAY), first.folder(&SHOOTER_CORE), second.folder(&SHOOTER_CORE)] {
        let mut pack = gfhost(&plain);
        pack.arg("pack").arg(folder).arg("--key").arg(work.path().join("studio.pem")).args(["--out", "packages"]);
        let (ok, text) = run(pack);
        assert!(ok, "{text}");
    }
    for package in std::fs::read_dir(work.path().join("packages")).unwrap() {
        let mut publish = gfhost(&plain);
        publish.arg("publish").arg(package.unwrap().path()).args(["--registry", &registry.location()]);
        let (ok, text) = run(publish);
        assert!(ok, "{text}");
    }
    let install = |spec: &str, into: &str| {
        let mut command = gfhost(&studio);
        command.arg("install").arg(spec).args(["--registry", &registry.location(), "--into", into]);
        run(command)
    };

    // The conflict first, from an empty folder: explained, and nothing installed.
    let (ok, text) = install("shooter-core@^0.2", "mods");
    assert!(!ok, "{text}");
    assert!(text.contains("shooter-core 0.2.0 needs base-gameplay ^2"), "{text}");
    assert!(text.contains("base-gameplay has no such version (published: 0.1.0)"), "{text}");
    assert!(!work.path().join("mods/shooter-core").exists() && !work.path().join("gfhost.lock").exists());

    // The newest version whose requirements hold, with its dependency, both locked.
    let (ok, text) = install("shooter-core", "mods");
    assert!(ok, "{text}");
    assert!(text.contains("installed base-gameplay 0.1.0") && text.contains("installed shooter-core 0.1.0"), "{text}");
    let lock = std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap();
    for name in ["base-gameplay", "shooter-core"] {
        assert!(lock.contains(&format!("name = \"{name}\"")), "{lock}");
        assert!(work.path().join("mods").join(name).join(".gfpackage.json").is_file());
    }

    // And it plays, its dependency activated before it.
    let experience = work.path().join("e.toml");
    std::fs::write(
        &experience,
        "[experience]\nname = \"e\"\nfeatures = [\"shooter-core\"]\n[pawn-data]\npawn-class = \"Character\"\n",
    )
    .unwrap();
    let mut play = gfhost_configured(&work.path().join("mods"), &cache, &studio);
    play.current_dir(work.path()).arg("run").arg(&experience);
    let (ok, text) = run(play);
    assert!(ok, "{text}");
    assert!(text.contains("base-gameplay") && text.contains("shooter-core"), "{text}");
}
