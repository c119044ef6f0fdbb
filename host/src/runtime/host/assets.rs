//! `gamefeature:plugin/assets`: read-only access to the loaded bundles.

use crate::runtime::bindings::gamefeature::plugin::assets::Host;
use crate::runtime::bindings::types::Error;
use crate::runtime::state::InstanceState;

impl Host for InstanceState {
    fn read_asset(&mut self, name: String) -> Result<Vec<u8>, Error> {
        match self.env.assets.get(&name) {
            Some(bytes) => Ok(bytes.to_vec()),
            None => Err(Error::UnknownAsset(name)),
        }
    }
}
