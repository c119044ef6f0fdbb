//! Resident memory of 100,000 props whose health component is `lazy` and untouched, against `always` (every
//! prop has one) and against props with no health request at all — each measured in a process of its own, so
//! one variant's freed memory does not hide another's.
//!
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example lazy_memory [PROPS]`

use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{CreationPolicy, NetMode, World};
use gamefeature_tests::resident_kib;

/// One variant, in this process: the resident memory its props added.
fn measure(variant: &str, props: usize) -> u64 {
    let before = resident_kib();
    let mut world = World::new("server", NetMode::DedicatedServer);
    world.set_recording(false);
    world.declare_class("DamageableProp", "Actor").unwrap();
    world.declare_replicated("PropHealth", ["health"]);
    match variant {
        "lazy" => world.declare_creation("PropHealth", CreationPolicy::Lazy),
        "always" => world.declare_creation("PropHealth", CreationPolicy::Always),
        _ => {}
    }
    if variant != "none" {
        let request =
            world.add_component_request(OwnerId::HOST, "DamageableProp", "PropHealth", RequestFlags::default());
        std::mem::forget(request);
    }
    for _ in 0..props {
        world.spawn("DamageableProp").unwrap();
    }
    let _ = world.take_work();
    let (created, avoided) = world.lazy_components();
    let after = resident_kib();
    eprintln!("{variant}: {created} lazy components created, {avoided} avoided");
    std::hint::black_box(&world);
    after.saturating_sub(before)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if let Some(variant) = first.as_deref().filter(|a| ["none", "lazy", "always"].contains(a)) {
        let props = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
        println!("{}", measure(variant, props));
        return;
    }
    let props: usize = first.and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let exe = std::env::current_exe().unwrap();
    let run = |variant: &str| -> u64 {
        let output = std::process::Command::new(&exe).args([variant, &props.to_string()]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).trim().parse().unwrap()
    };
    let (none, lazy, always) = (run("none"), run("lazy"), run("always"));
    let component = |kib: u64| kib.saturating_sub(none);
    println!(
        "{props} props: resident memory added {none} KiB without health, {lazy} KiB with lazy (untouched) health, \
         {always} KiB with always; component memory: lazy {} KiB, always {} KiB ({:.1} %)",
        component(lazy),
        component(always),
        100.0 * component(lazy) as f64 / component(always).max(1) as f64
    );
}
