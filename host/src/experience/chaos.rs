//! Lyra's chaos-testing delay: `max(0, min + random * uniform(0, 1))` seconds before actions execute.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A configured chaos delay. The same seed gives the same delay on every machine and run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosDelay {
    /// Seconds always waited (Lyra's `lyra.chaos.ExperienceDelayLoad.MinSecs`).
    pub min_secs: f64,
    /// Up to this many seconds more, chosen by the seeded generator (`...RandomSecs`).
    pub random_secs: f64,
    pub seed: u64,
}

impl ChaosDelay {
    /// The delay this configuration waits.
    pub fn delay(&self) -> Duration {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let roll: f64 = rng.random();
        let secs = self.min_secs + roll * self.random_secs.max(0.0);
        Duration::from_secs_f64(secs.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_bounded() {
        let chaos = ChaosDelay { min_secs: 0.5, random_secs: 1.0, seed: 42 };
        assert_eq!(chaos.delay(), chaos.delay());
        assert!(chaos.delay() >= Duration::from_millis(500) && chaos.delay() <= Duration::from_millis(1500));
        assert_ne!(chaos.delay(), ChaosDelay { seed: 43, ..chaos }.delay());
        assert_eq!(ChaosDelay { min_secs: -5.0, random_secs: 1.0, seed: 1 }.delay(), Duration::ZERO);
    }
}
