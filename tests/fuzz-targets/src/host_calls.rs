//! Arbitrary host calls from plugins beside lyra-character: the input is the program of the `call-fuzzer`
//! plugins (`tests/plugins/call-fuzzer`: every import of the 0.2.0 world; `call-fuzzer-legacy`: every import
//! of 0.1.0; arbitrary arguments, their own and — when the program's flags allow — others' actors, handles
//! held, dropped and forged), run as they activate and in every callback while a player is brought through
//! Lyra's init chain and the world ticks (and, when the program's flags say so, as call-fuzzer is hot-reloaded
//! halfway through).
//!
//! The host never panics; the component model holds after every frame ([`World::check_invariants`]);
//! lyra-character is never stopped, and — unless the program may name others' actors — its player's pawn reaches
//! GameplayReady; at end of play nothing of any plugin is left in the world.
//!
//! [`World::check_invariants`]: gamefeature_host::World::check_invariants

use std::path::PathBuf;
use std::time::Duration;

use gamefeature_host::game;
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{ExperienceManager, Session};
use gamefeature_tests::{
    call_fuzzer, session, ExperienceDir, PluginDir, CALL_FUZZER, CALL_FUZZER_LEGACY, LYRA_CHARACTER,
};

use crate::{nothing_left, TOKIO};

/// The program's flag letting it name any actor (`call-fuzzer`'s `OTHERS`).
const OTHERS: u8 = 1;
/// A flag of the program's for this target alone: call-fuzzer is hot-reloaded halfway through the frames.
const RELOAD: u8 = 8;
/// Frames the world ticks once the player is in: timers fire, watches and events are delivered.
const FRAMES: usize = 8;
const FRAME: Duration = Duration::from_millis(33);

struct Fixture {
    /// A world that keeps both plugins active, so that no input's end of play unloads them (and the next input
    /// compiles them again).
    _keeper: ExperienceManager,
    _plugins: PluginDir,
    experiences: ExperienceDir,
    experience: PathBuf,
    session: Session,
}

thread_local! {
    /// One session for every input this thread runs (plugins compile once); a world per input.
    static FIXTURE: Fixture = {
        let plugins = PluginDir::with(&[LYRA_CHARACTER, CALL_FUZZER, CALL_FUZZER_LEGACY]);
        let experiences = ExperienceDir::new();
        let experience = call_fuzzer::experience(&experiences);
        let session = session(&plugins);
        let mut keeper = session.create_world("keeper", NetMode::Standalone);
        TOKIO.with(|tokio| tokio.block_on(keeper.load(&experience))).expect("the experience loads");
        Fixture { _keeper: keeper, _plugins: plugins, experiences, experience, session }
    };
}

/// See the module's documentation.
pub fn host_calls(program: &[u8]) {
    FIXTURE.with(|fixture| {
        call_fuzzer::set_program(&fixture.experiences, program);
        TOKIO.with(|tokio| tokio.block_on(play(fixture, program)));
    })
}

async fn play(fixture: &Fixture, program: &[u8]) {
    let mut manager = fixture.session.create_world("w", NetMode::Standalone);
    manager.load(&fixture.experience).await.expect("the experience loads whatever the call-fuzzers do");
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).expect("the game spawns its player");
    manager.with_world(|w| game::possess(w, &player)).expect("the controller possesses the pawn");
    manager.with_world(|w| game::replicate_player_state(w, &player)).expect("the player state arrives");
    for frame in 0..FRAMES {
        if frame == FRAMES / 2 && program.first().is_some_and(|flags| flags & RELOAD != 0) {
            // A new instance runs the program again from its start; the old one leaves nothing behind.
            let _ = manager.reload_feature("call-fuzzer").await;
        }
        manager.tick(FRAME);
        if let Err(broken) = world::lock(manager.world()).check_invariants() {
            panic!("after frame {frame}: {broken}");
        }
    }
    assert!(manager.live_features().iter().any(|f| f == "lyra-character"), "lyra-character was stopped");
    let blocked_allowed = program.first().is_some_and(|flags| flags & OTHERS != 0);
    if !blocked_allowed {
        let w = world::lock(manager.world());
        for feature in ["PawnExtension", "Hero"] {
            let state = w.feature_state(player.pawn, feature).ok().and_then(|s| w.state_text(s));
            assert_eq!(state, Some("InitState.GameplayReady"), "{feature} of the player's pawn");
        }
    }
    manager.end_play().await.expect("play ends");
    nothing_left(&world::lock(manager.world()));
}
