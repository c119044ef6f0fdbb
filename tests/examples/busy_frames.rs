//! The frame bench's busy world (plugin instances hearing about 1,000 actors each frame, 100 instances by
//! default), run for a given number of frames without the pooling allocator: under callgrind, the difference
//! between two frame counts is what those frames cost in instructions, which (unlike times on a shared machine) do
//! not vary from run to run. Valgrind gives a process less address space than 100 unpooled instances reserve, so
//! runs under it take 25.
//!
//! ```sh
//! cargo build --release -p gamefeature-tests --example busy_frames
//! for n in 3 13; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/busy-$n.out target/release/examples/busy_frames $n 25
//! done
//! # (instructions of 13 - instructions of 3) / 10 = instructions per busy frame of 25 instances
//! ```

use gamefeature_tests::busy_world::BusyWorld;

fn main() {
    let mut args = std::env::args().skip(1).map(|n| n.parse::<usize>().expect("a number"));
    let frames = args.next().unwrap_or(10);
    let instances = args.next().unwrap_or(100);
    let mut world = BusyWorld::new(instances, 1_000, false);
    for _ in 0..frames {
        world.busy_frame();
    }
    assert_eq!(world.live_instances(), instances, "every instance survived");
    println!("{frames} busy frames of {instances} instances");
    world.end();
}
