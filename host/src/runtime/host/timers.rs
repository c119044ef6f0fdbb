//! `gamefeature:plugin/timers`: game time and timers, as resources owned by the calling instance.

use wasmtime::component::Resource;

use super::Call;
use crate::runtime::bindings::gamefeature::plugin::timers::{Host, HostTimer};
use crate::runtime::bindings::types::{Error, Frame};
use crate::runtime::resources::TimerResource;
use crate::runtime::state::InstanceState;
use crate::world;

impl From<world::Frame> for Frame {
    fn from(frame: world::Frame) -> Self {
        Frame { number: frame.number, time_us: frame.time_us, delta_us: frame.delta_us }
    }
}

impl Host for InstanceState {
    fn start_timer(&mut self, period_us: u64, repeating: bool, id: u32) -> Result<Resource<TimerResource>, Error> {
        let timer = self.guard(Call::new_handle_of_world(), |w, caller| {
            Ok(w.start_timer(caller.owner, period_us, repeating, id))
        })?;
        self.push_handle(TimerResource { id: timer, number: id }, |w| w.stop_timer(timer))
    }

    fn now(&mut self) -> Frame {
        let now = self.guard(Call::query(), |w, _| Ok(w.now()));
        now.unwrap_or_default().into()
    }
}

impl HostTimer for InstanceState {
    fn id(&mut self, timer: Resource<TimerResource>) -> u32 {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&timer).map(|t| t.number).unwrap_or_default()
    }

    fn drop(&mut self, timer: Resource<TimerResource>) -> wasmtime::Result<()> {
        let TimerResource { id, .. } = self.take_handle(timer)?;
        let _ = self.guard(Call::release(), |w, _| {
            w.stop_timer(id);
            Ok(())
        });
        Ok(())
    }
}
