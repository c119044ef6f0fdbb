//! What a plugin holds through the WIT's resources: the host's side of each handle, kept in the instance's
//! resource table. Apart from the adapters that implement the interfaces (`host/`), so that the bindings and
//! the rest of the runtime name them without depending on the adapters.

use crate::world::component_manager::{HandlerId, RequestHandle, SubscriptionId, WatchId};
use crate::world::TimerId;

/// A component request held by a plugin; dropping it releases the request.
pub struct ComponentRequestResource {
    pub(crate) handle: Option<RequestHandle>,
    pub(crate) receiver: String,
    pub(crate) component: String,
}

/// An extension handler held by a plugin; dropping it removes the handler.
pub struct ExtensionHandlerResource {
    pub(crate) id: HandlerId,
    pub(crate) receiver: String,
    pub(crate) number: u32,
}

/// A property watch held by a plugin; dropping it stops the watch.
pub struct PropertyWatchResource {
    pub(crate) id: WatchId,
    pub(crate) number: u32,
}

/// A subscription held by a plugin; dropping it stops the notifications.
pub struct SubscriptionResource {
    pub(crate) id: SubscriptionId,
    pub(crate) number: u32,
}

/// A timer held by a plugin; dropping it stops the timer.
pub struct TimerResource {
    pub(crate) id: TimerId,
    pub(crate) number: u32,
}
