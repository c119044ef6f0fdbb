//! The recording file: what a session's records are, and how they sit on disk.
//!
//! A recording starts with [`MAGIC`] and the format's version (a little-endian `u16`), then holds records one
//! after another, each as its payload's length (`u32`, little-endian), the payload's CRC-32, and the payload:
//! one [`Record`] in postcard. Records are appended as the session runs and put on disk at every checkpoint,
//! so a session cut short (a crash, a kill, a full disk) leaves a file readable up to its last complete
//! record: [`parse`] returns those and says where it was cut.

use serde::{Deserialize, Serialize};

/// What every recording starts with.
pub const MAGIC: &[u8; 6] = b"GFREC\n";

/// The version of the format this host writes and reads. A recording of another version is refused by name.
pub const FORMAT_VERSION: u16 = 1;

/// The largest record accepted: a frame's network events, a package chunk among them, fit well within it.
pub const MAX_RECORD_BYTES: usize = 16 << 20;

/// The largest recording read: recordings are read whole, and an hour of a busy session is far below this.
pub const MAX_RECORDING_BYTES: u64 = 1 << 30;

/// One thing that happened in a recorded session, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Record {
    /// The first record: what was recorded, and how to set it up again.
    Session(Box<SessionInfo>),
    /// A plugin's component, as the world loaded it (at load and after every reload).
    Component {
        /// The plugin's name.
        plugin: String,
        /// The version its manifest declares.
        version: String,
        /// The SHA-256 of its component file, in hex.
        digest: String,
    },
    /// A frame was played with this much game time.
    Frame {
        /// The frame's game time, in nanoseconds.
        delta_nanos: u64,
    },
    /// A console or script command, carried out between frames, as typed.
    Command(String),
    /// A plugin's new version (found by `--watch`, or sent by a server) was applied between frames.
    Reload {
        /// The plugin reloaded.
        plugin: String,
    },
    /// A server flushed what its clients had not acknowledged, the world standing still.
    Flush,
    /// Play ended (for a client: it left or was told to), with why.
    EndPlay(String),
    /// A server closed its connections, with why.
    Close(String),
    /// What a poll of the network returned; polls that returned nothing are not recorded, and `poll` counts
    /// every poll (from 0), so a replay hands each event to the same poll.
    Polled {
        /// Which poll of the session's transport this was.
        poll: u64,
        /// What it returned, in order.
        events: Vec<NetEvent>,
    },
    /// A plugin instance read a clock.
    Clock {
        /// The instance, numbered in the order the world created instances (from 0).
        instance: u32,
        /// Which clock.
        clock: ClockKind,
        /// What it read: nanoseconds since the Unix epoch (wall) or since an arbitrary start (monotonic).
        value: u64,
    },
    /// A call into a plugin instance was stopped by a limit of time (its CPU-time deadline, the wall-clock
    /// backstop): a replay, which loosens time limits, stops the same call.
    Stopped {
        /// The instance, numbered as for [`Record::Clock`].
        instance: u32,
        /// Which of its calls, counted from 1.
        call: u64,
        /// Why it was stopped, as the host said.
        cause: String,
    },
    /// A plugin was quarantined at the end of a frame for using more than its frame budget, frame after frame:
    /// a replay, which loosens frame budgets, quarantines it at the same frame.
    OverBudget {
        /// The world's frame number at the time.
        frame: u64,
        /// The plugin.
        plugin: String,
        /// Why, as the host said.
        cause: String,
    },
    /// The world's state at the end of a frame.
    Checkpoint(Checkpoint),
    /// The session ended as it should; a recording without it was cut short.
    End,
    /// A line a plugin logged (info and above), in the order they came, before the checkpoint they precede:
    /// what people see, which a replay compares beside the world's state. (Last of the records, so recordings
    /// made before it existed read as they did.)
    Said {
        /// The plugin.
        plugin: String,
        /// Its level and text, as the timeline shows them (`info: hello`).
        line: String,
    },
}

/// What was recorded, and how to set it up again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The version of the host that recorded it.
    pub host_version: String,
    /// Which side of a game the world was.
    pub role: Role,
    /// The experience file loaded (a server's or a standalone world's), as the recording host named it.
    pub experience: String,
    /// The SHA-256 of that experience file, in hex, when there was one.
    pub experience_digest: Option<String>,
    /// The folders plugins were found in, absolute.
    pub plugin_dirs: Vec<String>,
    /// For a client: the folder of its own experience files, absolute.
    pub experiences_dir: Option<String>,
    /// For a client that fetched the server's plugins: its fetch policy (`trusted`, `any`, `never`) and the
    /// folder fetched plugins were kept in, absolute.
    pub mods: Option<(String, String)>,
    /// The world's name.
    pub world: String,
    /// The world's net mode, as the host shows it (`standalone`, `listen-server`, ...).
    pub net_mode: String,
    /// The chaos delay before loading, when one was configured: minimum seconds, random seconds, seed.
    pub chaos: Option<(f64, f64, u64)>,
    /// Frames per second the world was meant to run at.
    pub tick_rate: u32,
    /// A checkpoint was written every this many frames (and after loading and at the end).
    pub checkpoint_every: u32,
    /// The seed every plugin's random numbers were drawn from.
    pub seed: [u8; 32],
    /// When the session started, in seconds since the Unix epoch.
    pub started_unix: u64,
}

/// Which side of a game a recorded world was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// A world of its own (`gfhost run` and `gfhost play`).
    Standalone,
    /// A dedicated server: its clients' messages are in the recording.
    Server,
    /// A client: its server's messages are in the recording.
    Client,
}

/// What a transport saw happen, for either side: a client's events carry client 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NetEvent {
    /// A client connected.
    Connected(u32),
    /// A frame arrived from a client (on a server) or from the server (on a client).
    Received(u32, Vec<u8>),
    /// A connection ended, with why.
    Disconnected(u32, String),
}

/// Which clock a plugin read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockKind {
    /// `wasi:clocks/wall-clock`.
    Wall,
    /// `wasi:clocks/monotonic-clock`.
    Monotonic,
}

/// The world's state after a frame, as what changed since the previous checkpoint: a reader replays the
/// changes to know the whole state at every checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Frames played before it.
    pub frame: u64,
    /// A hash of the state's history: of the checkpoint before it and of this one's changes (see the
    /// replay's `chained_hash`).
    pub hash: u64,
    /// Entries that appeared or changed: what names a thing in the world, and its value.
    pub changed: Vec<(String, String)>,
    /// Entries that went.
    pub removed: Vec<String>,
}

/// Why a recording cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordingError {
    /// The file could not be read or written.
    #[error("{path}: {cause}")]
    Io {
        /// The recording's path.
        path: String,
        /// What the system said.
        cause: String,
    },
    /// The file does not start as a recording does.
    #[error("{path} is not a gamefeature recording (it does not start with the recording's magic bytes)")]
    NotARecording {
        /// The recording's path.
        path: String,
    },
    /// The file is a recording of a format this host does not read.
    #[error("{path} is a recording of format version {found}; this host reads version {FORMAT_VERSION}")]
    ForeignVersion {
        /// The recording's path.
        path: String,
        /// The version it declares.
        found: u16,
    },
    /// The file is larger than any recording this host reads.
    #[error("{path} holds {size} bytes, more than the {MAX_RECORDING_BYTES} a recording may")]
    Oversized {
        /// The recording's path.
        path: String,
        /// Its size.
        size: u64,
    },
    /// A complete record is damaged.
    #[error("{path} is corrupt: record {record} (at byte {offset}) {cause}")]
    Corrupt {
        /// The recording's path.
        path: String,
        /// Which record, counted from 0.
        record: usize,
        /// Where it starts in the file.
        offset: usize,
        /// What is wrong with it.
        cause: String,
    },
    /// The recording holds no session record first.
    #[error("{path} holds no session: its first record does not say what was recorded")]
    NoSession {
        /// The recording's path.
        path: String,
    },
}

/// The bytes a recording starts with.
pub fn header() -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes
}

/// One record as it sits in the file: length, checksum, payload.
pub fn encode(record: &Record) -> Vec<u8> {
    let payload = postcard::to_stdvec(record).expect("records serialize");
    let mut bytes = Vec::with_capacity(payload.len() + 8);
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

/// A recording read back: its session, its records, and where it was cut if it was. Every record was checked
/// when it was read (its checksum, and that it decodes), but records are kept as the file's bytes and decoded
/// one at a time as [`records`](Self::records) walks them: a recording takes the memory of its file, not the
/// many times more its decoded records would.
#[derive(Clone, PartialEq)]
pub struct Recording {
    /// What was recorded.
    pub session: SessionInfo,
    /// Set when the file ends inside a record (the session was cut short): what a replay says.
    pub truncated: Option<String>,
    /// The file's size in bytes.
    pub bytes: usize,
    /// The file's bytes.
    data: Vec<u8>,
    /// Where in `data` the records after the session's are, up to the end of the last complete one.
    records: std::ops::Range<usize>,
    /// How many records `data` holds.
    count: usize,
    /// Whether the last record is [`Record::End`].
    ended: bool,
}

impl std::fmt::Debug for Recording {
    /// Without the file's bytes: what a person reads of it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("session", &self.session)
            .field("records", &self.count)
            .field("truncated", &self.truncated)
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The records of a recording, decoded one at a time.
pub struct Records<'a> {
    rest: &'a [u8],
}

impl Iterator for Records<'_> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        let (record, length) = next_record(self.rest).ok()??;
        self.rest = &self.rest[length..];
        Some(record)
    }
}

impl Recording {
    /// Reads the recording at `path` (see [`parse`]).
    pub fn read(path: &std::path::Path) -> Result<Recording, RecordingError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| RecordingError::Io { path: name.clone(), cause: e.to_string() };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_RECORDING_BYTES {
            return Err(RecordingError::Oversized { path: name, size });
        }
        parse_file(std::fs::read(path).map_err(io)?, &name)
    }

    /// Whether the session ended as it should (its last record is [`Record::End`]).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Every complete record after the session's, in order, each decoded as it is reached.
    pub fn records(&self) -> Records<'_> {
        Records { rest: &self.data[self.records.clone()] }
    }

    /// How many records follow the session's.
    pub fn record_count(&self) -> usize {
        self.count
    }
}

/// The record at the start of `bytes` and the bytes it takes, `None` at the end or inside a record (a file cut
/// short), or why a complete record is damaged.
fn next_record(bytes: &[u8]) -> Result<Option<(Record, usize)>, String> {
    let Some(head) = bytes.get(..8) else { return Ok(None) };
    let length = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
    let checksum = u32::from_le_bytes(head[4..].try_into().expect("4 bytes"));
    if length > MAX_RECORD_BYTES {
        return Err(format!("claims {length} bytes, more than the {MAX_RECORD_BYTES} a record may"));
    }
    let Some(payload) = bytes.get(8..8 + length) else { return Ok(None) };
    if crc32fast::hash(payload) != checksum {
        return Err("does not match its checksum".into());
    }
    let record: Record = postcard::from_bytes(payload).map_err(|e| format!("cannot be read: {e}"))?;
    Ok(Some((record, 8 + length)))
}

/// Reads a recording from its bytes; `name` names it in errors. A file that ends inside a record gives the
/// records before it and says so in [`Recording::truncated`]; a complete record that is damaged is an error.
pub fn parse(bytes: &[u8], name: &str) -> Result<Recording, RecordingError> {
    parse_file(bytes.to_vec(), name)
}

/// [`parse`], keeping the file's bytes rather than a copy.
fn parse_file(bytes: Vec<u8>, name: &str) -> Result<Recording, RecordingError> {
    let path = name.to_string();
    if bytes.len() as u64 > MAX_RECORDING_BYTES {
        return Err(RecordingError::Oversized { path, size: bytes.len() as u64 });
    }
    let Some(rest) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return Err(RecordingError::NotARecording { path });
    };
    let found = match rest {
        [low, high, ..] => u16::from_le_bytes([*low, *high]),
        _ => return Err(RecordingError::NotARecording { path }),
    };
    if found != FORMAT_VERSION {
        return Err(RecordingError::ForeignVersion { path, found });
    }
    let mut offset = MAGIC.len() + 2;
    let (mut session, mut first, mut count, mut last) = (None, offset, 0, None);
    let mut truncated = None;
    while offset < bytes.len() {
        // Records are numbered from the session's, as they sit in the file.
        let record = count + usize::from(session.is_some());
        let corrupt = |cause: String| RecordingError::Corrupt { path: path.clone(), record, offset, cause };
        let Some((decoded, length)) = next_record(&bytes[offset..]).map_err(corrupt)? else {
            truncated = Some(cut_at(record, offset));
            break;
        };
        offset += length;
        match (&session, decoded) {
            (None, Record::Session(info)) => {
                session = Some(info);
                first = offset;
            }
            (None, _) => return Err(RecordingError::NoSession { path }),
            (Some(_), decoded) => {
                count += 1;
                last = Some(decoded);
            }
        }
    }
    let Some(session) = session else { return Err(RecordingError::NoSession { path }) };
    Ok(Recording {
        session: *session,
        truncated,
        bytes: bytes.len(),
        records: first..offset,
        data: bytes,
        count,
        ended: last == Some(Record::End),
    })
}

fn cut_at(record: usize, offset: usize) -> String {
    format!("the recording ends inside record {record} (at byte {offset}): the session was cut short there")
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn session() -> SessionInfo {
        SessionInfo {
            host_version: "0.0.0".into(),
            role: Role::Standalone,
            experience: "experiences/x.toml".into(),
            experience_digest: None,
            plugin_dirs: vec!["/plugins".into()],
            experiences_dir: None,
            world: "main".into(),
            net_mode: "standalone".into(),
            chaos: None,
            mods: None,
            tick_rate: 60,
            checkpoint_every: 30,
            seed: [7; 32],
            started_unix: 1,
        }
    }

    fn file(records: &[Record]) -> Vec<u8> {
        let mut bytes = header();
        bytes.extend(encode(&Record::Session(Box::new(session()))));
        for record in records {
            bytes.extend(encode(record));
        }
        bytes
    }

    #[test]
    fn records_read_back_in_order() {
        let records = vec![
            Record::Frame { delta_nanos: 16_666_667 },
            Record::Command("spawn 2".into()),
            Record::Polled { poll: 3, events: vec![NetEvent::Received(1, vec![1, 2, 3])] },
            Record::Clock { instance: 2, clock: ClockKind::Wall, value: u64::MAX },
            Record::End,
        ];
        let read = parse(&file(&records), "x.gfrec").unwrap();
        assert_eq!(read.session, session());
        assert_eq!(read.records().collect::<Vec<_>>(), records);
        assert_eq!(read.record_count(), records.len());
        assert!(read.ended());
        assert_eq!(read.truncated, None);
    }

    #[test]
    fn a_recording_cut_anywhere_reads_up_to_its_last_complete_record_and_says_so() {
        let records = vec![Record::Frame { delta_nanos: 1 }, Record::Command("state".into()), Record::End];
        let whole = file(&records);
        let after_session = header().len() + encode(&Record::Session(Box::new(session()))).len();
        for cut in after_session + 1..whole.len() {
            let read = parse(&whole[..cut], "cut.gfrec").unwrap();
            // Cut between two records, the file is whole but ends without the session's end.
            let between = read.truncated.is_none();
            assert!(between || read.truncated.as_deref().unwrap().contains("cut short"), "cut at {cut}");
            assert!(!read.ended());
            let read_back: Vec<Record> = read.records().collect();
            assert_eq!(read_back, records[..read.record_count()], "cut at {cut}");
        }
    }

    #[test]
    fn bad_recordings_are_refused_by_name() {
        let whole = file(&[Record::Frame { delta_nanos: 1 }]);
        let not = parse(b"GIF89a....", "cat.gif").unwrap_err();
        assert_eq!(not, RecordingError::NotARecording { path: "cat.gif".into() });
        let mut foreign = whole.clone();
        foreign[MAGIC.len()] = 9;
        assert!(parse(&foreign, "old.gfrec").unwrap_err().to_string().contains("format version 9"));
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let corrupt = parse(&flipped, "bad.gfrec").unwrap_err().to_string();
        assert!(corrupt.contains("bad.gfrec is corrupt: record 1") && corrupt.contains("checksum"), "{corrupt}");
        let mut huge = header();
        huge.extend_from_slice(&(u32::MAX).to_le_bytes());
        huge.extend_from_slice(&[0; 4]);
        assert!(parse(&huge, "huge.gfrec").unwrap_err().to_string().contains("more than"));
        let no_session = [header(), encode(&Record::End)].concat();
        assert_eq!(parse(&no_session, "n.gfrec").unwrap_err(), RecordingError::NoSession { path: "n.gfrec".into() });
    }
}
