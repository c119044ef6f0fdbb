//! The program a call-fuzzer plugin runs, read a byte at a time: the arguments of each instruction, in terms
//! that do not depend on the WIT version (`call-fuzzer-legacy` includes this file too). Past the program's end
//! every byte reads as zero.

/// Flag: the program may name any actor (else only actors it spawned, or ids no actor has).
pub const OTHERS: u8 = 1;
/// Flag: the program may drop handles it was never given.
pub const FORGE: u8 = 2;
/// Flag: the program answers `can-change-init-state` (else the plugin always says yes).
pub const ANSWERS: u8 = 4;
// Flag 8 is the host-call fuzz target's: it hot-reloads call-fuzzer halfway through its frames.

/// Ids no actor has: what an actor id becomes when the program may not name others' actors.
const NOBODY: u64 = 0xf000_0000_0000_0000;

/// Names the program picks from (classes, components, features, states, properties, events, assets), so that
/// calls reach past "unknown" refusals; any other text can be built too.
const WORDS: &[&str] = &[
    "Character",
    "Pawn",
    "Controller",
    "PlayerState",
    "Actor",
    "FuzzThing",
    "HeroComponent",
    "PawnExtensionComponent",
    "Health",
    "Armor",
    "Possession",
    "Hero",
    "PawnExtension",
    "Fuzz",
    "InitState.Spawned",
    "InitState.DataAvailable",
    "InitState.DataInitialized",
    "InitState.GameplayReady",
    "hp",
    "value",
    "Ping",
    "ReceiverAdded",
    "GameActorReady",
    "program",
    "",
];

/// A property value, before it becomes the WIT version's `value`.
pub enum Arg {
    Boolean(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

#[derive(Default)]
pub struct Program {
    bytes: Vec<u8>,
    at: usize,
    pub flags: u8,
    calls: u64,
    /// The kinds of instruction run, a bit each.
    kinds: u64,
    done: bool,
    /// Actors it spawned; actors it heard of (kept only when it may name others').
    pub own: Vec<u64>,
    seen: Vec<u64>,
}

impl Program {
    pub fn new(bytes: Vec<u8>) -> Self {
        let mut program = Program { bytes, ..Program::default() };
        program.flags = program.byte();
        program
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The next instruction's opcode, below `kinds`, unless the program is done; the first time it is, the line
    /// to log (`program done: N calls of K kinds`).
    pub fn next(&mut self, kinds: u8) -> Result<u8, Option<String>> {
        if self.at >= self.bytes.len() {
            if self.done {
                return Err(None);
            }
            self.done = true;
            return Err(Some(format!("program done: {} calls of {} kinds", self.calls, self.kinds.count_ones())));
        }
        let opcode = self.byte() % kinds;
        self.calls += 1;
        self.kinds |= 1 << opcode;
        Ok(opcode)
    }

    pub fn byte(&mut self) -> u8 {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// A small number, or (rarely) any.
    pub fn id(&mut self) -> u32 {
        match self.byte() {
            255 => self.u32(),
            small => u32::from(small),
        }
    }

    pub fn text(&mut self) -> String {
        match self.byte() {
            pick @ 0..0xc0 => WORDS[usize::from(pick) % WORDS.len()].to_string(),
            0xff => "x".repeat(usize::from(self.byte()) * 1024),
            _ => {
                let length = usize::from(self.byte() % 64);
                let bytes: Vec<u8> = (0..length).map(|_| self.byte()).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
        }
    }

    pub fn maybe_text(&mut self) -> Option<String> {
        self.flag().then(|| self.text())
    }

    pub fn value(&mut self) -> Arg {
        match self.byte() % 4 {
            0 => Arg::Boolean(self.flag()),
            1 => Arg::Integer(self.u64() as i64),
            2 => Arg::Float(f64::from_bits(self.u64())),
            _ => Arg::Text(self.text()),
        }
    }

    /// An actor it spawned, one it heard of, or any id — but only its own, or ids no actor has, unless it may
    /// name others' actors.
    pub fn actor(&mut self) -> u64 {
        let pick = |from: &[u64], at: u8| from.get(usize::from(at) % from.len().max(1)).copied();
        let (kind, at) = (self.byte() % 4, self.byte());
        let found = match kind {
            0 => pick(&self.own, at),
            1 if self.has(OTHERS) => pick(&self.seen, at),
            2 => Some(self.u64()),
            _ => None,
        };
        let actor = found.unwrap_or(u64::from(at));
        match self.has(OTHERS) || self.own.contains(&actor) {
            true => actor,
            false => actor | NOBODY,
        }
    }

    pub fn actors(&mut self) -> Vec<u64> {
        let count = self.byte() % 8;
        (0..count).map(|_| self.actor()).collect()
    }

    /// A log level's index, 0 (trace) to 4 (error).
    pub fn level(&mut self) -> usize {
        usize::from(self.byte() % 5)
    }

    /// Remembers actors it heard of, when it may name them.
    pub fn saw(&mut self, actors: &[u64]) {
        if self.has(OTHERS) {
            for actor in actors {
                if self.seen.len() < 256 && !self.seen.contains(actor) {
                    self.seen.push(*actor);
                }
            }
        }
    }

    /// Names for the batch calls, and `count` numbers into them (some past the end).
    pub fn names_and_numbers(&mut self, count: usize) -> (Vec<String>, Vec<u32>) {
        let names: Vec<String> = (0..self.byte() % 4).map(|_| self.text()).collect();
        let numbers = (0..count).map(|_| u32::from(self.byte() % 5)).collect();
        (names, numbers)
    }

    /// Lets go of one of the handles in `held` (the program picks which), if any are held.
    pub fn drop_one<T>(&mut self, held: &mut Vec<T>) {
        if let Some(at) = self.pick(held.len()) {
            held.swap_remove(at);
        }
    }

    /// The index of a held handle among `held`, if any are held.
    pub fn pick(&mut self, held: usize) -> Option<usize> {
        let at = usize::from(self.byte());
        (held > 0).then(|| at % held)
    }
}
