//! Frames at a fixed rate of real time, for a game that lets the host keep its time (a dedicated server, a
//! command-line client); a game with a loop of its own calls [`GameLoop::step`](super::GameLoop::step) from it
//! instead.

use std::time::{Duration, Instant};

/// The length of one frame at `rate` frames per second.
pub fn frame_of(rate: f64) -> Duration {
    Duration::from_secs_f64(1.0 / rate)
}

/// Paces a loop at a fixed rate of real time; a loop that falls behind starts afresh rather than racing.
pub struct Pace {
    frame: Duration,
    next: Instant,
}

impl Pace {
    /// Frames `frame` apart, the first one frame from now.
    pub fn new(frame: Duration) -> Self {
        Pace { frame, next: Instant::now() + frame }
    }

    /// The length of a frame.
    pub fn frame(&self) -> Duration {
        self.frame
    }

    /// Sleeps until the next frame is due.
    pub fn wait(&mut self) {
        std::thread::sleep(self.until_next());
        self.due();
    }

    /// Whether a frame is due now (then the next one is a frame later): for a loop that does other work
    /// between frames.
    pub fn due(&mut self) -> bool {
        let now = Instant::now();
        if now < self.next {
            return false;
        }
        self.next = if now - self.next < self.frame { self.next + self.frame } else { now + self.frame };
        true
    }

    /// How long until the next frame is due.
    pub fn until_next(&self) -> Duration {
        self.next.saturating_duration_since(Instant::now())
    }
}
