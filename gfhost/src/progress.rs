//! A progress bar while an experience loads, on a terminal: large components (Python's and JavaScript's
//! interpreters, some megabytes each) take seconds to compile the first time, and a silent pause reads as a
//! hang. It shows how many plugins are ready and which are still loading; it is drawn only when standard error
//! is a terminal, and cleared when loading ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gamefeature_host::feature::{PluginState, Transition};
use gamefeature_host::Session;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the bar looks at the plugins' states.
const POLL: Duration = Duration::from_millis(100);

/// Runs `load` (which loads an experience in `session`) with a progress bar of the session's plugins.
pub fn while_loading<T>(session: &Session, load: impl FnOnce() -> T) -> T {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if bar.is_hidden() {
        return load();
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] {pos}/{len} plugins ready {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let done = AtomicBool::new(false);
    /// Ends the polling thread however `load` ends, a panic included (the scope would wait for it forever).
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let plugins = session.features().list();
                let loading: Vec<&str> = plugins
                    .iter()
                    .filter(|p| matches!(p.state, PluginState::Transition(Transition::Loading)))
                    .map(|p| p.manifest.name.as_str())
                    .collect();
                let ready = plugins.iter().filter(|p| p.activations > 0).count();
                let wanted = ready + loading.len();
                bar.set_length(wanted.max(1) as u64);
                bar.set_position(ready as u64);
                bar.set_message(if loading.is_empty() {
                    String::new()
                } else {
                    format!("compiling {}", loading.join(", "))
                });
                bar.tick();
                std::thread::sleep(POLL);
            }
            bar.finish_and_clear();
        });
        let _done = Done(&done);
        load()
    })
}
