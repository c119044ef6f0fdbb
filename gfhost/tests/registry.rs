//! Packages through a real OCI registry (Debian's docker-registry, the CNCF distribution registry, started on
//! loopback by the test): publish two versions, install by semver range with a lock file, reinstall exactly
//! what the lock says, and refuse a missing version, a tampered blob and an untrusted publisher by name; resolve
//! dependencies, update, yank, roll back and search; publish with credentials to a registry that asks for them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use base64::Engine;
use common::{gfhost_configured, repository_config};
use gamefeature_plugin_artifacts::*;

/// A registry process on a free loopback port, storing into a temporary folder; stopped when dropped.
struct TestRegistry {
    child: Child,
    port: u16,
    storage: tempfile::TempDir,
}

/// The one user of a registry that asks who pushes and pulls: `studio`, password `s3cret` (the bcrypt hash
/// distribution's htpasswd file holds).
const HTPASSWD: &str = "studio:$2b$04$YU6RHNytk4oTyWx2XPqr1Oi2qc8r4WebcBiaZY2JTBU1nIMpWaBOe\n";

impl TestRegistry {
    fn start() -> TestRegistry {
        TestRegistry::start_with(false)
    }

    /// A registry; with `logins`, one that answers only the user of [`HTPASSWD`].
    fn start_with(logins: bool) -> TestRegistry {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = storage.path().join("config.yml");
        let root = storage.path().join("store");
        let mut yaml = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            root.display()
        );
        if logins {
            let htpasswd = storage.path().join("htpasswd");
            std::fs::write(&htpasswd, HTPASSWD).unwrap();
            yaml.push_str(&format!("auth:\n  htpasswd:\n    realm: studio\n    path: {}\n", htpasswd.display()));
        }
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
            let answered = match ureq::get(&format!("http://127.0.0.1:{port}/v2/")).call() {
                Ok(_) | Err(ureq::Error::StatusCode(401)) => true,
                Err(_) => false,
            };
            if answered {
                return registry;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the registry never answered on port {port}");
    }

    fn location(&self) -> String {
        format!("127.0.0.1:{}/studio", self.port)
    }

    /// Publishes, as `name:tag`, the package `name:from` with its `plugin.toml` edited: what a tool other than
    /// this one could publish, with a manifest this one would not pack.
    fn publish_variant(&self, name: &str, from: &str, tag: &str, edit: impl FnOnce(String) -> String) {
        let base = format!("http://127.0.0.1:{}/v2/studio/{name}", self.port);
        let accept = gamefeature_host::package::MANIFEST_MEDIA_TYPE;
        let manifest = ureq::get(&format!("{base}/manifests/{from}")).header("Accept", accept).call().unwrap();
        let mut manifest: serde_json::Value =
            serde_json::from_slice(&manifest.into_body().read_to_vec().unwrap()).unwrap();
        let layers = manifest["layers"].as_array_mut().unwrap();
        let layer = layers
            .iter_mut()
            .find(|l| l["mediaType"] == gamefeature_host::package::PLUGIN_MANIFEST_MEDIA_TYPE)
            .unwrap();
        let old = layer["digest"].as_str().unwrap().to_string();
        let toml = ureq::get(&format!("{base}/blobs/{old}")).call().unwrap().into_body().read_to_string().unwrap();
        let edited = edit(toml).into_bytes();
        let digest = gamefeature_host::package::sha256_digest(&edited);
        let upload = ureq::post(&format!("{base}/blobs/uploads/")).send_empty().unwrap();
        let location = upload.headers().get("Location").unwrap().to_str().unwrap().to_string();
        let location =
            if location.starts_with("http") { location } else { format!("http://127.0.0.1:{}{location}", self.port) };
        let separator = if location.contains('?') { '&' } else { '?' };
        ureq::put(&format!("{location}{separator}digest={digest}")).send(&edited[..]).unwrap();
        layer["digest"] = digest.into();
        layer["size"] = edited.len().into();
        ureq::put(&format!("{base}/manifests/{tag}"))
            .header("Content-Type", accept)
            .send(&serde_json::to_vec(&manifest).unwrap()[..])
            .unwrap();
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

/// Packs each folder (signed with `work/studio.pem`) into `work/packages` and publishes it.
fn pack_and_publish(gfhost: &dyn Fn() -> Command, work: &Path, folders: &[PathBuf], registry: &str) {
    for folder in folders {
        let mut pack = gfhost();
        pack.arg("pack").arg(folder).arg("--key").arg(work.join("studio.pem")).args(["--out", "packages"]);
        let (ok, text) = run(pack);
        assert!(ok, "{text}");
        let file = text.split(':').next().unwrap().to_string();
        let mut publish = gfhost();
        publish.arg("publish").arg(file).args(["--registry", registry]);
        let (ok, text) = run(publish);
        assert!(ok, "{text}");
    }
}

/// A modder's lifecycle against a real registry: `outdated` shows what is newer, `update --dry-run` says what
/// would change and who uses it, a yanked version is passed over by updates but still installs from the lock
/// that holds it (with a warning), `update` moves the set, `--rollback` puts the lock and folders back, and
/// `search` lists the namespace's plugins.
#[test]
fn outdated_update_yank_rollback_and_search_against_a_real_registry() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let cache = shared_cache();
    let docker_config = tempfile::tempdir().unwrap();
    let versioned = |version: &str| {
        let dir = PluginDir::with(&[BASE_GAMEPLAY]);
        dir.edit_manifest(&BASE_GAMEPLAY, |text| {
            text.replace("version = \"0.1.0\"", &format!("version = \"{version}\""))
        });
        dir
    };
    let first = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    first.edit_manifest(&SHOOTER_CORE, |text| text.replace("activate = true", "activate = true\nversion = \"^0.1\""));
    let gfhost_with = |config: &Path| {
        let mut command = gfhost_configured(first.path(), &cache, config);
        command.current_dir(work.path()).env("DOCKER_CONFIG", docker_config.path());
        command
    };
    let (_, studio) = studio_configs(work.path(), gfhost_with);
    let gfhost = || gfhost_with(&studio);
    let location = registry.location();
    pack_and_publish(&gfhost, work.path(), &[first.folder(&BASE_GAMEPLAY), first.folder(&SHOOTER_CORE)], &location);
    let gf = |args: &[&str]| {
        let mut command = gfhost();
        command.args(args);
        run(command)
    };
    let (ok, text) = gf(&["install", "shooter-core", "--registry", &location, "--into", "mods"]);
    assert!(ok, "{text}");
    let mods = work.path().join("mods");
    let first_digest = installed_digest(&mods, "base-gameplay");
    let lock = std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap();
    assert!(lock.contains("[[request]]\nname = \"shooter-core\"\nversion = \"*\""), "the request is recorded: {lock}");

    // Newer versions of the dependency: 0.1.1 within shooter-core's range, 0.2.0 beyond it.
    let (patch, major) = (versioned("0.1.1"), versioned("0.2.0"));
    pack_and_publish(&gfhost, work.path(), &[patch.folder(&BASE_GAMEPLAY), major.folder(&BASE_GAMEPLAY)], &location);
    let (ok, text) = gf(&["outdated"]);
    assert!(ok, "{text}");
    assert!(text.lines().any(|l| l.split_whitespace().eq(["base-gameplay", "0.1.0", "0.1.1", "0.2.0"])), "{text}");
    assert!(text.lines().any(|l| l.split_whitespace().eq(["shooter-core", "0.1.0", "0.1.0", "0.1.0"])), "{text}");
    let (ok, text) = gf(&["update", "--dry-run", "--into", "mods"]);
    assert!(ok && text.contains("update base-gameplay 0.1.0 -> 0.1.1 (used by shooter-core)"), "{text}");
    assert!(text.contains("nothing was fetched or installed"), "{text}");
    assert_eq!(installed_digest(&mods, "base-gameplay"), first_digest, "a dry run changes nothing");

    // Yanked, 0.1.1 is passed over: there is nothing to update to.
    let (ok, text) = gf(&["yank", "base-gameplay@0.1.1", "--registry", &location, "--reason", "crashes on load"]);
    assert!(ok && text.contains("yanked base-gameplay 0.1.1"), "{text}");
    let (ok, text) = gf(&["update", "--dry-run", "--into", "mods"]);
    assert!(ok && text.contains("nothing to change"), "{text}");
    // Put back, it is what `update` installs; the lock before is kept.
    let (ok, text) = gf(&["yank", "base-gameplay@0.1.1", "--registry", &location, "--undo"]);
    assert!(ok, "{text}");
    let (ok, text) = gf(&["update", "base-gameplay", "--into", "mods"]);
    assert!(ok && text.contains("installed base-gameplay 0.1.1"), "{text}");
    assert!(text.contains("update base-gameplay 0.1.0 -> 0.1.1 (used by shooter-core)"), "{text}");
    let updated_digest = installed_digest(&mods, "base-gameplay");
    assert_ne!(updated_digest, first_digest);
    assert!(work.path().join("gfhost.lock.previous").is_file());

    // Yanked again, it still installs exactly from the lock that holds it, with the publisher's reason.
    let (ok, text) = gf(&["yank", "base-gameplay@0.1.1", "--registry", &location, "--reason", "crashes on load"]);
    assert!(ok, "{text}");
    let (ok, text) = gf(&["install", "--into", "fleet"]);
    assert!(ok, "{text}");
    assert!(text.contains("base-gameplay 0.1.1 was yanked by its publisher: crashes on load"), "{text}");
    assert_eq!(installed_digest(&work.path().join("fleet"), "base-gameplay"), updated_digest);
    let (ok, text) = gf(&["outdated"]);
    assert!(ok && text.contains("base-gameplay 0.1.1 was yanked by its publisher: crashes on load"), "{text}");

    // One command rolls the lock and the folders back.
    let (ok, text) = gf(&["update", "--rollback", "--into", "mods"]);
    assert!(ok && text.contains("downgrade base-gameplay 0.1.1 -> 0.1.0"), "{text}");
    assert_eq!(installed_digest(&mods, "base-gameplay"), first_digest);
    let lock = std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap();
    assert!(lock.contains("version = \"0.1.0\"") && !lock.contains("0.1.1"), "{lock}");

    // A version for another plugin API (published by a newer tool; this one refuses to pack it) is refused before
    // any of its bytes are fetched, and named.
    registry.publish_variant("shooter-core", "0.1.0", "0.3.0", |toml| {
        toml.replace("version = \"0.1.0\"", "version = \"0.3.0\"").replace("api = \"0.2.0\"", "api = \"0.9.0\"")
    });
    let (ok, text) = gf(&["install", "shooter-core@^0.3", "--registry", &location, "--into", "mods"]);
    assert!(!ok && text.contains("shooter-core 0.3.0 is built against gamefeature:plugin@0.9.0"), "{text}");
    assert!(text.contains("this host implements 0.1.0, 0.2.0"), "{text}");
    assert_eq!(installed_digest(&mods, "base-gameplay"), first_digest, "nothing changed");

    // Search: the namespace's plugins, by name or description, at their newest version not yanked.
    let (ok, text) = gf(&["search", "--registry", &location]);
    assert!(ok, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("base-gameplay") && l.contains("0.2.0") && l.contains("Shared gameplay tuning")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("shooter-core")), "{text}");
    let (ok, text) = gf(&["search", "NAMEPLATE", "--registry", &location]);
    assert!(ok && text.contains("shooter-core") && !text.contains("base-gameplay"), "{text}");
}

/// A registry that asks who pushes and pulls: publishing anonymously is refused with the registry's answer;
/// credentials from the environment (CI) or from Docker's config.json (`docker login`) are used.
#[test]
fn publish_and_install_with_credentials_from_the_environment_or_docker_config() {
    let registry = TestRegistry::start_with(true);
    let work = tempfile::tempdir().unwrap();
    let cache = shared_cache();
    let built = PluginDir::with(&[BASE_GAMEPLAY]);
    let docker_config = tempfile::tempdir().unwrap();
    let gfhost_with = |config: &Path| {
        let mut command = gfhost_configured(built.path(), &cache, config);
        command
            .current_dir(work.path())
            .env("DOCKER_CONFIG", docker_config.path())
            .env_remove("GFHOST_REGISTRY_USERNAME")
            .env_remove("GFHOST_REGISTRY_PASSWORD")
            .env_remove("GFHOST_REGISTRY_HOST");
        command
    };
    let (_, studio) = studio_configs(work.path(), gfhost_with);
    let mut pack = gfhost_with(&studio);
    pack.arg("pack").arg(built.folder(&BASE_GAMEPLAY)).arg("--key").arg(work.path().join("studio.pem"));
    pack.args(["--out", "packages"]);
    assert!(run(pack).0);
    let publish = |user: Option<(&str, &str, &str)>| {
        let mut command = gfhost_with(&studio);
        command.arg("publish").arg("packages/base-gameplay-0.1.0.gfpkg").args(["--registry", &registry.location()]);
        if let Some((name, password, host)) = user {
            command.env("GFHOST_REGISTRY_USERNAME", name).env("GFHOST_REGISTRY_PASSWORD", password);
            command.env("GFHOST_REGISTRY_HOST", host);
        }
        run(command)
    };
    let this = format!("127.0.0.1:{}", registry.port);
    let (ok, text) = publish(None);
    assert!(!ok && (text.contains("401") || text.to_lowercase().contains("unauthorized")), "{text}");
    let (ok, text) = publish(Some(("studio", "wrong", &this)));
    assert!(!ok, "{text}");
    // Credentials for another registry are not sent to this one.
    let (ok, text) = publish(Some(("studio", "s3cret", "registry.example.org")));
    assert!(!ok, "{text}");
    let (ok, text) = publish(Some(("studio", "s3cret", &this)));
    assert!(ok && text.contains("published base-gameplay 0.1.0"), "{text}");

    // `docker login` writes config.json; installs read it.
    let install = || {
        let mut command = gfhost_with(&studio);
        command.args(["install", "base-gameplay", "--registry", &registry.location(), "--into", "mods"]);
        run(command)
    };
    let (ok, text) = install();
    assert!(!ok, "anonymous pulls are refused too: {text}");
    let auth = base64::engine::general_purpose::STANDARD.encode("studio:s3cret");
    let config = format!(r#"{{"auths": {{"http://127.0.0.1:{}": {{"auth": "{auth}"}}}}}}"#, registry.port);
    std::fs::write(docker_config.path().join("config.json"), config).unwrap();
    let (ok, text) = install();
    assert!(ok && text.contains("installed base-gameplay 0.1.0"), "{text}");
}

/// A LAN party with no internet: `gfhost mirror` copies the locked set, checked, into a folder; with the registry
/// gone, `gfhost install --offline` installs exactly that set from it (adopting its lock), and a package file
/// changed on the share is refused with nothing installed.
#[test]
fn a_mirror_installs_the_locked_set_with_no_registry() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let cache = shared_cache();
    let docker_config = tempfile::tempdir().unwrap();
    let built = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let gfhost_in = |dir: &Path, config: &Path| {
        let mut command = gfhost_configured(built.path(), &cache, config);
        command.current_dir(dir).env("DOCKER_CONFIG", docker_config.path());
        command
    };
    let (_, studio) = studio_configs(work.path(), |config| gfhost_in(work.path(), config));
    let gfhost = || gfhost_in(work.path(), &studio);
    let folders = [built.folder(&BASE_GAMEPLAY), built.folder(&SHOOTER_CORE)];
    pack_and_publish(&gfhost, work.path(), &folders, &registry.location());
    let mut install = gfhost();
    install.args(["install", "shooter-core", "--registry", &registry.location(), "--into", "mods"]);
    let (ok, text) = run(install);
    assert!(ok, "{text}");
    let mut mirror = gfhost();
    mirror.args(["mirror", "--to", "share"]);
    let (ok, text) = run(mirror);
    assert!(ok && text.contains("2 packages") && text.contains("install --offline share"), "{text}");
    drop(registry);

    // Another machine, with no lock of its own and no registry to reach.
    let lan = work.path().join("lan");
    std::fs::create_dir(&lan).unwrap();
    let share = work.path().join("share");
    let mut offline = gfhost_in(&lan, &studio);
    offline.arg("install").arg("--offline").arg(&share).args(["--into", "mods"]);
    let (ok, text) = run(offline);
    assert!(ok && text.contains("wrote gfhost.lock from the mirror's lock"), "{text}");
    for name in ["base-gameplay", "shooter-core"] {
        assert_eq!(installed_digest(&lan.join("mods"), name), installed_digest(&work.path().join("mods"), name));
    }
    assert_eq!(
        std::fs::read_to_string(lan.join("gfhost.lock")).unwrap(),
        std::fs::read_to_string(work.path().join("gfhost.lock")).unwrap()
    );

    // A package changed on the share: refused, and nothing of the set installed.
    let file = share.join("shooter-core-0.1.0.gfpkg");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&file, bytes).unwrap();
    let other = work.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let mut offline = gfhost_in(&other, &studio);
    offline.arg("install").arg("--offline").arg(&share).args(["--into", "mods"]);
    let (ok, text) = run(offline);
    assert!(!ok && text.contains("shooter-core-0.1.0.gfpkg"), "{text}");
    assert!(!other.join("mods").join("base-gameplay").exists(), "nothing of the set installed");
}

/// Which update broke it: two mods updated from a registry, one of them broken; a game recorded after the update
/// fails, and `gfhost bisect --against gfhost.lock.previous` replays it with updates rolled back (the versions
/// before pulled by digest) and names the broken update.
#[test]
fn bisect_against_the_lock_before_an_update_names_the_update_that_broke_it() {
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let cache = shared_cache();
    let docker_config = tempfile::tempdir().unwrap();
    let built = PluginDir::with(&DEFAULT_PLUGINS);
    // Two mods, each at 0.1.0 and 0.1.1: hud-tweaks 0.1.1 panics as pawns initialise.
    let versions = PluginDir::with(&[]);
    for (name, version, behaviour) in [
        ("hud-tweaks", "0.1.0", "print"),
        ("hud-tweaks", "0.1.1", "panic-state-changed"),
        ("map-pack", "0.1.0", "print"),
        ("map-pack", "0.1.1", "print"),
    ] {
        let manifest = format!(
            "[plugin]\nname = \"{name}\"\nversion = \"{version}\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
             [permissions]\ncomponent-requests = [\"*\"]\n[bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n"
        );
        let folder = versions.add_custom(&format!("{name}-{version}"), &manifest, Some(&HOSTILE));
        std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
    }
    let gfhost_with = |config: &Path| {
        let mut command = gfhost_configured(built.path(), &cache, config);
        command.current_dir(work.path()).env("DOCKER_CONFIG", docker_config.path());
        command
    };
    let (_, studio) = studio_configs(work.path(), gfhost_with);
    let grants = "[grants.hud-tweaks]\ncomponent-requests = [\"*\"]\n[grants.map-pack]\ncomponent-requests = [\"*\"]\n";
    std::fs::write(&studio, format!("{}\n{grants}", std::fs::read_to_string(&studio).unwrap())).unwrap();
    let gfhost = || gfhost_with(&studio);
    let location = registry.location();
    let publish = |folders: &[&str]| {
        let folders: Vec<PathBuf> = folders.iter().map(|f| versions.path().join(f)).collect();
        pack_and_publish(&gfhost, work.path(), &folders, &location);
    };
    let gf = |args: &[&str]| {
        let mut command = gfhost();
        command.args(args);
        run(command)
    };
    publish(&["hud-tweaks-0.1.0", "map-pack-0.1.0"]);
    for name in ["hud-tweaks", "map-pack"] {
        let (ok, text) = gf(&["install", name, "--registry", &location, "--into", "mods"]);
        assert!(ok, "{text}");
    }
    publish(&["hud-tweaks-0.1.1", "map-pack-0.1.1"]);
    let (ok, text) = gf(&["update", "--into", "mods"]);
    assert!(ok && text.contains("update hud-tweaks 0.1.0 -> 0.1.1"), "{text}");

    // A game after the update, recorded: hud-tweaks fails.
    let experiences = default_experience();
    let default = std::fs::read_to_string(experiences.path().join("default.toml")).unwrap();
    let planted = default.replacen("\"match-stats\"]", "\"match-stats\", \"map-pack\", \"hud-tweaks\"]", 1);
    let experience = experiences.write("modded.toml", &planted);
    let script = experiences.write("script.txt", "wait 500\nquit\n");
    let recording = work.path().join("modded.gfrec");
    let both = |command: &mut Command| {
        command.arg("--plugins").arg(built.path()).arg("--plugins").arg(work.path().join("mods"));
    };
    let mut play = gfhost();
    both(&mut play);
    play.arg("play").arg(&experience).arg("--script").arg(&script).arg("--record").arg(&recording);
    let (_, text) = run(play);
    assert!(text.contains("hud-tweaks failed during Playing"), "{text}");

    let mut bisect = gfhost();
    both(&mut bisect);
    bisect.arg("bisect").arg(&recording).args(["--against", "gfhost.lock.previous"]);
    let (ok, text) = run(bisect);
    assert!(ok, "{text}");
    assert!(text.contains("over its 2 plugins the update changed: map-pack, hud-tweaks"), "{text}");
    assert!(text.contains("the failure comes with the update of hud-tweaks (0.1.0 -> 0.1.1)"), "{text}");
}
