//! `gamefeature:plugin/assets`: read-only access to the loaded bundles.

use crate::runtime::bindings::gamefeature::plugin::assets::Host;
use crate::runtime::bindings::types::Error;
use crate::runtime::state::InstanceState;

impl Host for InstanceState {
    /// A name no loaded bundle declares is `unknown-asset`, quoting the name as [`crate::assets::UnknownAsset`]
    /// does: cut and escaped, never the plugin's megabyte echoed back.
    fn read_asset(&mut self, name: String) -> Result<Vec<u8>, Error> {
        match self.env.assets.read(&name) {
            Ok(bytes) => Ok(bytes.to_vec()),
            Err(unknown) => Err(Error::UnknownAsset(unknown.into_name())),
        }
    }
}
