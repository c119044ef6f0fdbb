//! Writes a session's records as it runs.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::format::{encode, header, Record, RecordingError, SessionInfo};

/// Appends records to a recording; shared by everything in one world that records (the frame loop, the
/// network, the plugins' clocks). Writing never stops the game: the first failure (a full disk) ends the
/// recording, and [`failure`](Self::failure) says why.
pub struct Recorder {
    inner: Mutex<Inner>,
}

struct Inner {
    out: Option<Box<dyn Write + Send>>,
    name: String,
    bytes: u64,
    failure: Option<String>,
}

impl Recorder {
    /// Creates (or replaces) the recording at `path`, starting with `session`. The file is locked while it is
    /// written: a second process recording to the same path is refused rather than writing into it.
    pub fn create(path: &Path, session: SessionInfo) -> Result<Arc<Recorder>, RecordingError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| RecordingError::Io { path: name.clone(), cause: e.to_string() };
        let file = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let cause = "another process is recording to it; record to another path".to_string();
                return Err(RecordingError::Io { path: name, cause });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        // Emptied only once this process holds it: the lock goes with the file, when the recording ends.
        file.set_len(0).map_err(io)?;
        let recorder = Recorder::to_writer(Box::new(std::io::BufWriter::new(file)), &name, session);
        recorder.flush();
        match recorder.failure() {
            Some(cause) => Err(RecordingError::Io { path: name, cause }),
            None => Ok(recorder),
        }
    }

    /// Records into any writer (a file, memory); `name` names it in failures.
    pub fn to_writer(out: Box<dyn Write + Send>, name: &str, session: SessionInfo) -> Arc<Recorder> {
        let recorder =
            Recorder { inner: Mutex::new(Inner { out: Some(out), name: name.to_string(), bytes: 0, failure: None }) };
        recorder.write_bytes(&header());
        recorder.write(&Record::Session(Box::new(session)));
        Arc::new(recorder)
    }

    /// Appends one record (buffered until the next [`flush`](Self::flush)).
    pub fn write(&self, record: &Record) {
        self.write_bytes(&encode(record));
    }

    /// Puts what was written on disk: called at every checkpoint, so a session cut short leaves a recording
    /// readable up to there.
    pub fn flush(&self) {
        let mut inner = self.lock();
        if let Some(Err(e)) = inner.out.as_mut().map(|out| out.flush()) {
            inner.fail(e);
        }
    }

    /// Writes the end of the session and closes the recording; returns its size in bytes.
    pub fn finish(&self) -> Result<u64, crate::Error> {
        self.write(&Record::End);
        self.flush();
        let mut inner = self.lock();
        inner.out = None;
        match &inner.failure {
            Some(failure) => Err(crate::Error::host(failure.clone())),
            None => Ok(inner.bytes),
        }
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.lock().bytes
    }

    /// Why recording stopped early, if it did.
    pub fn failure(&self) -> Option<String> {
        self.lock().failure.clone()
    }

    fn write_bytes(&self, bytes: &[u8]) {
        let mut inner = self.lock();
        match inner.out.as_mut().map(|out| out.write_all(bytes)) {
            Some(Ok(())) => inner.bytes += bytes.len() as u64,
            Some(Err(e)) => inner.fail(e),
            None => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    fn fail(&mut self, error: std::io::Error) {
        self.failure = Some(format!("recording to {} stopped: {error}", self.name));
        self.out = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::format::{Recording, Role};

    fn session() -> SessionInfo {
        SessionInfo {
            host_version: "0.0.0".into(),
            role: Role::Client,
            experience: String::new(),
            experience_digest: None,
            plugin_dirs: Vec::new(),
            experiences_dir: Some("/experiences".into()),
            world: "client".into(),
            net_mode: "standalone".into(),
            chaos: None,
            mods: None,
            tick_rate: 60,
            checkpoint_every: 30,
            seed: [1; 32],
            started_unix: 2,
        }
    }

    #[test]
    fn what_is_flushed_reads_back_even_before_the_session_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.gfrec");
        let recorder = Recorder::create(&path, session()).unwrap();
        recorder.write(&Record::Frame { delta_nanos: 5 });
        recorder.flush();
        let so_far = Recording::read(&path).unwrap();
        assert_eq!(so_far.records().collect::<Vec<_>>(), vec![Record::Frame { delta_nanos: 5 }]);
        assert!(!so_far.ended());
        let size = recorder.finish().unwrap();
        let done = Recording::read(&path).unwrap();
        assert!(done.ended());
        assert_eq!(size, std::fs::metadata(&path).unwrap().len());
    }

    /// A second recorder of one path (another process given the same `--record`) is refused: it neither empties
    /// nor writes into the recording being made; once that one is finished, the path can be recorded again.
    #[test]
    fn a_recording_being_written_is_refused_to_a_second_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.gfrec");
        let recorder = Recorder::create(&path, session()).unwrap();
        recorder.write(&Record::Frame { delta_nanos: 5 });
        recorder.flush();
        let Err(refused) = Recorder::create(&path, session()) else { panic!("a second writer was let in") };
        assert!(refused.to_string().contains("another process is recording to it"), "{refused}");
        let so_far = Recording::read(&path).unwrap();
        assert_eq!(so_far.records().collect::<Vec<_>>(), vec![Record::Frame { delta_nanos: 5 }]);
        recorder.finish().unwrap();
        Recorder::create(&path, session()).unwrap().finish().unwrap();
        let again = Recording::read(&path).unwrap();
        assert!(again.ended() && again.records().all(|r| !matches!(r, Record::Frame { .. })));
    }

    #[test]
    fn a_failing_disk_ends_the_recording_and_says_why_without_stopping_anything() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("no space left on device"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let recorder = Recorder::to_writer(Box::new(Full), "full.gfrec", session());
        recorder.write(&Record::Frame { delta_nanos: 1 });
        let failure = recorder.finish().unwrap_err().to_string();
        assert!(failure.contains("full.gfrec") && failure.contains("no space left"), "{failure}");
    }
}
