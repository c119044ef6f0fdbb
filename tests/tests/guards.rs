//! Guards on what plugins share: each test is an attack a plugin written against 0.2.0 could make on shared
//! state, on the world's time or on an actor on its way out, and what the host does instead of letting it.

use gamefeature_host::feature::PluginState;
use gamefeature_host::timeline::LogLevel;
use gamefeature_tests::hostile::*;
use gamefeature_tests::*;

/// The hostile plugin's manifest, declaring `components` (TOML of its `[components]` tables).
fn hostile_declaring(plugins: &PluginDir, behaviour: &str, components: &str) {
    let manifest = format!("{}{components}", hostile_manifest("hostile"));
    let folder = plugins.add_custom("hostile", &manifest, Some(&HOSTILE));
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
}

#[tokio::test]
async fn a_creation_policy_for_a_class_the_plugin_does_not_declare_is_refused_by_its_manifest() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_declaring(&plugins, "none", "[components.creation]\nHeroComponent = \"never\"\n");
    let session = session(&plugins);
    let mut manager = play_beside_lyra(&session, "a policy for lyra's class").await;
    assert_eq!(manager.live_features(), ["lyra-character"]);
    assert!(!matches!(session.features().state("hostile"), Some(PluginState::Stable(_))));
    let refused = session.discovery().errors.iter().find(|f| f.contains("hostile")).expect("its manifest is refused");
    assert!(refused.contains("plugin.toml"), "{refused}");
    assert!(refused.contains("sets the policy of HeroComponent, which the plugin does not declare"), "{refused}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_plugin_declaring_another_plugins_class_cannot_set_its_policy() {
    for policy in ["never", "lazy"] {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        let components = format!(
            "[components]\nclasses = [\"HeroComponent\"]\n[components.creation]\nHeroComponent = \"{policy}\"\n"
        );
        hostile_declaring(&plugins, "none", &components);
        let session = session(&plugins);
        // The hostile plugin activates first, so its policy applies until lyra-character declares the class too;
        // from then on neither sets it, and lyra's characters become ready.
        let mut manager = play_beside_lyra(&session, policy).await;
        assert_eq!(manager.live_features(), ["hostile", "lyra-character"], "{policy}");
        let warnings = session.timeline().texts(
            &gamefeature_host::timeline::track::instance("lyra-character", "w"),
            gamefeature_host::timeline::EventKind::Log(LogLevel::Warn),
        );
        assert!(
            warnings.iter().any(|w| w.contains("HeroComponent too: the creation policy another plugin set")),
            "{policy}: {warnings:?}"
        );
        manager.end_play().await.unwrap();
    }
}

#[tokio::test]
async fn a_plugins_creation_policy_leaves_with_it() {
    let plugins = PluginDir::with(&[]);
    let components = "[components]\nclasses = [\"Shield\"]\n[components.creation]\nShield = \"never\"\n";
    hostile_declaring(&plugins, "none", components);
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile"]));
    let mut manager = session.create_world("w", gamefeature_host::world::NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let policy = |m: &gamefeature_host::experience::ExperienceManager| {
        gamefeature_host::world::lock(m.world()).creation_policy("Shield")
    };
    assert_eq!(policy(&manager), gamefeature_host::world::CreationPolicy::Never);
    manager.end_play().await.unwrap();
    assert_eq!(policy(&manager), gamefeature_host::world::CreationPolicy::Always);
}
